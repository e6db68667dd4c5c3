"""ft.nn.fractional_max_pool / fractional_avg_pool (window sequences, pooling against numpy
given the sequences, overlapping windows, seeds, float64 finite-difference gradients) and
ft.nn.isotonic_regression (against a brute-force reference). Runs without TensorFlow
(tests/test_nn_fractional_isotonic_tf.py compares with it)."""

import itertools

import numpy as np
import pytest
from test_keras_layers import fd_grad

import ferrotape as ft

RNG = np.random.default_rng(47)


def np_pool(x, rows, cols, overlapping, reduce):
    extra = 1 if overlapping else 0
    out = np.zeros((x.shape[0], len(rows) - 1, len(cols) - 1, x.shape[3]))
    for i, j in itertools.product(range(len(rows) - 1), range(len(cols) - 1)):
        window = x[:, rows[i] : rows[i + 1] + extra, cols[j] : cols[j + 1] + extra]
        out[:, i, j] = reduce(window, axis=(1, 2))
    return out


@pytest.mark.parametrize(
    "pool, reduce", [("fractional_max_pool", np.max), ("fractional_avg_pool", np.mean)]
)
@pytest.mark.parametrize("pseudo_random", [False, True])
@pytest.mark.parametrize("overlapping", [False, True])
def test_fractional_pools_pool_their_windows(pool, reduce, pseudo_random, overlapping):
    x = RNG.standard_normal((2, 11, 9, 3))
    out, rows, cols = getattr(ft.nn, pool)(
        x, [1.0, 1.6, 2.0, 1.0], pseudo_random=pseudo_random, overlapping=overlapping, seed=5
    )
    rows, cols = rows.numpy(), cols.numpy()
    assert rows.dtype == np.int64 and len(rows) == 11 // 1.6 + 1 and len(cols) == 9 // 2.0 + 1
    assert rows[0] == 0 and rows[-1] == 11 and cols[0] == 0 and cols[-1] == 9
    # Windows are k or k + 1 wide (k = n // out) when shuffled; the pseudo-random cuts
    # ceil(alpha * (i + u)) give widths from 1 to k + 2.
    for seq, n in ((rows, 11), (cols, 9)):
        k, widths = n // (len(seq) - 1), np.diff(seq)
        if pseudo_random:
            assert widths.min() >= 1 and widths.max() <= k + 2
        else:
            assert set(widths.tolist()) <= {k, k + 1} and widths.sum() == n
    np.testing.assert_allclose(out.numpy(), np_pool(x, rows, cols, overlapping, reduce), rtol=1e-12)


def test_fractional_pool_seeds_and_scalar_ratio():
    x = RNG.standard_normal((1, 10, 10, 1))
    first = ft.nn.fractional_max_pool(x, 1.5, seed=11)
    again = ft.nn.fractional_max_pool(x, 1.5, seed=11)
    assert first[0].shape == (1, 6, 6, 1)
    np.testing.assert_array_equal(first[1].numpy(), again[1].numpy())
    np.testing.assert_array_equal(first[0].numpy(), again[0].numpy())
    # Without a seed the windows change from call to call (10 into 6: four of the six widths
    # are 2, so some of the 15 orders differ).
    seqs = {tuple(ft.nn.fractional_max_pool(x, 1.5)[1].numpy()) for _ in range(20)}
    assert len(seqs) > 1


@pytest.mark.parametrize("pool", ["fractional_max_pool", "fractional_avg_pool"])
def test_fractional_pool_gradients_match_finite_differences(pool):
    x = RNG.standard_normal((1, 7, 6, 2))
    fn = getattr(ft.nn, pool)
    _, rows, cols = fn(x, [1.0, 1.5, 1.5, 1.0], overlapping=True, seed=3)
    weights = RNG.standard_normal((1, len(rows) - 1, len(cols) - 1, 2))

    def f(v):
        return float(
            ft.reduce_sum(fn(v, [1.0, 1.5, 1.5, 1.0], overlapping=True, seed=3)[0] * weights)
        )

    xt = ft.constant(x)
    with ft.GradientTape() as tape:
        tape.watch(xt)
        y = ft.reduce_sum(fn(xt, [1.0, 1.5, 1.5, 1.0], overlapping=True, seed=3)[0] * weights)
    np.testing.assert_allclose(tape.gradient(y, xt).numpy(), fd_grad(f, x), rtol=1e-6, atol=1e-9)


def test_fractional_pool_bad_ratios():
    x = ft.ones([1, 4, 4, 1])
    with pytest.raises(ValueError, match="first and last elements with value 1.0"):
        ft.nn.fractional_max_pool(x, [1.5, 1.5, 2.0, 1.0])
    with pytest.raises(ValueError, match="should be >= 1.0"):
        ft.nn.fractional_avg_pool(x, [1.0, 0.5, 2.0, 1.0])
    with pytest.raises(ValueError, match="leaves no output"):
        ft.nn.fractional_avg_pool(x, [1.0, 5.0, 2.0, 1.0])


# ---------------------------------------------------------------- isotonic regression


def brute_isotonic(x):
    """The best non-increasing fit among the block partitions (block value = block mean)."""
    n, best = len(x), None
    for cuts in itertools.product([False, True], repeat=n - 1):
        bounds = [0] + [i + 1 for i, c in enumerate(cuts) if c] + [n]
        means = [np.mean(x[a:b]) for a, b in itertools.pairwise(bounds)]
        if all(m1 >= m2 for m1, m2 in itertools.pairwise(means)):
            fit = np.concatenate(
                [[m] * (b - a) for m, (a, b) in zip(means, itertools.pairwise(bounds), strict=True)]
            )
            err = ((x - fit) ** 2).sum()
            if best is None or err < best[0] - 1e-12:
                best = (err, fit)
    return best[1]


