"""A fuzzer for ferrotape's public API: random calls with hostile arguments, each in a worker
process, so that a crash, a hang or a Rust panic is caught and reported instead of killing the
caller.

A case is one line of Python (``tf.math.reduce_sum(tf.zeros([2, 0]), axis=2**62)``): a public
function of ``tf``, ``tf.math``, ``tf.nn``, ``tf.linalg`` or ``tf.random``, an operator or an
index of a tensor, or a gradient through a function, with arguments drawn from a pool of odd
values (zero-size and huge shapes, NaN and infinities, every dtype, strided, misaligned and
big-endian numpy arrays, nests, None, strings, huge ints). Hypothesis draws the cases.

Cases run in batches in a worker interpreter whose address space is capped (so a runaway
allocation shows up as a failure instead of swapping the machine). When a worker dies or stops
answering, the cases of its batch are rerun one per interpreter to name the culprit.

Each case ends as one of:
- ``ok`` or ``error`` (an ordinary exception): fine; an error whose message leaks internals or
  names neither the function nor an argument is also counted as ``unclear``;
- ``panic`` (a BaseException that is not an Exception, such as pyo3's PanicException),
  ``crash`` (a signal or an abort) or ``hang`` (no answer within the time limit): failures.

The summary also gives issue 34's message figures: the share of errors whose message (with its
notes, which a traceback prints below it: "while calling 'cumsum'", PyO3's "while processing
'axis'") names neither the op (the function called, or any kernel as an ``Op:`` prefix or TF's
``[Op:Name]``) nor any argument (``Result.anonymous``; the goal is at most 5%), and the errors of
Python's or numpy's internal types (``LEAKED``: ``IndexError``, ``ZeroDivisionError``, ...),
which no public call should raise.

CI runs ``tests/test_fuzz.py`` (a fixed seed, ``FERROTAPE_FUZZ_SECONDS`` of budget, 120 by
default). A longer local run prints the figures and every failure's reproducer:

    python tests/fuzz.py --seconds 3600 --seed 7
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import inspect
import json
import random
import re
import subprocess
import sys
import time
from pathlib import Path

# Odd argument values, as source code (evaluated in the worker, where `tf` and `np` exist).
VALUES = [
    "tf.constant(1.0)",
    "tf.constant(-2.5, dtype=tf.float64)",
    "tf.zeros([0])",
    "tf.zeros([2, 0])",
    "tf.zeros([0, 0])",
    "tf.ones([2, 3])",
    "tf.ones([1, 4, 4, 1])",
    "tf.ones([2, 2, 2])",
    "tf.constant([1, 2])",
    "tf.constant([[1, 0], [0, 1]], dtype=tf.int64)",
    "tf.constant([True, False])",
    "tf.constant([[1.0, 2.0], [3.0, 4.0]])",
    "tf.constant([float('nan'), float('inf'), -float('inf')])",
    "tf.Variable([1.0, 2.0])",
    "tf.ones([2, 3])[:, ::-2]",
    "tf.zeros([2, 0])[1]",
    "tf.cast(tf.ones([2]), tf.float16)",
    "tf.cast(tf.ones([2]), tf.bfloat16)",
    "0",
    "1",
    "3",
    "-1",
    "2**31",
    "2**62",
    "-2**63",
    "2.5",
    "float('nan')",
    "float('inf')",
    "True",
    "None",
    "'abc'",
    "'SAME'",
    "[]",
    "()",
    "[1, 2]",
    "[[0, 1]]",
    "[2**32, 2**32]",
    "[-1, 3]",
    "[0, 5]",
    "[[1, 2], [3]]",
    "{'a': 1.0}",
    "tf.float32",
    "tf.int32",
    "np.array([-5])",
    "np.zeros((3, 0))",
    "np.arange(6.0).reshape(2, 3)[:, ::-2]",
    "np.frombuffer(b'\\0' * 17, dtype=np.float32, offset=1)",
    "np.arange(3, dtype='>f4')",
    "np.array(['a'])",
    "np.array([1, None], dtype=object)",
]
OPERATORS = ["+", "-", "*", "/", "//", "%", "**", "@", "<", "==", "&", "|"]
INDEXES = ["0", "-1", "5", "2**62", ":", "::-1", "::0", "None", "...", "(0, 0, 0)", "'a'",
           "[0, 1]", "tf.constant(0)", "1.5", "slice(2**62, None)"]  # fmt: skip
# Functions that would only wait, print, or change process-wide state.
SKIP = re.compile(r"^(set_seed|set_simd_level|executing_eagerly|device|function|print|sleep)$")
# Message fragments that mean internals reached the user.
# Messages that name neither what was expected nor the argument, or leak internals. A bare
# "NoneType" is not one of them: TensorFlow's own "unsupported type (NoneType) to a Tensor"
# names both; Python's "'NoneType' object is not iterable" does not.
INTERNAL = re.compile(
    r"PyTensor|PyVariable|Array:|cannot be converted to|is not an instance of|"
    r"object has no attribute|'NoneType' object|of type 'NoneType'|not NoneType|"
    r"is not iterable|not supported between instances|has no len\(\)|positional argument|"
    r"cannot be interpreted as an integer|int\(\) argument must be|must be real number|"
    r"cannot reshape array|index out of bounds|unwrap|panicked|capacity overflow"
)
# Exception types of Python's or numpy's internals: a public call must never raise one (issue 34,
# item 6); TensorFlow's answer is a TypeError, ValueError or one of its own errors.
LEAKED = frozenset(
    "ZeroDivisionError IndexError OverflowError KeyError AttributeError NameError "
    "UnboundLocalError RecursionError AssertionError StopIteration FloatingPointError "
    "SystemError UnicodeDecodeError UnicodeEncodeError AxisError LinAlgError "
    "_ArrayMemoryError UFuncTypeError _UFuncNoLoopError _UFuncBinaryResolutionError "
    "_UFuncOutputCastingError _UFuncInputCastingError DTypePromotionError".split()
)
# The words an operator's or an index's error may use to name it (TF: "[Op:AddV2]").
OPERATOR_NAMES = {
    "+": "add addv2 add_v2", "-": "sub subtract", "*": "mul multiply",
    "/": "div truediv realdiv divide", "//": "floordiv floor_div", "%": "mod floormod",
    "**": "pow", "@": "matmul", "<": "less", "==": "equal",
    "&": "logical_and bitwise_and", "|": "logical_or bitwise_or",
}  # fmt: skip
# The project's and TF's way to name the op that failed: "reduce_sum: ...", "LogicalOr: ...".
OP_PREFIX = re.compile(r"[A-Za-z_][\w.]*: ")
INDEX_NAMES = "index indices indexing slice strided_slice getitem"
MEMORY_LIMIT = 4 << 30  # bytes of address space per worker


# ----------------------------------------------------------------------------- the cases


def public_functions():
    """``(qualified name, [required params], [optional params])`` of the public callables."""
    import ferrotape as tf

    found = []
    for prefix, module in [("tf", tf), ("tf.math", tf.math), ("tf.nn", tf.nn),
                           ("tf.linalg", tf.linalg), ("tf.random", tf.random)]:  # fmt: skip
        for name in sorted(getattr(module, "__all__", dir(module))):
            fn = getattr(module, name, None)
            if name.startswith("_") or SKIP.match(name) or not callable(fn):
                continue
            if isinstance(fn, type):
                continue
            try:
                params = list(inspect.signature(fn).parameters.values())
            except (TypeError, ValueError):
                continue
            required = [p.name for p in params if p.default is p.empty and p.kind <= 1]
            optional = [p.name for p in params if p.default is not p.empty and p.name != "name"]
            found.append((f"{prefix}.{name}", required, optional))
    return found


def case_strategy():
    """A hypothesis strategy of cases (lines of Python)."""
    from hypothesis import strategies as st

    functions = public_functions()
    value = st.sampled_from(VALUES)

    @st.composite
    def call(draw):
        name, required, optional = draw(st.sampled_from(functions))
        args = [draw(value) for _ in required]
        chosen = (
            draw(st.lists(st.sampled_from(optional), unique=True, max_size=2)) if optional else []
        )
        kwargs = [f"{key}={draw(value)}" for key in chosen]
        return f"{name}({', '.join(args + kwargs)})"

    tensor = st.sampled_from([v for v in VALUES if v.startswith("tf.") and "(" in v])

    @st.composite
    def operator(draw):
        # A tensor on one side: two Python values are Python's business, not ferrotape's.
        pair = [draw(tensor), draw(value)]
        if draw(st.booleans()):
            pair.reverse()
        return f"({pair[0]}) {draw(st.sampled_from(OPERATORS))} ({pair[1]})"

    @st.composite
    def index(draw):
        return f"({draw(tensor)})[{draw(st.sampled_from(INDEXES))}]"

    unary = [f for f in functions if f[1]]

    @st.composite
    def gradient(draw):
        name, required, _ = draw(st.sampled_from(unary))
        args = ["x"] + [draw(value) for _ in required[1:]]
        return (
            f"x = {draw(value)}\n"
            "with tf.GradientTape(persistent=True) as tape:\n"
            "    tape.watch(x)\n"
            f"    y = {name}({', '.join(args)})\n"
            "tape.gradient(y, x)\n"
            "tape.jacobian(y, x)"
        )

    return st.one_of(call(), call(), operator(), index(), gradient())


def draw_cases(seed, count):
    """``count`` cases drawn deterministically from ``seed``."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import seed as fixed_seed

    cases = []

    @fixed_seed(seed)
    @settings(max_examples=count, database=None, deadline=None, derandomize=False,
              suppress_health_check=list(HealthCheck))  # fmt: skip
    @given(case_strategy())
    def collect(case):
        cases.append(case)

    collect()
    return cases


