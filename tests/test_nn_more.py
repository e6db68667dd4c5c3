"""The ft.nn names composed from other ops (1-D/3-D/depthwise/separable convolutions, 1-D and
3-D pools, moments helpers, losses, normalizations, top_k): values against numpy references
written here, errors, and float64 finite-difference gradients. Runs without TensorFlow."""

import math

import numpy as np
import pytest
from numpy.lib.stride_tricks import sliding_window_view
from test_keras_layers import fd_grad

import ferrotape as ft

RNG = np.random.default_rng(3)


def rand(*shape):
    return RNG.standard_normal(shape)


def check_grad(fn, *xs, rtol=1e-5, atol=1e-7):
    """d/dx_i sum(fn(*xs) * w) from the tape against central differences, for every x_i."""
    w = RNG.standard_normal(np.shape(fn(*[ft.constant(x) for x in xs]).numpy()))
    ts = [ft.constant(x) for x in xs]
    with ft.GradientTape() as tape:
        tape.watch(ts)
        y = ft.reduce_sum(fn(*ts) * w)
    grads = tape.gradient(y, ts)
    for i, x in enumerate(xs):

        def loss(xv, i=i):
            args = [ft.constant(v) for v in xs]
            args[i] = ft.constant(xv)
            return float(ft.reduce_sum(fn(*args) * w))

        np.testing.assert_allclose(grads[i].numpy(), fd_grad(loss, x), rtol, atol)


