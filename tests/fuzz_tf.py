"""Differential fuzzing against TensorFlow: the cases of tests/fuzz.py run both on ferrotape and on
TensorFlow 2, and every disagreement is reported.

Each case (``fuzz.draw_cases``) runs in two worker interpreters, one where ``tf`` is ferrotape and
one where it is TensorFlow, each with an address-space limit, one thread and a time limit per
case. A worker stays alive from case to case (TensorFlow takes seconds to import) and is started
again after ``batch`` cases, or after a case that killed it or hung. The worker evaluates every
top-level expression statement of the case (``tape.gradient(y, x)`` and ``tape.jacobian(y, x)``
of a gradient case, the only line of the others) and answers with their values as plain data
(``to_plain``: tensors become dtype name, shape and values; nests stay nests), or with the
exception's class, its MRO and its message.

``compare`` puts each case in one category:
- ``agree``: both ok with the same structure, dtypes, shapes and values (exact for integers,
  bools and strings; ``TOLERANCES`` for floats, NaN equal to NaN), or both refused with
  compatible exceptions. The values of random ops (``NONDETERMINISTIC``) are not compared, only
  their structure, dtypes and shapes.
- differences: ``structure``, ``dtype``, ``shape``, ``value``; ``tf_refuses`` (ferrotape gives a
  value, TensorFlow raises), ``ferrotape_refuses`` (the other way round), ``signature`` (the
  refusing side's error is about the call's signature: a keyword or positional argument one of
  them lacks), ``ferrotape_fails`` (a panic, crash or hang of ferrotape).
- softer differences, both raising: ``error_kind`` (the exceptions are of different families:
  refused, i.e. ValueError, TypeError, NotImplementedError or a ``tf.errors`` class, versus
  memory, versus Python's own RuntimeError, LookupError, ...) and ``error_type`` (both refused,
  but neither class is in the other's MRO, so one ``except`` clause does not catch both:
  TensorFlow's TypeError versus ferrotape's InvalidArgumentError).
- not compared: ``not_in_tf`` (the function does not exist in TensorFlow) and ``tf_fails``
  (TensorFlow crashed or hung).

A difference whose case matches a row of ``KNOWN_DIFFERENCES`` is documented (by design, with
the reason) and reported apart from the undocumented ones. The summary gives the counts per
category and one reproducer per (function, category), the most frequent first.

    python tests/fuzz_tf.py --seconds 600 --seed 34 --json /tmp/fuzz_tf.json

``tests/test_fuzz_tf.py`` tests the comparison and runs a few cases when TensorFlow is installed.
"""

from __future__ import annotations

import argparse
import ast
import collections
import dataclasses
import json
import os
import random
import re
import resource
import select
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

import fuzz

# Ops whose values depend on a random stream, which TensorFlow and ferrotape draw differently (or
# on the clock): only their structure, dtypes and shapes are compared.
NONDETERMINISTIC = re.compile(
    r"random|shuffle|dropout|fractional_|candidate_sampler|sampled_softmax|nce_loss|timestamp"
)
# (rtol, atol) per floating dtype; a complex dtype uses its parts' row.
TOLERANCES = {
    "float16": (5e-3, 1e-3),
    "bfloat16": (2e-2, 1e-2),
    "float32": (1e-4, 1e-5),
    "float64": (1e-9, 1e-12),
    "complex64": (1e-4, 1e-5),
    "complex128": (1e-9, 1e-12),
}
# The exception classes (anywhere in the MRO) that mean "the call was refused".
REFUSED = frozenset({"ValueError", "TypeError", "NotImplementedError", "OpError"})
MEMORY = frozenset({"MemoryError", "ResourceExhaustedError"})
# A TypeError raised by Python's argument binding, not by the op's checks.
SIGNATURE = re.compile(
    r"unexpected keyword argument|required (?:positional|keyword-only) argument|"
    r"takes (?:from )?\d+ (?:to \d+ )?positional arguments? but|got multiple values for argument"
)
DIFFERENCES = ("structure", "dtype", "shape", "value", "tf_refuses", "ferrotape_refuses",
               "signature", "ferrotape_fails")  # fmt: skip