# ----------------------------------------------------------------------------- running


WORKER = r"""
import json, resource, sys
resource.setrlimit(resource.RLIMIT_AS, ({limit}, {limit}))
import numpy as np
import ferrotape as tf
for line in sys.stdin:
    case = json.loads(line)
    try:
        exec(case, {{"tf": tf, "np": np}})
        result = ["ok", "", ""]
    except BaseException as e:
        kind = "error" if isinstance(e, Exception) else "panic"
        # What a traceback shows: the message, then the notes naming the op and argument.
        notes = "".join("\n" + str(n) for n in getattr(e, "__notes__", ()))
        result = [kind, type(e).__name__, str(e)[:500] + notes[:500]]
    sys.stdout.write(json.dumps(result) + "\n")
    sys.stdout.flush()
"""


@dataclasses.dataclass
class Result:
    case: str
    kind: str  # ok, error, panic, crash, hang
    exc_type: str = ""
    message: str = ""

    @property
    def failed(self):
        return self.kind in ("panic", "crash", "hang")

    @property
    def unclear(self):
        if self.kind != "error":
            return False
        if INTERNAL.search(self.message) or not self.message.strip():
            return True
        return False

    @property
    def leaked(self):
        """The error is one of Python's or numpy's internal types (``LEAKED``)."""
        return self.kind == "error" and self.exc_type in LEAKED

    @property
    def anonymous(self):
        """The error's message names neither the op (the function, or the operator's or
        index's op) nor any parameter of the function: the user cannot tell what failed."""
        if self.kind != "error":
            return False
        if OP_PREFIX.match(self.message) or "[Op:" in self.message:
            return False  # a kernel named as TF names it ("Mul: ...", "[Op:AddV2]")
        return not any(_names(self.message, word) for word in case_words(self.case))