def same_pads(size, k, s, d=1):
    out = -(-size // s)
    total = max((out - 1) * s + (k - 1) * d + 1 - size, 0)
    return total // 2, total - total // 2


def conv_ref(x, f, strides, padding, dilations):
    """N-D channels-last cross-correlation by sliding windows."""
    nd = x.ndim - 2
    if padding == "SAME":
        pads = [same_pads(x.shape[1 + i], f.shape[i], strides[i], dilations[i]) for i in range(nd)]
        x = np.pad(x, [(0, 0), *pads, (0, 0)])
    spans = [(f.shape[i] - 1) * dilations[i] + 1 for i in range(nd)]
    win = sliding_window_view(x, spans, axis=tuple(range(1, nd + 1)))
    win = win[(slice(None),) + tuple(slice(None, None, s) for s in strides)]
    win = win[(Ellipsis,) + tuple(slice(None, None, d) for d in dilations)]
    letters = "abc"[:nd]
    return np.einsum(f"n{letters.upper()}i{letters},{letters}io->n{letters.upper()}o", win, f)


@pytest.mark.parametrize("padding", ["SAME", "VALID"])
@pytest.mark.parametrize("stride, dilation", [(1, 1), (2, 1), (1, 2)])
def test_conv1d_matches_numpy(padding, stride, dilation):
    x, f = rand(2, 9, 3), rand(3, 3, 4)
    got = ft.nn.conv1d(x, f, stride, padding, dilations=dilation).numpy()
    np.testing.assert_allclose(got, conv_ref(x, f, [stride], padding, [dilation]), atol=1e-12)


@pytest.mark.parametrize("padding", ["SAME", "VALID"])
@pytest.mark.parametrize("strides", [[1, 1, 1, 1, 1], [1, 2, 1, 2, 1]])
def test_conv3d_matches_numpy(padding, strides):
    x, f = rand(2, 5, 6, 5, 2), rand(2, 3, 2, 2, 3)
    got = ft.nn.conv3d(x, f, strides, padding).numpy()
    np.testing.assert_allclose(got, conv_ref(x, f, strides[1:4], padding, [1, 1, 1]), atol=1e-12)
    dilated = ft.nn.conv3d(x, f, 1, "SAME", dilations=[1, 2, 1, 2, 1]).numpy()
    np.testing.assert_allclose(dilated, conv_ref(x, f, [1, 1, 1], "SAME", [2, 1, 2]), atol=1e-12)


def test_depthwise_and_separable_match_per_channel_correlation():
    x, f = rand(2, 6, 7, 3), rand(3, 2, 3, 2)
    for strides, padding in [([1, 1, 1, 1], "VALID"), ([1, 2, 2, 1], "SAME")]:
        got = ft.nn.depthwise_conv2d(x, f, strides, padding).numpy()
        per_channel = [
            conv_ref(x[..., c : c + 1], f[:, :, c : c + 1, :], strides[1:3], padding, [1, 1])
            for c in range(3)
        ]
        np.testing.assert_allclose(got, np.concatenate(per_channel, -1), atol=1e-12)
        pointwise = rand(1, 1, 6, 4)
        sep = ft.nn.separable_conv2d(x, f, pointwise, strides, padding).numpy()
        np.testing.assert_allclose(sep, got @ pointwise[0, 0], atol=1e-12)


def test_conv1d_transpose_is_the_adjoint_of_conv1d():
    # <conv1d(x), y> == <x, conv1d_transpose(y)> for every x and y: the defining property.
    x, f = rand(2, 9, 3), rand(3, 3, 4)
    for padding in ("SAME", "VALID"):
        y = rand(*ft.nn.conv1d(x, f, 2, padding).shape)
        lhs = np.sum(ft.nn.conv1d(x, f, 2, padding).numpy() * y)
        back = ft.nn.conv1d_transpose(y, f, [2, 9, 3], 2, padding).numpy()
        np.testing.assert_allclose(lhs, np.sum(x * back), rtol=1e-10)
    assert ft.nn.conv_transpose(rand(2, 5, 4), f, [2, 9, 3], 2).shape == [2, 9, 3]


def test_vjp_forms_are_adjoints_of_their_forward_ops():
    # <op(x, f), y> == <x, backprop_input(y)> == <f, backprop_filter(x, y)>.
    x, f = rand(2, 5, 6, 3), rand(3, 2, 3, 2)
    y = rand(*ft.nn.depthwise_conv2d(x, f, [1, 2, 2, 1], "SAME").shape)
    inner = np.sum(ft.nn.depthwise_conv2d(x, f, [1, 2, 2, 1], "SAME").numpy() * y)
    dx = ft.nn.depthwise_conv2d_backprop_input([2, 5, 6, 3], f, y, [1, 2, 2, 1], "SAME")
    df = ft.nn.depthwise_conv2d_backprop_filter(x, [3, 2, 3, 2], y, [1, 2, 2, 1], "SAME")
    np.testing.assert_allclose(np.sum(x * dx.numpy()), inner, rtol=1e-10)
    np.testing.assert_allclose(np.sum(f * df.numpy()), inner, rtol=1e-10)
    x3, f3 = rand(1, 5, 4, 3, 2), rand(2, 2, 2, 2, 3)
    y3 = rand(1, 3, 2, 2, 3)
    lhs = np.sum(ft.nn.conv3d(x3, f3, 2, "SAME").numpy() * y3)
    back = ft.nn.conv3d_transpose(y3, f3, [1, 5, 4, 3, 2], 2, "SAME").numpy()
    np.testing.assert_allclose(np.sum(x3 * back), lhs, rtol=1e-10)


def pool_ref(x, k, s, padding, reduce):
    nd = x.ndim - 2
    fill = -np.inf if reduce is np.max else np.nan
    if padding == "SAME":
        pads = [same_pads(x.shape[1 + i], k[i], s[i]) for i in range(nd)]
        x = np.pad(x, [(0, 0), *pads, (0, 0)], constant_values=fill)
    win = sliding_window_view(x, k, axis=tuple(range(1, nd + 1)))
    win = win[(slice(None),) + tuple(slice(None, None, st) for st in s)]
    axes = tuple(range(-nd, 0))
    return np.max(win, axis=axes) if reduce is np.max else np.nanmean(win, axis=axes)


@pytest.mark.parametrize("padding", ["SAME", "VALID"])
def test_1d_and_3d_pools_match_numpy(padding):
    x1, x3 = rand(2, 9, 3), rand(2, 5, 6, 7, 2)
    np.testing.assert_allclose(
        ft.nn.max_pool1d(x1, 3, 2, padding).numpy(), pool_ref(x1, [3], [2], padding, np.max)
    )
    np.testing.assert_allclose(
        ft.nn.avg_pool1d(x1, 3, 2, padding).numpy(), pool_ref(x1, [3], [2], padding, np.mean)
    )
    for k, s in [([2, 3, 2], [2, 2, 1]), ([3, 2, 2], [1, 2, 2])]:
        np.testing.assert_allclose(
            ft.nn.max_pool3d(x3, k, s, padding).numpy(), pool_ref(x3, k, s, padding, np.max)
        )
        np.testing.assert_allclose(
            ft.nn.avg_pool3d(x3, k, s, padding).numpy(),
            pool_ref(x3, k, s, padding, np.mean),
            atol=1e-12,
        )
    np.testing.assert_allclose(
        ft.nn.pool(x3, [2, 3, 2], "AVG", [2, 2, 1], padding).numpy(),
        pool_ref(x3, [2, 3, 2], [2, 2, 1], padding, np.mean),
        atol=1e-12,
    )


@pytest.mark.parametrize("padding", ["SAME", "VALID"])
def test_dilation_and_erosion_match_window_max_and_min(padding):
    x, f = rand(2, 6, 7, 2), rand(2, 3, 2)
    padded = x
    if padding == "SAME":
        pads = [same_pads(6, 2, 2), same_pads(7, 3, 2)]
        padded = np.pad(x, [(0, 0), *pads, (0, 0)], constant_values=-np.inf)
    win = sliding_window_view(padded, (2, 3), axis=(1, 2))[:, ::2, ::2]  # [n, oh, ow, c, 2, 3]
    want = np.max(win + np.moveaxis(f, -1, 0), axis=(-2, -1))
    got = ft.nn.dilation2d(x, f, [1, 2, 2, 1], padding, "NHWC", [1, 1, 1, 1]).numpy()
    np.testing.assert_allclose(got, want)
    # erosion2d(x, f) == -dilation2d(-x, f reversed): the window minimum of x - f reversed.
    eroded = ft.nn.erosion2d(x, f[::-1, ::-1], [1, 2, 2, 1], padding, "NHWC", [1, 1, 1, 1])
    np.testing.assert_allclose(eroded.numpy(), -ft.nn.dilation2d(-x, f, 2, padding).numpy())


def test_moments_helpers_match_numpy():
    x, w = rand(4, 5), np.abs(rand(4, 1))
    mean, var = ft.nn.weighted_moments(x, [0], w)
    want_mean = (w * x).sum(0) / (w.sum() * np.ones(5))
    np.testing.assert_allclose(mean.numpy(), want_mean)
    np.testing.assert_allclose(var.numpy(), (w * (x - want_mean) ** 2).sum(0) / w.sum())
    count, m_ss, v_ss, shift = ft.nn.sufficient_statistics(x, [1], shift=0.5)
    assert float(count) == 5 and float(shift) == 0.5
    np.testing.assert_allclose(m_ss.numpy(), (x - 0.5).sum(1))
    mean, var = ft.nn.normalize_moments(count, m_ss, v_ss, shift)
    np.testing.assert_allclose(mean.numpy(), x.mean(1))
    np.testing.assert_allclose(var.numpy(), x.var(1), atol=1e-12)


def test_sufficient_statistics_checks_its_axes():
    # TF 2.21: axes [0, 1, 2] or [5] or [-3] on a [2, 3] input, or [0] on a scalar, escape as
    # IndexError("list index out of range"); [0, 0] counts axis 0 once (count 2.0) and [-1]
    # reduces the last axis (count 3.0). ferrotape raised IndexError too; now the op's error.
    x = ft.ones([2, 3])
    for rank_of, axes in ((x, [0, 1, 2]), (x, [5]), (x, [-3]), (ft.constant(1.0), [0])):
        with pytest.raises(ft.errors.InvalidArgumentError, match="sufficient_statistics: axis"):
            ft.nn.sufficient_statistics(rank_of, axes)
    with pytest.raises(TypeError, match="sufficient_statistics: axes must be a list of ints"):
        ft.nn.sufficient_statistics(x, None)
    count, m_ss, _, _ = ft.nn.sufficient_statistics(x, [0, 0])
    assert float(count) == 2.0 and m_ss.shape == (3,)
    count, m_ss, _, _ = ft.nn.sufficient_statistics(x, [-1])
    assert float(count) == 3.0 and m_ss.shape == (2,)


def test_weighted_cross_entropy_refuses_what_tf_refuses():
    x = ft.constant([1.0, 0.0])
    # A string array leaked numpy's UFuncTypeError (TensorFlow's too): a TypeError naming it.
    for bad in [np.array(["a", "b"]), np.array([b"a"]), "a", None, [1.0, 2.0]]:
        with pytest.raises(TypeError, match="pos_weight must be a number") as info:
            ft.nn.weighted_cross_entropy_with_logits(x, x, bad)
        assert type(info.value) is TypeError
    with pytest.raises(ValueError, match=r"must have the same shape, received \(\[2\] vs \[3\]\)"):
        ft.nn.weighted_cross_entropy_with_logits(ft.ones([3]), x, 2.0)


def test_losses_match_their_formulas():
    logits, labels = rand(3, 4), RNG.uniform(size=(3, 4))
    sig = 1 / (1 + np.exp(-logits))
    want = -(2.5 * labels * np.log(sig) + (1 - labels) * np.log(1 - sig))
    got = ft.nn.weighted_cross_entropy_with_logits(labels, logits, 2.5).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-10)
    big = ft.nn.weighted_cross_entropy_with_logits([1.0], ft.constant([-200.0]), 2.0).numpy()
    assert np.isfinite(big).all()
    # TensorFlow's values for a per-class numpy weight and for TF's own test case in float64.
    x = ft.constant([1.0, 0.0])
    weighted = ft.nn.weighted_cross_entropy_with_logits(x, x, np.array([2.0, 3.0])).numpy()
    np.testing.assert_allclose(weighted, [0.6265234, 0.6931472], rtol=1e-6)
    wide = ft.constant([1.0, 0.0], ft.float64), ft.constant([0.5, -3.0], ft.float64)
    np.testing.assert_allclose(
        ft.nn.weighted_cross_entropy_with_logits(*wide, 0.25).numpy(),
        [0.11851924604502667, 0.048587351573742055],
        rtol=1e-12,
    )
    targets = np.array([0.0, 1.0, 3.0, 7.0])
    log_input = rand(4)
    plain = np.exp(log_input) - log_input * targets
    np.testing.assert_allclose(ft.nn.log_poisson_loss(targets, log_input).numpy(), plain)
    stirling = np.where(
        targets > 1,
        targets * np.log(np.maximum(targets, 1))
        - targets
        + 0.5 * np.log(2 * math.pi * np.maximum(targets, 1)),
        0,
    )
    full = ft.nn.log_poisson_loss(targets, log_input, compute_full_loss=True).numpy()
    np.testing.assert_allclose(full, plain + stirling)
    per_example = rand(6)
    weights = np.abs(rand(6))
    np.testing.assert_allclose(
        ft.nn.compute_average_loss(per_example, weights, global_batch_size=8).numpy(),
        (per_example * weights).sum() / 8,
    )
    np.testing.assert_allclose(ft.nn.compute_average_loss(per_example).numpy(), per_example.mean())
    total = ft.nn.scale_regularization_loss([ft.constant(1.5), ft.constant(2.0)])
    assert float(total) == 3.5