SOFT = ("error_kind", "error_type")
NOT_COMPARED = ("not_in_tf", "tf_fails")


class Known(NamedTuple):
    """A documented difference: its category (or ``*``), a pattern searched in the case, the
    reason in one line, and optionally a pattern searched in ``outcomes(...)``."""

    category: str
    case: str
    reason: str
    outcome: str = ""


_LEAKED = "|".join(sorted(fuzz.LEAKED))
# Documented differences, each checked against TensorFlow 2.21 and ferrotape's documentation.
KNOWN_DIFFERENCES = [
    Known("ferrotape_refuses", r"'abc'|'SAME'|np\.array\(\['a'\]\)",
          "ferrotape has no string dtype (docs/unsupported.md, Strings)",
          r"TensorFlow: ok .*\bstring\["),
    Known("error_kind", r"", "TensorFlow leaks one of Python's internal exception types, which no "
          "ferrotape call may raise (tests/fuzz.py LEAKED, issue 34 item 6)",
          rf"ferrotape: (?!(?:{_LEAKED}):)\w+: .* \| TensorFlow: (?:{_LEAKED}):"),
    Known("value", r"^tf\.(linalg\.)?eigvals?\(",
          "eig/eigvals return LAPACK's order and phase, TensorFlow's differ; the eigenvalues agree "
          "as a set (docs/coming-from-tensorflow.md, What is missing)"),
    Known("value", r"^tf\.linalg\.(svd|eigh)\(",
          "singular and eigen vectors are unique up to sign; LAPACK and TensorFlow's Eigen pick "
          "different signs (the values, result[0], are compared)", r"^result\[[12]\]: "),
]  # fmt: skip

FT_MEMORY_LIMIT = fuzz.MEMORY_LIMIT
TF_MEMORY_LIMIT = 16 << 30  # TensorFlow maps several GiB of address space at import
MAX_ELEMENTS = 10_000  # values kept per tensor: the first ones (the size is kept too)
FUNCTION_CALL = re.compile(r"(?<![\w.])tf(?:\.\w+)+(?=\()")


# ----------------------------------------------------------------------------- the worker


def to_plain(x, tf, depth=0):
    """A result as JSON-able data: tensors (and numpy arrays) as dtype name, shape and values, a
    nest as a nest, a Python scalar as its type and value, anything else as its class name."""
    import numpy as np

    if depth > 20:
        return {"t": "deep"}
    if x is None:
        return None
    if isinstance(x, (bool, int, float, complex, str, bytes)):
        return {"t": "py", "type": type(x).__name__, "value": _scalar(x)}
    name = type(x).__name__
    if name == "IndexedSlices":
        x = tf.convert_to_tensor(x)
    if name == "DType" and hasattr(x, "as_numpy_dtype"):
        return {"t": "dtype", "name": x.name}
    if name == "TensorShape":
        return {"t": "shape", "dims": None if x.rank is None else list(x.as_list())}
    if name == "SparseTensor":
        parts = (x.indices, x.values, x.dense_shape)
        return {"t": "sparse", "items": [to_plain(p, tf, depth + 1) for p in parts]}
    if name == "RaggedTensor":
        parts = (x.flat_values, *x.nested_row_splits)
        return {"t": "ragged", "items": [to_plain(p, tf, depth + 1) for p in parts]}
    if hasattr(x, "numpy") and hasattr(x, "dtype") and hasattr(x, "shape"):
        return _array(np.asarray(x.numpy()), x.dtype.name, "tensor")
    if isinstance(x, (np.ndarray, np.generic)):
        return _array(np.asarray(x), x.dtype.name, "ndarray")
    if isinstance(x, (list, tuple)):
        return {"t": "seq", "type": name, "items": [to_plain(v, tf, depth + 1) for v in x]}
    if isinstance(x, dict):
        items = {str(k): to_plain(v, tf, depth + 1) for k, v in x.items()}
        return {"t": "dict", "items": dict(sorted(items.items()))}
    return {"t": "object", "type": name}


