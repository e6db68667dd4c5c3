"""The fuzz suite's CI run (tests/fuzz.py): cases drawn from a fixed seed for a bounded budget
(``FERROTAPE_FUZZ_SECONDS``, 120 s by default; 0 skips it). It fails on any crash, hang or
panic and prints each one's reproducer; error messages that leak internals are counted and
listed, not failed. Deselect it locally with ``-m "not fuzz"``."""

import os

import fuzz
import pytest

BUDGET = float(os.environ.get("FERROTAPE_FUZZ_SECONDS", "120"))


@pytest.mark.fuzz
@pytest.mark.skipif(BUDGET <= 0, reason="FERROTAPE_FUZZ_SECONDS=0")
def test_no_case_crashes_hangs_or_panics():
    results = fuzz.fuzz(seed=2026, seconds=BUDGET)
    report = fuzz.summary(results)
    print(report)
    assert len(results) >= 200, report
    failures = [r for r in results if r.failed]
    assert not failures, report


def test_the_classifier_tells_failures_and_unclear_messages_apart():
    results = fuzz.run_cases(
        [
            "tf.constant(1.0) + 1",
            "tf.reshape(tf.ones([2]), [3])",
            "raise KeyboardInterrupt",
            "import os; os.abort()",
            "raise TypeError('PyTensor cannot be converted to PyString')",
        ],
        timeout=20,
    )
    kinds = [r.kind for r in results]
    assert kinds == ["ok", "error", "panic", "crash", "error"]
    assert [r.unclear for r in results] == [False, False, False, False, True]


def test_public_functions_are_discovered():
    names = {name for name, _, _ in fuzz.public_functions()}
    assert {"tf.reshape", "tf.math.reduce_sum", "tf.nn.conv2d", "tf.linalg.det"} <= names