def test_small_ops_match_numpy():
    x = rand(3, 4)
    norm = np.sqrt((x**2).sum(1, keepdims=True))
    np.testing.assert_allclose(ft.nn.l2_normalize(x, axis=1).numpy(), x / norm)
    np.testing.assert_array_equal(ft.nn.l2_normalize(np.zeros((2, 2)), 0).numpy(), 0.0)
    np.testing.assert_allclose(ft.nn.softsign(x).numpy(), x / (1 + np.abs(x)))
    np.testing.assert_array_equal(
        ft.nn.crelu(x, axis=0).numpy(), np.concatenate([np.maximum(x, 0), np.maximum(-x, 0)], 0)
    )
    assert float(ft.nn.zero_fraction([0, 1, 0, 0])) == 0.75
    ids = np.array([[0, 2], [1, 1]])
    np.testing.assert_array_equal(ft.nn.embedding_lookup(x, ids).numpy(), x[ids])
    clipped = ft.nn.embedding_lookup(x, [0, 1], max_norm=0.5).numpy()
    want = x[:2] * np.minimum(1, 0.5 / np.sqrt((x[:2] ** 2).sum(1, keepdims=True)))
    np.testing.assert_allclose(clipped, want)
    lrn = ft.nn.local_response_normalization(rand(1, 2, 2, 5), 1, 2.0, 0.5, 0.75)
    assert lrn.shape == [1, 2, 2, 5]
    y = rand(1, 1, 1, 5)
    sums = np.convolve(y[0, 0, 0] ** 2, np.ones(3), mode="same")
    np.testing.assert_allclose(
        ft.nn.lrn(y, 1, 2.0, 0.5, 0.75).numpy()[0, 0, 0], y[0, 0, 0] / (2 + 0.5 * sums) ** 0.75
    )