def _scalar(v):
    if isinstance(v, complex):
        return [v.real, v.imag]
    if isinstance(v, bytes):
        return v.decode("latin-1")
    return v


def _array(a, dtype, cls):
    import numpy as np

    flat = a.reshape(-1)[:MAX_ELEMENTS]
    if a.dtype.kind in "biu":
        values = flat.tolist()
    elif a.dtype.kind == "c":
        values = [[v.real, v.imag] for v in flat.astype(np.complex128).tolist()]
    elif a.dtype.kind in "SUO":
        values = [_scalar(v) if isinstance(v, bytes) else str(v) for v in flat.tolist()]
    else:  # float kinds, and ml_dtypes' bfloat16 and float8 (kind "V")
        values = flat.astype(np.float64).tolist()
    return {"t": "tensor", "cls": cls, "dtype": dtype, "shape": list(a.shape),
            "size": int(a.size), "values": values}  # fmt: skip


def run_case(case, tf, np):
    """Runs a case; ``{"kind": "ok", "values": [...]}`` with the value of each top-level expression
    statement, ``{"kind": "error" | "panic", "types": MRO names, "message": ...}``, or
    ``{"kind": "missing", "message": name}`` when a function the case calls does not exist."""
    for name in FUNCTION_CALL.findall(case):
        target = tf
        for part in name.split(".")[1:]:
            if not hasattr(target, part):
                return {"kind": "missing", "message": name}
            target = getattr(target, part)
    namespace = {"tf": tf, "np": np}
    values = []
    try:
        for statement in ast.parse(case).body:
            if isinstance(statement, ast.Expr):
                code = compile(ast.Expression(statement.value), "<case>", "eval")
                values.append(eval(code, namespace))
            else:
                exec(compile(ast.Module([statement], []), "<case>", "exec"), namespace)
        return {"kind": "ok", "values": [to_plain(v, tf) for v in values]}
    except BaseException as e:  # noqa: BLE001 - the exception is the result
        notes = "".join("\n" + str(n) for n in getattr(e, "__notes__", ()))
        return {
            "kind": "error" if isinstance(e, Exception) else "panic",
            "types": [c.__name__ for c in type(e).__mro__],
            "message": str(e)[:500] + notes[:300],
        }


def worker_main(library, memory_limit):
    """The worker's loop: a JSON case per line on stdin, a JSON answer per line on the original
    stdout (what a case prints goes to stderr instead)."""
    if memory_limit:
        resource.setrlimit(resource.RLIMIT_AS, (memory_limit, memory_limit))
    answers = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    import numpy as np

    if library == "tensorflow":
        import tensorflow as tf

        tf.config.threading.set_intra_op_parallelism_threads(1)
        tf.config.threading.set_inter_op_parallelism_threads(1)
    else:
        import ferrotape as tf
    answers.write('"ready"\n')
    answers.flush()
    for line in sys.stdin:
        try:
            answer = json.dumps(run_case(json.loads(line), tf, np))
        except BaseException as e:  # noqa: BLE001 - a result that JSON cannot carry
            answer = json.dumps({"kind": "error", "types": ["HarnessError"], "message": repr(e)})
        answers.write(answer + "\n")
        answers.flush()


