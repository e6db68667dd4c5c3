"""The fuzz suite's CI run (tests/fuzz.py): cases drawn from a fixed seed for a bounded budget
(``FERROTAPE_FUZZ_SECONDS``, 120 s by default; 0 skips it). It fails on any crash, hang or
panic and prints each one's reproducer; error messages that leak internals, name neither the op
nor an argument, or are of an internal type (IndexError, ...) are counted and listed, not failed.
Deselect it locally with ``-m "not fuzz"``."""

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


def test_the_message_figures_count_anonymous_errors_and_leaked_types():
    results = [
        fuzz.Result("tf.math.reduce_sum(tf.ones([2]), axis=5)", "error", "InvalidArgumentError",
                    "reduce_sum: axis 5 is out of range"),  # names the op
        fuzz.Result("tf.reshape(tf.ones([2]), [3])", "error", "InvalidArgumentError",
                    "Cannot reshape a tensor of 2 elements to shape [3]: check `shape`"),
        fuzz.Result("tf.nn.relu(tf.ones([2]))", "error", "TypeError", "expected a float"),
        fuzz.Result("(tf.ones([2])) + ('abc')", "error", "TypeError", "[Op:AddV2] bad"),
        fuzz.Result("(tf.ones([2]))[5]", "error", "IndexError", "list index out of range"),
        fuzz.Result("(tf.ones([2])) / (0)", "error", "ZeroDivisionError", "division by zero"),
        fuzz.Result("tf.nn.l2_loss(tf.ones([2]))", "error", "InvalidArgumentError",
                    "Mul: incompatible shapes"),  # a kernel named as TF names it
        fuzz.Result("tf.ones([2])", "ok"),
    ]  # fmt: skip
    assert [r.anonymous for r in results] == [False, False, True, False, False, True, False, False]
    assert [r.leaked for r in results] == [False, False, False, False, True, True, False, False]
    figures = fuzz.message_figures(results)
    assert figures["errors"] == 7 and figures["anonymous"] == 2
    assert figures["anonymous_share"] == 2 / 7
    assert figures["leaked_types"] == {"IndexError": 1, "ZeroDivisionError": 1}
    assert "naming neither the op nor an argument: 2 (28.6%)" in fuzz.summary(results)