def test_space_to_depth_and_back():
    x = rand(2, 4, 6, 3)
    packed = ft.nn.space_to_depth(x, 2).numpy()
    # Each output pixel holds its 2x2 block, row-major, channels last.
    np.testing.assert_array_equal(packed[0, 1, 2], x[0, 2:4, 4:6].reshape(-1))
    np.testing.assert_array_equal(ft.nn.depth_to_space(packed, 2).numpy(), x)
    with pytest.raises(ValueError, match="multiples of block_size"):
        ft.nn.space_to_depth(rand(1, 3, 4, 1), 2)


def test_space_to_batch_matches_numpy_and_inverts():
    x = rand(2, 5, 6, 3)
    out = ft.nn.space_to_batch(x, [2, 3], [[1, 0], [0, 3]]).numpy()
    padded = np.pad(x, [(0, 0), (1, 0), (0, 3), (0, 0)])
    # Batch entry (i, j, n) holds padded[n, i::2, j::3].
    want = np.stack([padded[n, i::2, j::3] for i in range(2) for j in range(3) for n in range(2)])
    np.testing.assert_array_equal(out, want)
    back = ft.batch_to_space(out, [2, 3], [[1, 0], [0, 3]]).numpy()
    np.testing.assert_array_equal(back, x)
    assert ft.space_to_batch_nd is ft.space_to_batch
    with pytest.raises(ValueError, match="multiples of block_shape"):
        ft.nn.space_to_batch(x, [2, 3], [[0, 0], [0, 0]])