class Worker:
    """A worker interpreter for one library, started on demand and again after a crash, a hang
    or ``batch`` cases."""

    def __init__(self, library, timeout=10.0, batch=500, memory_limit=None):
        self.library = library
        self.timeout = timeout
        self.batch = batch
        if memory_limit is None:
            memory_limit = TF_MEMORY_LIMIT if library == "tensorflow" else FT_MEMORY_LIMIT
        self.memory_limit = memory_limit
        self.process = None
        self.done = 0
        self.stderr = None

    def start(self):
        env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", TF_ENABLE_ONEDNN_OPTS="0",
                   RAYON_NUM_THREADS="1", OMP_NUM_THREADS="1")  # fmt: skip
        self.stderr = tempfile.TemporaryFile()
        command = [sys.executable, str(Path(__file__).resolve()), "--worker", self.library,
                   "--memory-limit", str(self.memory_limit)]  # fmt: skip
        self.process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr, env=env
        )
        self.buffer = b""
        self.done = 0
        ready = self._read_line(120.0)
        if ready != b'"ready"':
            raise RuntimeError(f"the {self.library} worker did not start: {self._ended()}")

    def _read_line(self, timeout):
        """The next line from the worker, or None when it did not answer in time or died."""
        deadline = time.monotonic() + timeout
        fd = self.process.stdout.fileno()
        while b"\n" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                return None
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                return b""
            self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        return line

    def _ended(self):
        code = self.process.wait()
        self.stderr.seek(0)
        tail = self.stderr.read().decode(errors="replace").strip().splitlines()[-2:]
        how = signal.Signals(-code).name if code < 0 else f"exit code {code}"
        return " / ".join([how, *tail])[:500]

    def run(self, case):
        if self.process is None or self.done >= self.batch:
            self.close()
            self.start()
        self.done += 1
        try:
            self.process.stdin.write((json.dumps(case) + "\n").encode())
            self.process.stdin.flush()
        except BrokenPipeError:
            pass
        line = self._read_line(self.timeout)
        if line:
            return json.loads(line)
        if line is None:
            self.process.kill()
            result = {"kind": "hang", "message": f"no answer after {self.timeout} s"}
        else:
            result = {"kind": "crash", "message": self._ended()}
        self.close()
        return result

    def close(self):
        if self.process is not None:
            self.process.stdin.close()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
            self.process.stdout.close()
            self.stderr.close()
            self.process = None


# ----------------------------------------------------------------------------- comparing


@dataclasses.dataclass
class Compared:
    """One case's two outcomes (``run_case``'s answers) and what the comparison made of them."""

    case: str
    ferrotape: dict
    tensorflow: dict
    category: str = ""
    detail: str = ""
    known: str = ""  # the documented reason, when KNOWN_DIFFERENCES has a row for it

    @property
    def function(self):
        return case_function(self.case)

    @property
    def difference(self):
        return self.category in DIFFERENCES


def case_function(case):
    """What a case exercises: ``tf.math.cumsum``, ``gradient of tf.nn.relu``, ``operator +``,
    ``index``."""
    gradient = re.search(r"\n    y = (tf[\w.]*)\(", case)
    if gradient:
        return f"gradient of {gradient.group(1)}"
    operator = re.fullmatch(r"\((.*)\) (\S+) \((.*)\)", case, re.S)
    if operator and operator.group(2) in fuzz.OPERATORS:
        return f"operator {operator.group(2)}"
    if case.startswith("(") and case.endswith("]"):
        return "index"
    call = re.match(r"(tf[\w.]*)\(", case)
    return call.group(1) if call else case.split("(")[0]


def family(types):
    """The family of an exception, from its MRO names: refused, memory, or the class right below
    Exception (RuntimeError, LookupError, AttributeError, ...)."""
    names = set(types)
    if names & MEMORY:
        return "memory"
    if names & REFUSED:
        return "refused"
    if "Exception" in types and types.index("Exception") > 0:
        return types[types.index("Exception") - 1]
    return types[0] if types else "?"


def compare(case, ferrotape, tensorflow):
    """A ``Compared`` with the case's category and a one-line detail."""
    category, detail = _categorize(case, ferrotape, tensorflow)
    result = Compared(case, ferrotape, tensorflow, category, detail)
    if category not in ("agree", *NOT_COMPARED):
        result.known = known_reason(result)
    return result


def outcomes(compared):
    """The detail and both outcomes in one line, which a ``Known.outcome`` pattern is searched
    in: ``result[1]: ... | ferrotape: ok tensor float32[2] | TensorFlow: TypeError: ...``."""
    return (f"{compared.detail} | ferrotape: {describe(compared.ferrotape, 400)} | "
            f"TensorFlow: {describe(compared.tensorflow, 400)}")  # fmt: skip


def known_reason(compared):
    """The reason of the first ``KNOWN_DIFFERENCES`` row matching a difference, or ``""``."""
    for row in KNOWN_DIFFERENCES:
        if row.category not in (compared.category, "*") or not re.search(row.case, compared.case):
            continue
        if not row.outcome or re.search(row.outcome, outcomes(compared)):
            return row.reason
    return ""


