"""Ops that build arrays on the host check the size first (issue 34): a size that cannot fit
raises ``ResourceExhaustedError`` naming the op (or TensorFlow's own error where TensorFlow
refuses the argument), never numpy's ``MemoryError``, an overflow crash or the OOM killer."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import ferrotape as ft
from ferrotape._host_memory import check_host_size, memory_limit
from ferrotape.errors import InvalidArgumentError, ResourceExhaustedError

HUGE = 2**40


def _in_child(code):
    """Runs ``code`` in a fresh interpreter whose address space is capped at 4 GiB, so a
    missing check fails this test (a signal or a MemoryError) instead of taking the machine."""
    program = textwrap.dedent(
        f"""
        import resource
        resource.setrlimit(resource.RLIMIT_AS, (4 * 2**30, 4 * 2**30))
        import ferrotape as ft
        from ferrotape.errors import ResourceExhaustedError
        try:
            {code}
        except ResourceExhaustedError as error:
            print("refused:", error)
        """
    )
    env = {**os.environ, "OMP_NUM_THREADS": "1", "RAYON_NUM_THREADS": "1"}
    done = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=120, env=env
    )
    assert done.returncode == 0, f"exit {done.returncode}: {done.stderr[-2000:]}"
    return done.stdout


def test_repeat_by_a_count_near_2_pow_62_is_refused_not_a_crash():
    # numpy's repeat overflows on this count and writes out of bounds (SIGSEGV).
    out = _in_child("ft.repeat(ft.ones([4]), 2**62)")
    assert "refused: repeat: OOM when allocating tensor with shape [18446744073709551616]" in out


def test_resize_to_a_size_past_int32_gets_tensorflows_value_error():
    with pytest.raises(ValueError, match="resize: size must fit in int32"):
        ft.image.resize(ft.ones([1, 2, 2, 1]), [2**31, 2**31])


@pytest.mark.parametrize(
    ("op", "call"),
    [
        ("repeat", lambda: ft.repeat(ft.ones([4]), HUGE)),
        ("repeat", lambda: ft.repeat(ft.ones([2, 3]), [HUGE, HUGE], axis=0)),
        ("resize", lambda: ft.image.resize(ft.ones([1, 2, 2, 1]), [2**30, 2**30])),
        (
            "resize",
            lambda: ft.image.resize(ft.ones([1, 2, 2, 1]), [2**20, 2**20], method="nearest"),
        ),
        ("resize", lambda: ft.image.resize_with_pad(ft.ones([1, 2, 2, 1]), 2**20, 2**20)),
        ("Resizing", lambda: ft.keras.layers.Resizing(2**20, 2**20)(ft.ones([1, 2, 2, 1]))),
        ("Resizing", lambda: ft.keras.layers.Resizing(2**31, 2**31)(ft.ones([1, 2, 2, 1]))),
        ("segment_sum", lambda: ft.math.segment_sum(ft.ones([2]), ft.constant([0, HUGE]))),
        ("segment_max", lambda: ft.math.segment_max(ft.ones([2]), ft.constant([0, HUGE]))),
        ("segment_min", lambda: ft.math.segment_min(ft.ones([2]), ft.constant([0, HUGE]))),
        ("segment_prod", lambda: ft.math.segment_prod(ft.ones([2]), ft.constant([0, HUGE]))),
        ("segment_mean", lambda: ft.math.segment_mean(ft.ones([2]), ft.constant([0, HUGE]))),
        (
            "unsorted_segment_max",
            lambda: ft.math.unsorted_segment_max(ft.ones([2]), [0, 1], HUGE),
        ),
        (
            "unsorted_segment_mean",
            lambda: ft.math.unsorted_segment_mean(ft.ones([2]), [0, 1], HUGE),
        ),
        (
            "unsorted_segment_sqrt_n",
            lambda: ft.math.unsorted_segment_sqrt_n(ft.ones([2]), [0, 1], HUGE),
        ),
        # Each of 2**17 rows compared with each of 2**17 segments: 2**34 floats spread.
        (
            "unsorted_segment_min",
            lambda: ft.math.unsorted_segment_min(
                ft.ones([2**17, 8]), np.arange(2**17) % 2**17, 2**17
            ),
        ),
    ],
)
def test_a_host_array_too_large_is_refused_naming_the_op(op, call):
    # A Keras layer's message comes inside Keras's "Exception encountered when calling ...".
    with pytest.raises(ResourceExhaustedError, match=f"(^|\x1b\\[1m){op}: OOM when allocating"):
        call()


def test_resource_exhausted_is_still_a_memory_error():
    # Callers that catch the builtin keep working, as with the Rust kernels' refusals.
    with pytest.raises(MemoryError):
        ft.repeat(ft.ones([4]), HUGE)


def test_histogram_nbins_past_int32_is_tensorflows_invalid_argument():
    with pytest.raises(InvalidArgumentError, match="nbins must fit in int32"):
        ft.histogram_fixed_width([1.0], [0.0, 1.0], nbins=HUGE)


def test_the_sizes_that_fit_still_compute():
    np.testing.assert_array_equal(ft.repeat(ft.constant([1, 2]), 3).numpy(), [1, 1, 1, 2, 2, 2])
    assert ft.image.resize(ft.ones([1, 2, 2, 1]), [3, 5]).shape == [1, 3, 5, 1]
    np.testing.assert_array_equal(
        ft.math.segment_max(ft.constant([1.0, 4.0, 2.0]), [0, 0, 2]).numpy(), [4.0, 0.0, 2.0]
    )
    assert ft.keras.layers.Resizing(4, 6)(ft.ones([1, 2, 2, 1])).shape == (1, 4, 6, 1)


def test_the_check_counts_exactly_and_uses_the_kernels_limit():
    assert check_host_size("op", [3, 0, 2**62], "float64") == 0
    assert check_host_size("op", [2, 3], ft.bfloat16) == 6
    limit = memory_limit()
    assert 0 < limit <= os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    with pytest.raises(ResourceExhaustedError, match=r"op: .* shape \[\d+\] and type bfloat16"):
        check_host_size("op", [limit // 2 + 1], ft.bfloat16)