def test_max_pool_with_argmax_points_at_the_first_maximum():
    x = np.array([[1.0, 3.0, 3.0], [0.0, 2.0, 3.0]]).reshape(1, 2, 3, 1)
    x = np.concatenate([x, -x], -1)  # two channels
    out, argmax = ft.nn.max_pool_with_argmax(x, 2, 1, "VALID")
    np.testing.assert_array_equal(out.numpy()[0, 0], [[3, 0], [3, -2]])
    # channel 0: both windows first reach 3 at (0, 1): (0 * 3 + 1) * 2 + 0 = 2 (the tie at
    # (0, 2) and (1, 2) loses); channel 1: 0 at (1, 0) -> 7, then -2 at (1, 1) -> 9.
    np.testing.assert_array_equal(argmax.numpy()[0, 0], [[2, 7], [2, 9]])
    values = rand(2, 5, 7, 3)
    out, argmax = ft.nn.max_pool_with_argmax(values, 3, 2, "SAME", include_batch_in_index=True)
    np.testing.assert_array_equal(values.reshape(-1)[argmax.numpy()], out.numpy())
    assert argmax.dtype == ft.int64


def test_top_k_and_in_top_k():
    x = np.array([[1.0, 3.0, 3.0, 2.0], [5.0, 5.0, 5.0, 5.0]])
    values, indices = ft.nn.top_k(x, 3)
    np.testing.assert_array_equal(values.numpy(), [[3, 3, 2], [5, 5, 5]])
    np.testing.assert_array_equal(indices.numpy(), [[1, 2, 3], [0, 1, 2]])  # ties: lower first
    assert indices.dtype == ft.int32
    # TensorFlow returns a namedtuple: programs read `.values` and `.indices`.
    result = ft.math.top_k(x, k=1)
    assert type(result).__name__ == "TopKV2"
    np.testing.assert_array_equal(result.values.numpy(), [[3], [5]])
    np.testing.assert_array_equal(result.indices.numpy(), [[1], [0]])
    # Ties count in favour; a row holding a non-finite prediction is false.
    got = ft.nn.in_top_k([2, 3, 0], np.array([[1.0, 3, 3, 2], [5, 5, 5, 5], [np.nan, 1, 2, 0]]), 1)
    np.testing.assert_array_equal(got.numpy(), [True, True, False])
    low, where = ft.math.approx_min_k(rand(3, 5, 4), 2, reduction_dimension=1)
    assert low.shape == [3, 2, 4] and where.shape == [3, 2, 4]
    with pytest.raises(ValueError, match="k must be in"):
        ft.nn.top_k(x, 5)