def _categorize(case, ft, tf):
    fk, tk = ft["kind"], tf["kind"]
    if fk in ("panic", "crash", "hang"):
        return "ferrotape_fails", f"ferrotape {fk}: {ft.get('message', '')[:200]}"
    if tk == "missing":
        return "not_in_tf", f"TensorFlow has no {tf['message']}"
    if tk in ("panic", "crash", "hang"):
        return "tf_fails", f"TensorFlow {tk}: {tf.get('message', '')[:200]}"
    if fk == "missing":
        return "ferrotape_refuses", f"ferrotape has no {ft['message']}"
    if fk == "ok" and tk == "ok":
        shapes_only = bool(NONDETERMINISTIC.search(case))
        found = diff_values(_nest(ft["values"]), _nest(tf["values"]), shapes_only)
        return found if found else ("agree", "")
    if fk != tk:  # one value, one error
        error = tf if fk == "ok" else ft
        text = "TensorFlow raises" if fk == "ok" else "ferrotape raises"
        text += f" {error['types'][0]}" if error["kind"] != "missing" else " (missing)"
        if error.get("types", [""])[0] == "TypeError" and SIGNATURE.search(error["message"]):
            return "signature", text
        return ("tf_refuses" if fk == "ok" else "ferrotape_refuses"), text
    f_types, t_types = ft["types"], tf["types"]
    text = f"ferrotape {f_types[0]}, TensorFlow {t_types[0]}"
    if family(f_types) != family(t_types):
        return "error_kind", text
    if f_types[0] not in t_types and t_types[0] not in f_types:
        return "error_type", text
    return "agree", ""


def _nest(values):
    """A case's values as one plain result: the value of its only expression, or a sequence."""
    return values[0] if len(values) == 1 else {"t": "seq", "type": "values", "items": values}


def diff_values(ft, tf, shapes_only=False, path="result"):
    """The first difference between two plain results as ``(category, detail)``, or None."""
    if ft is None or tf is None:
        if ft is tf:
            return None
        return "structure", f"{path}: ferrotape {_kind(ft)}, TensorFlow {_kind(tf)}"
    if ft["t"] != tf["t"] or ft.get("cls") != tf.get("cls"):
        return "structure", f"{path}: ferrotape {_kind(ft)}, TensorFlow {_kind(tf)}"
    kind = ft["t"]
    if isinstance(ft.get("items"), list) or kind == "seq":
        if len(ft["items"]) != len(tf["items"]):
            lengths = f"{len(ft['items'])} items vs {len(tf['items'])}"
            return "structure", f"{path}: {lengths}"
        for i, (a, b) in enumerate(zip(ft["items"], tf["items"], strict=True)):
            found = diff_values(a, b, shapes_only, f"{path}[{i}]")
            if found:
                return found
        return None
    if kind == "dict":
        if ft["items"].keys() != tf["items"].keys():
            return "structure", f"{path}: keys {sorted(ft['items'])} vs {sorted(tf['items'])}"
        for key in ft["items"]:
            found = diff_values(ft["items"][key], tf["items"][key], shapes_only, f"{path}[{key}]")
            if found:
                return found
        return None
    if kind == "py":
        if ft["type"] != tf["type"]:
            return "dtype", f"{path}: Python {ft['type']} vs {tf['type']}"
        if shapes_only:
            return None
        dtype = "float64" if ft["type"] in ("float", "complex") else ft["type"]
        wrap = {"values": [ft["value"]]}, {"values": [tf["value"]]}
        bad = _first_unequal(*wrap, dtype)
        if bad is None:
            return None
        return "value", f"{path}: {ft['value']!r} vs {tf['value']!r}"
    if kind == "tensor":
        if ft["dtype"] != tf["dtype"]:
            return "dtype", f"{path}: {ft['dtype']} vs {tf['dtype']}"
        if ft["shape"] != tf["shape"]:
            return "shape", f"{path}: {ft['shape']} vs {tf['shape']}"
        if shapes_only:
            return None
        bad = _first_unequal(ft, tf, ft["dtype"])
        if bad is None:
            return None
        a, b = ft["values"][bad], tf["values"][bad]
        return "value", f"{path}: {ft['dtype']}{ft['shape']} at flat {bad}: {a!r} vs {b!r}"
    for field in ("name", "dims"):  # a dtype or a TensorShape
        if ft.get(field) != tf.get(field):
            return "value", f"{path}: {ft[field]!r} vs {tf[field]!r}"
    return None