@pytest.mark.parametrize("seed", range(5))
def test_isotonic_regression_is_the_least_squares_fit(seed):
    x = np.random.default_rng(seed).standard_normal((3, 6))
    out, segments = ft.nn.isotonic_regression(x)
    assert out.dtype == ft.float64 and segments.dtype == ft.int32
    for row, fit, seg in zip(x, out.numpy(), segments.numpy(), strict=True):
        np.testing.assert_allclose(fit, brute_isotonic(row), rtol=1e-12)
        # Blocks count up from 0 and change exactly where the fit does.
        assert seg[0] == 0 and set(np.diff(seg).tolist()) <= {0, 1}
        np.testing.assert_array_equal(np.diff(seg) == 1, np.diff(fit) != 0)
    up, _ = ft.nn.isotonic_regression(x, decreasing=False)
    np.testing.assert_allclose(up.numpy(), -np.stack([brute_isotonic(-r) for r in x]), rtol=1e-12)


def test_isotonic_regression_axis_dtypes_and_ties():
    out, segments = ft.nn.isotonic_regression([[1.0, 3.0, 2.0, 4.0], [4.0, 3.0, 5.0, 1.0]], axis=0)
    np.testing.assert_allclose(out.numpy(), [[2.5, 3.0, 3.5, 4.0], [2.5, 3.0, 3.5, 1.0]])
    np.testing.assert_array_equal(segments.numpy(), [[0, 0, 0, 0], [0, 1, 0, 1]])
    assert ft.nn.isotonic_regression(ft.constant([3, 1, 2]))[0].dtype == ft.float64
    assert ft.nn.isotonic_regression(ft.constant([3, 1], dtype=ft.int16))[0].dtype == ft.float32
    # Equal neighbours need no pooling: each stays its own block.
    _, segments = ft.nn.isotonic_regression([3.0, 3.0, 3.0], decreasing=False)
    np.testing.assert_array_equal(segments.numpy(), [0, 1, 2])


@pytest.mark.parametrize("decreasing", [True, False])
@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_isotonic_regression_gradient_matches_finite_differences(decreasing, axis):
    # Away from ties the blocks are locally constant, so the fit is differentiable: each
    # entry's gradient is its block's mean of the upstream one (TensorFlow's registered rule).
    x = RNG.standard_normal((3, 6, 2))
    w = RNG.standard_normal(x.shape)

    def f(v):
        fit = ft.nn.isotonic_regression(ft.constant(v), decreasing=decreasing, axis=axis)[0]
        return float(ft.reduce_sum(fit * w))

    xt = ft.constant(x)
    with ft.GradientTape() as tape:
        tape.watch(xt)
        fit = ft.nn.isotonic_regression(xt, decreasing=decreasing, axis=axis)[0]
        loss = ft.reduce_sum(fit * w)
    got = tape.gradient(loss, xt)
    assert got.dtype == ft.float64 and got.shape == x.shape
    np.testing.assert_allclose(got.numpy(), fd_grad(f, x), rtol=1e-6, atol=1e-9)


def test_isotonic_regression_gradient_values_from_tensorflow():
    # TensorFlow 2.21's gradient of sum(fit * w) for this input (decreasing fit, last axis).
    x = ft.constant([[3.0, 1.0, 2.0, 5.0, 4.0], [1.0, 2.0, 3.0, 0.0, -1.0]], ft.float64)
    w = ft.constant([[1.0, 2.0, 3.0, 4.0, 5.0], [-1.0, 0.5, 2.0, 1.0, 3.0]], ft.float64)
    with ft.GradientTape() as tape:
        tape.watch(x)
        loss = ft.reduce_sum(ft.nn.isotonic_regression(x)[0] * w)
    np.testing.assert_allclose(
        tape.gradient(loss, x).numpy(),
        [[1.0, 3.5, 3.5, 3.5, 3.5], [0.5, 0.5, 0.5, 1.0, 3.0]],
    )


@pytest.mark.parametrize("value", [[[True, False]], [[1 + 2j, 3j]]])
def test_isotonic_regression_refuses_bool_and_complex(value):
    # TensorFlow's IsotonicRegression kernel takes real floats and integers only.
    with pytest.raises(ft.errors.InvalidArgumentError, match="isotonic_regression"):
        ft.nn.isotonic_regression(value)


def test_isotonic_regression_checks_its_axis():
    # TF 2.21: axis=5 or -3 on a [2, 3] input, or any axis on a scalar (isotonic_regression(2**31,
    # axis=True)), raise InvalidArgumentError ("`dim` must be in the range [-2, 2) ...");
    # ferrotape leaked numpy's AxisError.
    for x, axis in ((ft.ones([2, 3]), 5), (ft.ones([2, 3]), -3), (2**31, True)):
        with pytest.raises(ft.errors.InvalidArgumentError, match="isotonic_regression: axis"):
            ft.nn.isotonic_regression(x, axis=axis)
    with pytest.raises(TypeError, match="isotonic_regression: axis must be an int"):
        ft.nn.isotonic_regression(ft.ones([2, 3]), axis=None)
    assert ft.nn.isotonic_regression(ft.ones([2, 3]), axis=True)[0].shape == (2, 3)