_SIGNATURES = {}


def _signatures():
    if not _SIGNATURES:
        for name, required, optional in public_functions():
            _SIGNATURES[name] = required + optional
    return _SIGNATURES


def case_words(case):
    """The words that would name a case's op or arguments: the function's short name and its
    parameters, an operator's op names, or an index's; a gradient adds ``gradient``/``jacobian``."""
    words = []
    call = re.search(r"(?:^|\n    y = )(tf(?:\.\w+)*)\.(\w+)\(", case)
    if call and not case.startswith("("):
        words += [call.group(2), *_signatures().get(f"{call.group(1)}.{call.group(2)}", ())]
    if "tape.gradient" in case:
        words += ["gradient", "jacobian", "tape", "watch"]
    operator = re.fullmatch(r"\((.*)\) (\S+) \((.*)\)", case, re.S)
    if operator and operator.group(2) in OPERATOR_NAMES:
        words += OPERATOR_NAMES[operator.group(2)].split() + ["x", "y"]
    elif case.startswith("(") and case.endswith("]"):
        words += INDEX_NAMES.split()
    return words


def _names(message, word):
    """Whether ``message`` names ``word``: as a word (``reduce_sum:``, ``axis=``), or for a
    one-letter parameter only quoted or followed by ``=`` or a verb (``x must ...``)."""
    w = re.escape(word)
    if len(word) > 1:
        return re.search(rf"(?<!\w){w}(?!\w)", message, re.I) is not None
    return (
        re.search(rf"[`'\"]{w}[`'\"]|\b{w}\s*=|\b{w}\s+(?:must|is|has|should|needs)\b", message)
        is not None
    )