def _kind(plain):
    if plain is None:
        return "None"
    if plain["t"] == "tensor":
        return f"{plain['cls']} {plain['dtype']}{plain['shape']}"
    return plain.get("type", plain["t"])


def _first_unequal(ft, tf, dtype):
    """The first flat index where the values differ (exact, or within ``TOLERANCES``)."""
    import numpy as np

    a, b = ft["values"], tf["values"]
    if dtype not in TOLERANCES and not re.match(r"float8", dtype):
        return next((i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y), None)
    rtol, atol = TOLERANCES.get(dtype, (0.13, 0.02))  # float8: 3 mantissa bits or fewer
    x, y = np.array(a, dtype=np.float64), np.array(b, dtype=np.float64)
    close = np.isclose(x, y, rtol=rtol, atol=atol, equal_nan=True)
    if close.ndim > 1:  # complex: [real, imaginary] pairs
        close = close.all(axis=-1)
    wrong = np.flatnonzero(~close)
    return int(wrong[0]) if wrong.size else None


def describe(outcome, width=160):
    """An outcome in one line: ``InvalidArgumentError: ...`` or ``ok float32[2, 3]``."""
    if outcome["kind"] in ("error", "panic"):
        message = " ".join(outcome["message"].split())
        return f"{outcome['types'][0]}: {message}"[:width]
    if outcome["kind"] != "ok":
        return f"{outcome['kind']}: {outcome.get('message', '')}"[:width]
    return ("ok " + ", ".join(_kind(v) for v in outcome["values"]))[:width]


# ----------------------------------------------------------------------------- running


def compare_cases(cases, timeout=10.0, batch=500, deadline=None, workers=None):
    """Runs each case on ferrotape then on TensorFlow (one worker busy at a time) and compares.
    Stops early at ``deadline`` (a ``time.monotonic`` value)."""
    own = workers is None
    if own:
        workers = Worker("ferrotape", timeout, batch), Worker("tensorflow", timeout, batch)
    results = []
    try:
        for case in cases:
            if deadline is not None and time.monotonic() > deadline:
                break
            results.append(compare(case, workers[0].run(case), workers[1].run(case)))
    finally:
        if own:
            for worker in workers:
                worker.close()
    return results


def fuzz_tf(seed, seconds, timeout=10.0):
    """Draws cases as tests/fuzz.py does (200 a round) and compares them for about ``seconds``."""
    results, rounds = [], 0
    deadline = time.monotonic() + seconds
    workers = Worker("ferrotape", timeout), Worker("tensorflow", timeout)
    try:
        while time.monotonic() < deadline:
            cases = fuzz.draw_cases(seed * 1000 + rounds, 200)
            results.extend(compare_cases(cases, timeout, deadline=deadline, workers=workers))
            rounds += 1
    finally:
        for worker in workers:
            worker.close()
    return results


def figures(results):
    """The run's counts: cases, per category, documented and undocumented differences."""
    counts = collections.Counter(r.category for r in results)
    both_ok = sum(r.ferrotape["kind"] == "ok" == r.tensorflow["kind"] for r in results)
    differences = [r for r in results if r.difference]
    soft = [r for r in results if r.category in SOFT]
    return {
        "cases": len(results),
        "both_ok": both_ok,
        "both_ok_agree": sum(
            r.category == "agree" and r.ferrotape["kind"] == "ok" for r in results
        ),  # fmt: skip
        "categories": dict(counts),
        "differences": len(differences),
        "documented": sum(bool(r.known) for r in differences),
        "undocumented": sum(not r.known for r in differences),
        "soft_documented": sum(bool(r.known) for r in soft),
        "soft_undocumented": sum(not r.known for r in soft),
    }


