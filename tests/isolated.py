"""Run a snippet of user code in a fresh interpreter and report how it ended.

A crash (SIGSEGV, an abort), a hang or a ``PanicException`` must fail one test, not the whole
run, so every reproducer of a crash runs here. The snippet sees ``tf`` (ferrotape) and ``np``.
"""

from __future__ import annotations

import dataclasses
import resource
import signal
import subprocess
import sys
import textwrap

_WRAPPER = """
import sys
import numpy as np
import ferrotape as tf
try:
{body}
except BaseException as e:
    kind = "raised" if isinstance(e, Exception) else "base"
    mro = ",".join(c.__name__ for c in type(e).__mro__)
    msg = str(e).replace("\\n", " ")[:2000]
    msg += "".join(" / " + str(n) for n in getattr(e, "__notes__", ()))
    sys.stdout.write("\\n@@OUTCOME " + kind + " " + mro + " | " + msg + "\\n")
else:
    sys.stdout.write("\\n@@OUTCOME ok\\n")
"""


@dataclasses.dataclass
class Outcome:
    """How a snippet ended.

    ``kind`` is ``"ok"``, ``"raised"`` (an ``Exception``), ``"base"`` (a ``BaseException`` that is
    not an ``Exception``, such as a Rust ``PanicException``), ``"signal"`` (killed by a signal),
    ``"exit"`` (ended without reporting, e.g. ``os._exit``) or ``"timeout"``.
    """

    kind: str
    exc_types: tuple[str, ...] = ()
    message: str = ""
    stdout: str = ""
    stderr: str = ""

    @property
    def exc_type(self) -> str:
        return self.exc_types[0] if self.exc_types else ""

    def is_clean(self) -> bool:
        """Ended normally or with an ordinary Python exception."""
        return self.kind in ("ok", "raised")

    def __str__(self) -> str:
        if self.kind in ("raised", "base"):
            return f"{self.kind} {self.exc_type}: {self.message}"
        tail = self.stderr.strip().splitlines()[-3:]
        return f"{self.kind} {self.message} {' / '.join(tail)}".strip()


def run_snippet(
    code: str, timeout: float = 60.0, env: dict | None = None, memory_limit: int | None = None
) -> Outcome:
    """Runs ``code`` (statements using ``tf`` and ``np``) in a new interpreter, with at most
    ``memory_limit`` bytes of address space when given (so that a huge but legitimate allocation
    fails fast instead of paging for minutes)."""

    def limit_memory():
        resource.setrlimit(resource.RLIMIT_AS, (memory_limit, memory_limit))

    body = textwrap.indent(textwrap.dedent(code).strip() or "pass", "    ")
    program = _WRAPPER.format(body=body)
    try:
        done = subprocess.run(
            [sys.executable, "-c", program],
            capture_output=True,
            text=True,
            timeout=timeout,
            env=env,
            preexec_fn=limit_memory if memory_limit else None,
        )
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        err = e.stderr.decode() if isinstance(e.stderr, bytes) else (e.stderr or "")
        return Outcome("timeout", message=f"after {timeout} s", stdout=out, stderr=err)
    if done.returncode < 0:
        name = signal.Signals(-done.returncode).name
        return Outcome("signal", message=name, stdout=done.stdout, stderr=done.stderr)
    for line in reversed(done.stdout.splitlines()):
        if line.startswith("@@OUTCOME "):
            rest = line[len("@@OUTCOME ") :]
            if rest == "ok":
                return Outcome("ok", stdout=done.stdout, stderr=done.stderr)
            kind, _, rest = rest.partition(" ")
            mro, _, msg = rest.partition(" | ")
            types = tuple(mro.split(","))
            return Outcome(kind, types, msg, done.stdout, done.stderr)
    message = f"exit code {done.returncode}"
    return Outcome("exit", message=message, stdout=done.stdout, stderr=done.stderr)


def assert_raises_cleanly(code: str, exc_type: str, match: str = "", timeout: float = 60.0):
    """The snippet ends in an ordinary exception of (a subclass of) ``exc_type`` whose message
    contains ``match``. Returns the outcome for further checks."""
    outcome = run_snippet(code, timeout=timeout)
    assert outcome.kind == "raised", f"expected {exc_type}, got {outcome}"
    assert exc_type in outcome.exc_types, f"expected {exc_type}, got {outcome}"
    assert match in outcome.message, f"expected {match!r} in the message, got {outcome}"
    return outcome