def run_batch(cases, timeout):
    """Runs the cases in one worker; returns the results of those it finished, in order."""
    program = WORKER.format(limit=MEMORY_LIMIT)
    worker = subprocess.Popen(
        [sys.executable, "-c", program],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    payload = "".join(json.dumps(c) + "\n" for c in cases)
    try:
        out, _ = worker.communicate(payload, timeout=timeout * len(cases) + 10)
    except subprocess.TimeoutExpired:
        worker.kill()
        out, _ = worker.communicate()
    results = []
    for case, line in zip(cases, out.splitlines(), strict=False):
        kind, exc_type, message = json.loads(line)
        results.append(Result(case, kind, exc_type, message))
    return results


def run_alone(case, timeout):
    from isolated import run_snippet

    outcome = run_snippet(case, timeout=timeout, memory_limit=MEMORY_LIMIT)
    kinds = {"ok": "ok", "raised": "error", "base": "panic", "timeout": "hang"}
    return Result(case, kinds.get(outcome.kind, "crash"), outcome.exc_type, outcome.message)


def run_cases(cases, timeout=10.0, batch=50):
    """Every case's result; a batch whose worker died is rerun case by case."""
    results = []
    for start in range(0, len(cases), batch):
        chunk = cases[start : start + batch]
        done = run_batch(chunk, timeout)
        results.extend(done)
        results.extend(run_alone(case, timeout) for case in chunk[len(done) :])
    return results


def fuzz(seed, seconds, timeout=10.0):
    """Draws and runs cases for about ``seconds``; returns all results."""
    results, rounds = [], 0
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        results.extend(run_cases(draw_cases(seed * 1000 + rounds, 200), timeout))
        rounds += 1
    return results


def summary(results):
    counts = collections.Counter(r.kind for r in results)
    unclear = [r for r in results if r.unclear]
    figures = message_figures(results)
    lines = [
        f"cases: {len(results)}, ok: {counts['ok']}, errors: {counts['error']} "
        f"({len(unclear)} unclear), panics: {counts['panic']}, crashes: {counts['crash']}, "
        f"hangs: {counts['hang']}",
        f"errors naming neither the op nor an argument: {figures['anonymous']} "
        f"({figures['anonymous_share']:.1%}); internal types leaked: {figures['leaked']} "
        f"{dict(figures['leaked_types'])}",
    ]
    for r in results:
        if r.failed:
            lines.append(f"{r.kind.upper()}: {r.case!r} -> {r.exc_type}: {r.message[:200]}")
    seen = set()
    for r in results:
        if r.leaked and (r.exc_type, r.case.split("(")[0]) not in seen:
            seen.add((r.exc_type, r.case.split("(")[0]))
            lines.append(f"leaked: {r.case!r} -> {r.exc_type}: {r.message[:160]}")
    seen = set()
    for r in unclear:
        key = (r.exc_type, re.sub(r"\d+", "N", r.message)[:80])
        if key not in seen:
            seen.add(key)
            lines.append(f"unclear: {r.case!r} -> {r.exc_type}: {r.message[:160]}")
    return "\n".join(lines)


def message_figures(results):
    """The figures of issue 34's item 6: errors, those naming neither the op nor an argument
    (count and share of the errors), and the internal exception types that escaped."""
    errors = [r for r in results if r.kind == "error"]
    anonymous = sum(r.anonymous for r in errors)
    leaked = collections.Counter(r.exc_type for r in errors if r.leaked)
    return {
        "errors": len(errors),
        "anonymous": anonymous,
        "anonymous_share": anonymous / len(errors) if errors else 0.0,
        "leaked": sum(leaked.values()),
        "leaked_types": leaked,
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=600.0)
    parser.add_argument("--seed", type=int, default=random.randrange(2**31))
    parser.add_argument("--json", type=Path, help="also write every result here")
    args = parser.parse_args(argv)
    results = fuzz(args.seed, args.seconds)
    print(f"seed {args.seed}")
    print(summary(results))
    if args.json:
        args.json.write_text(json.dumps([dataclasses.asdict(r) for r in results], indent=1))
    return 1 if any(r.failed for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