def summary(results, top=None):
    """Counts per category, then one reproducer per (function, category), the most frequent
    first: undocumented differences, softer exception-kind ones, documented ones, and what was not
    compared."""
    f = figures(results)
    counts = f["categories"]
    lines = [
        f"cases: {f['cases']}, both ok: {f['both_ok']} ({f['both_ok_agree']} agreeing), "
        f"agreeing in all: {counts.get('agree', 0)}",
        f"differences: {f['differences']} ({f['undocumented']} undocumented, "
        f"{f['documented']} documented); softer (exception kinds): "
        f"{f['soft_undocumented'] + f['soft_documented']} ({f['soft_documented']} documented)",
        "per category: "
        + ", ".join(
            f"{c} {counts[c]}" for c in (*DIFFERENCES, *SOFT, *NOT_COMPARED) if c in counts
        ),
    ]
    sections = [
        ("undocumented differences", lambda r: r.difference and not r.known),
        ("softer: exception kinds", lambda r: r.category in SOFT and not r.known),
        ("documented", lambda r: r.category not in ("agree", *NOT_COMPARED) and r.known),
        ("not compared", lambda r: r.category in NOT_COMPARED),
    ]
    for title, chosen in sections:
        groups = collections.defaultdict(list)
        for r in results:
            if chosen(r):
                groups[(r.function, r.category)].append(r)
        if not groups:
            continue
        ranked = sorted(groups.items(), key=lambda item: (-len(item[1]), item[0]))
        lines.append(f"{title} ({sum(len(g) for g in groups.values())} cases, "
                     f"{len(groups)} (function, category) pairs):")  # fmt: skip
        for (function, category), group in ranked[:top]:
            r = min(group, key=lambda r: (len(r.case), r.case))
            lines.append(f"  [{category}] {function} x{len(group)}: {r.case!r}")
            lines.append(f"      {r.known or r.detail}"[:220])
            if not r.known and category not in NOT_COMPARED:
                lines.append(f"      ferrotape: {describe(r.ferrotape)}")
                lines.append(f"      TensorFlow: {describe(r.tensorflow)}")
    return "\n".join(lines)


def to_json(results):
    """The results as JSON-able rows; the values are kept only where the outcomes differ."""
    rows = []
    for r in results:
        row = dataclasses.asdict(r)
        row["function"] = r.function
        if r.category == "agree":
            for side in ("ferrotape", "tensorflow"):
                row[side] = {k: v for k, v in row[side].items() if k != "values"}
        rows.append(row)
    return rows


def from_json(rows):
    """``to_json``'s rows as results again, the documented reasons looked up anew (so that a new
    row of ``KNOWN_DIFFERENCES`` shows without a rerun)."""
    results = []
    for row in rows:
        r = Compared(row["case"], row["ferrotape"], row["tensorflow"], row["category"],
                     row["detail"])  # fmt: skip
        if r.category not in ("agree", *NOT_COMPARED):
            r.known = known_reason(r)
        results.append(r)
    return results


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=600.0)
    parser.add_argument("--seed", type=int, default=random.randrange(2**31))
    parser.add_argument("--timeout", type=float, default=10.0, help="seconds per case and side")
    parser.add_argument("--json", type=Path, help="also write every result here")
    parser.add_argument("--top", type=int, default=None, help="reproducers listed per section")
    parser.add_argument("--report", type=Path, help="summarize a --json file again (no run)")
    parser.add_argument("--worker", choices=["ferrotape", "tensorflow"], help=argparse.SUPPRESS)
    parser.add_argument("--memory-limit", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        worker_main(args.worker, args.memory_limit)
        return 0
    if args.report:
        print(summary(from_json(json.loads(args.report.read_text())), args.top))
        return 0
    results = fuzz_tf(args.seed, args.seconds, args.timeout)
    print(f"seed {args.seed}")
    print(summary(results, args.top))
    if args.json:
        args.json.write_text(json.dumps(to_json(results), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