def test_composed_ops_reject_bad_arguments_by_name():
    with pytest.raises(ValueError, match="conv1d: input must be 3-D"):
        ft.nn.conv1d(rand(2, 3), rand(1, 1, 1), 1, "SAME")
    with pytest.raises(ValueError, match="depthwise_conv2d: filter's in_channels"):
        ft.nn.depthwise_conv2d(rand(1, 3, 3, 2), rand(2, 2, 3, 1), 1, "SAME")
    with pytest.raises(ValueError, match="pool: pooling_type"):
        ft.nn.pool(rand(1, 4, 4, 1), [2, 2], "MIN")
    with pytest.raises(ValueError, match="stride"):
        ft.nn.conv1d(rand(1, 4, 1), rand(2, 1, 1), 0, "SAME")
    with pytest.raises(ValueError, match="shards"):
        ft.nn.embedding_lookup([rand(2, 2), rand(2, 2)], [0])
    with pytest.raises(ValueError, match="same shape"):
        ft.nn.log_poisson_loss(rand(3), rand(4))


GRADIENTS = {
    "conv1d": (lambda x, f: ft.nn.conv1d(x, f, 2, "SAME"), [(1, 5, 2), (2, 2, 3)]),
    "conv1d_transpose": (
        lambda x, f: ft.nn.conv1d_transpose(x, f, [1, 6, 2], 2, "SAME"),
        [(1, 3, 3), (2, 2, 3)],
    ),
    "conv3d": (lambda x, f: ft.nn.conv3d(x, f, 1, "SAME"), [(1, 3, 3, 2, 1), (2, 2, 1, 1, 2)]),
    "conv3d_transpose": (
        lambda x, f: ft.nn.conv3d_transpose(x, f, [1, 3, 4, 2, 1], 2, "SAME"),
        [(1, 2, 2, 1, 2), (2, 2, 1, 1, 2)],
    ),
    "depthwise_backprop_filter": (
        lambda x, y: ft.nn.depthwise_conv2d_backprop_filter(x, [2, 2, 2, 1], y, 1, "VALID"),
        [(1, 3, 3, 2), (1, 2, 2, 2)],
    ),
    "depthwise_conv2d": (
        lambda x, f: ft.nn.depthwise_conv2d(x, f, [1, 1, 1, 1], "VALID"),
        [(1, 3, 3, 2), (2, 2, 2, 2)],
    ),
    "separable_conv2d": (
        lambda x, f, p: ft.nn.separable_conv2d(x, f, p, 1, "SAME"),
        [(1, 3, 3, 2), (2, 2, 2, 1), (1, 1, 2, 2)],
    ),
    "avg_pool3d": (lambda x: ft.nn.avg_pool3d(x, 2, 1, "SAME"), [(1, 3, 2, 3, 1)]),
    "max_pool1d": (lambda x: ft.nn.max_pool1d(x, 2, 1, "VALID"), [(1, 5, 2)]),
    "l2_normalize": (lambda x: ft.nn.l2_normalize(x, 1), [(2, 3)]),
    "dilation2d": (lambda x, f: ft.nn.dilation2d(x, f, 1, "SAME"), [(1, 3, 4, 2), (2, 2, 2)]),
    "erosion2d": (lambda x, f: ft.nn.erosion2d(x, f, 2, "VALID"), [(1, 4, 5, 1), (2, 3, 1)]),
    "weighted_moments": (
        lambda x, w: ft.concat(ft.nn.weighted_moments(x, [0], ft.abs(w) + 0.5), 0),
        [(3, 2), (3, 1)],
    ),
    "weighted_cross_entropy": (
        lambda labels, logits: ft.nn.weighted_cross_entropy_with_logits(labels, logits, 1.7),
        [(2, 3), (2, 3)],
    ),
    "log_poisson_loss": (
        lambda t, x: ft.nn.log_poisson_loss(ft.abs(t) + 2.0, x, compute_full_loss=True),
        [(4,), (4,)],
    ),
    "softsign_crelu": (lambda x: ft.nn.crelu(ft.nn.softsign(x)), [(2, 3)]),
    "lrn": (lambda x: ft.nn.lrn(x, 1, 1.5, 0.4, 0.6), [(1, 2, 1, 4)]),
    "space_to_depth": (lambda x: ft.nn.space_to_depth(x, 2) * x[:, :2, :2, :1], [(1, 4, 4, 1)]),
    "top_k": (lambda x: ft.nn.top_k(x, 2)[0], [(3, 4)]),
    "embedding_lookup": (lambda p: ft.nn.embedding_lookup(p, [[0, 2], [2, 2]]), [(3, 2)]),
}


@pytest.mark.parametrize("name", sorted(GRADIENTS))
def test_gradients_match_finite_differences(name):
    fn, shapes = GRADIENTS[name]
    check_grad(fn, *[rand(*s) for s in shapes])
