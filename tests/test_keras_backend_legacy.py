"""ft.keras.backend's TF-Keras functions (keras.src.legacy.backend) and dtype helpers, against
numpy transcriptions of TF-Keras's semantics (checked against TF 2.21 when written)."""

import numpy as np
import pytest
from test_keras_layers import fd_grad

import ferrotape as ft
from ferrotape.keras import backend as K

RNG = np.random.default_rng(5)
X = RNG.standard_normal((2, 3, 4))
M = RNG.standard_normal((3, 4))


def np_of(t):
    return t.numpy() if hasattr(t, "numpy") else np.asarray(t)


def test_element_wise_and_reductions():
    x = ft.constant(X)
    np.testing.assert_allclose(np_of(K.sqrt(x)), np.sqrt(np.maximum(X, 0)))
    np.testing.assert_allclose(np_of(K.clip(x, 0.5, 0.1)), np.clip(X, 0.5, 0.5))
    np.testing.assert_allclose(np_of(K.clip(x, None, 0.2)), np.minimum(X, 0.2))
    np.testing.assert_allclose(np_of(K.pow(K.abs(x), 1.5)), np.abs(X) ** 1.5)
    for name, ref in [("sum", np.sum), ("prod", np.prod), ("max", np.max), ("min", np.min),
                      ("mean", np.mean), ("std", np.std), ("var", np.var)]:  # fmt: skip
        fn = getattr(K, name)
        np.testing.assert_allclose(np_of(fn(x)), ref(X), rtol=1e-12)
        np.testing.assert_allclose(
            np_of(fn(x, axis=1, keepdims=True)), ref(X, axis=1, keepdims=True), rtol=1e-12
        )
    # booleans average as floatx
    mean_bool = K.mean(ft.constant(X > 0), axis=1)
    assert mean_bool.dtype == ft.float32
    np.testing.assert_allclose(np_of(mean_bool), (X > 0).mean(1), rtol=1e-6)
    assert np_of(K.all(ft.constant(X), axis=0)).dtype == bool
    assert np_of(K.any(ft.constant(X > 1))) == (X > 1).any()
    assert np_of(K.argmax(x)).tolist() == X.argmax(-1).tolist()
    assert np_of(K.argmin(x, axis=1)).tolist() == X.argmin(1).tolist()
    unit = np_of(K.l2_normalize(ft.constant(M), axis=1))
    np.testing.assert_allclose(unit, M / np.linalg.norm(M, axis=1, keepdims=True))


def test_shapes_and_arrangement():
    x = ft.constant(X)
    assert K.batch_flatten(x).shape == (2, 12) and K.flatten(x).shape == (24,)
    assert np_of(K.shape(x)).tolist() == [2, 3, 4]
    np.testing.assert_array_equal(np_of(K.repeat(ft.constant(M), 2)), np.repeat(M[:, None], 2, 1))
    np.testing.assert_array_equal(np_of(K.repeat_elements(x, 2, 1)), np.repeat(X, 2, axis=1))
    np.testing.assert_array_equal(np_of(K.reverse(x, [0, 2])), X[::-1, :, ::-1])
    np.testing.assert_array_equal(np_of(K.permute_dimensions(x, (2, 0, 1))), X.transpose(2, 0, 1))
    np.testing.assert_array_equal(np_of(K.concatenate([x, x])), np.concatenate([X, X], -1))
    np.testing.assert_array_equal(np_of(K.tile(ft.constant(M[0]), 2)), np.tile(M[0], 2))
    assert np_of(K.arange(5)).tolist() == [0, 1, 2, 3, 4] and K.arange(5).dtype == ft.int32
    assert np_of(K.arange(-3)).tolist() == []
    assert np_of(K.arange(2, 9, 3, dtype="float32")).tolist() == [2.0, 5.0, 8.0]
    np.testing.assert_array_equal(np_of(K.one_hot(ft.constant([0, 2]), 3)), np.eye(3)[[0, 2]])
    with pytest.raises(ValueError, match="rank 2"):
        K.repeat(x, 2)


def np_batch_dot(x, y, axes):
    """TF-Keras's batch_dot, sample by sample, with numpy's tensordot."""
    out = np.stack(
        [np.tensordot(a, b, axes=(axes[0] - 1, axes[1] - 1)) for a, b in zip(x, y, strict=True)]
    )
    return out[:, None] if out.ndim == 1 else out


@pytest.mark.parametrize(
    "x_shape, y_shape, axes, default",
    [
        ((2, 3), (2, 3), (1, 1), None),
        ((2, 3, 4), (2, 4, 5), (2, 1), None),
        ((2, 3, 4), (2, 4), (2, 1), None),
        ((2, 3, 4, 5), (2, 5, 6), (3, 1), None),
        ((2, 3, 4), (2, 5, 4), (2, 2), (2, 2)),
        ((2, 3, 4), (2, 3, 5), (1, 1), 1),
        ((2, 3, 4, 5), (2, 4, 6, 7), (2, 1), (2, 1)),
    ],
)
def test_batch_dot(x_shape, y_shape, axes, default):
    x, y = RNG.standard_normal(x_shape), RNG.standard_normal(y_shape)
    got = np_of(K.batch_dot(ft.constant(x), ft.constant(y), default))
    np.testing.assert_allclose(got, np_batch_dot(x, y, axes), rtol=1e-12)


def test_batch_dot_errors_and_dot():
    with pytest.raises(ValueError, match="axis 0"):
        K.batch_dot(ft.ones((2, 3)), ft.ones((2, 3)), 0)
    with pytest.raises(ValueError, match="different batch sizes"):
        K.batch_dot(ft.ones((2, 3)), ft.ones((3, 3)))
    y = RNG.standard_normal((5, 4, 2))
    np.testing.assert_allclose(np_of(K.dot(ft.constant(X), ft.constant(y))), np.dot(X, y))
    np.testing.assert_allclose(np_of(K.dot(ft.constant(M), ft.constant(M.T))), M @ M.T)


def test_switch_folds_and_variables():
    x = ft.constant(X)
    np.testing.assert_array_equal(np_of(K.switch(x > 0, x, -x)), np.abs(X))
    assert K.switch(ft.constant(True), lambda: 1.0, lambda: 2.0) == 1.0
    cond = ft.constant(X[:, :, 0] > 0)  # rank 2 against rank 3: padded with a trailing 1
    np.testing.assert_array_equal(np_of(K.switch(cond, x, -x)), np.where(X[:, :, :1] > 0, X, -X))
    m = ft.constant(M)
    np.testing.assert_allclose(np_of(K.map_fn(lambda r: r * 2.0, m)), M * 2)
    np.testing.assert_allclose(np_of(K.foldl(lambda a, b: a + b, m)), M.sum(0))
    folded = K.foldr(lambda a, b: a * 2.0 + b, m, ft.zeros(4, dtype="float64"))
    np.testing.assert_allclose(np_of(folded), 4 * M[2] + 2 * M[1] + M[0])
    assert isinstance(K.zeros((2, 2)), ft.Variable) and not isinstance(K.ones((0, 2)), ft.Variable)
    assert K.eye(3).dtype == ft.float32 and isinstance(K.eye(3), ft.Variable)
    v = K.variable([1.0, 2.0])
    K.moving_average_update(v, [3.0, 5.0], 0.9)
    np.testing.assert_allclose(v.numpy(), [1.2, 2.3], rtol=1e-6)
    K.update_add(v, [1.0, 1.0])
    K.update_sub(v, [0.5, 0.5])
    np.testing.assert_allclose(K.eval(v), [1.7, 2.8], rtol=1e-6)
    with pytest.raises(RuntimeError, match="GradientTape"):
        K.gradients(v, [v])


def test_relu_and_hard_sigmoid_keep_tf_keras_semantics():
    x = ft.constant(X)
    expected = np.where(X > 0.2, X, 0.0)
    expected = np.clip(expected, 0, 0.5) - 0.1 * np.maximum(0.2 - X, 0)
    np.testing.assert_allclose(np_of(K.relu(x, 0.1, 0.5, 0.2)), expected)
    np.testing.assert_allclose(np_of(K.relu(x, 0.0, 6)), np.clip(X, 0, 6))
    np.testing.assert_allclose(np_of(K.hard_sigmoid(x)), np.clip(0.2 * X + 0.5, 0, 1))
    with pytest.raises(ValueError, match="1D"):
        K.softmax(ft.constant([1.0, 2.0]))
    e = np.exp(X - X.max(axis=(1, 2), keepdims=True))
    np.testing.assert_allclose(np_of(K.softmax(x, (1, 2))), e / e.sum(axis=(1, 2), keepdims=True))


def test_cross_entropies_are_element_wise_or_per_sample():
    eps = 1e-7
    p = RNG.uniform(0.05, 0.95, (3, 4))
    t = (RNG.random((3, 4)) > 0.5).astype(np.float64)
    bce = -(t * np.log(p + eps) + (1 - t) * np.log(1 - p + eps))
    np.testing.assert_allclose(np_of(K.binary_crossentropy(ft.constant(t), ft.constant(p))), bce)
    p_t = t * p + (1 - t) * (1 - p)
    np.testing.assert_allclose(
        np_of(K.binary_focal_crossentropy(ft.constant(t), ft.constant(p))), (1 - p_t) ** 2 * bce
    )
    one_hot = np.eye(4)[[0, 3, 1]]
    cce = -(one_hot * np.log(p / p.sum(1, keepdims=True))).sum(1)
    np.testing.assert_allclose(
        np_of(K.categorical_crossentropy(ft.constant(one_hot), ft.constant(p))), cce
    )
    sparse = K.sparse_categorical_crossentropy(ft.constant([[0], [3], [1]]), ft.constant(p))
    log_softmax = np.log(p) - np.log(p.sum(1, keepdims=True))
    np.testing.assert_allclose(np_of(sparse), -log_softmax[[0, 1, 2], [0, 3, 1]])
    ignored = K.sparse_categorical_crossentropy(
        ft.constant([0, 3, 1]), ft.constant(p), ignore_class=3
    )
    assert np_of(ignored)[1] == 0.0
    with pytest.raises(ValueError, match="incompatible"):
        K.categorical_crossentropy(ft.ones((3, 2)), ft.ones((3, 4)))


def test_convolutions_pooling_padding_resizing():
    img = RNG.standard_normal((2, 5, 6, 3))
    kernel = RNG.standard_normal((3, 2, 3, 4))
    direct = np_of(K.conv2d(ft.constant(img), ft.constant(kernel)))
    expected = np.zeros((2, 3, 5, 4))
    for i in range(3):
        for j in range(5):
            expected[:, i, j] = np.einsum("nabc,abcd->nd", img[:, i : i + 3, j : j + 2], kernel)
    np.testing.assert_allclose(direct, expected, rtol=1e-10)
    seq = RNG.standard_normal((2, 7, 3))
    k1 = RNG.standard_normal((3, 3, 4))
    causal = np_of(K.conv1d(ft.constant(seq), ft.constant(k1), 1, "causal", None, 2))
    padded = np.pad(seq, ((0, 0), (4, 0), (0, 0)))
    expected = np.stack(
        [np.einsum("nkc,kcd->nd", padded[:, [t, t + 2, t + 4]], k1) for t in range(7)], 1
    )
    np.testing.assert_allclose(causal, expected, rtol=1e-10)
    pooled = np_of(K.pool2d(ft.constant(img), (2, 2), (2, 2), pool_mode="avg"))
    np.testing.assert_allclose(pooled, img[:, :4].reshape(2, 2, 2, 3, 2, 3).mean((2, 4)))
    assert K.spatial_2d_padding(ft.constant(img), ((1, 0), (2, 1))).shape == (2, 6, 9, 3)
    assert K.temporal_padding(ft.constant(seq), (1, 2)).shape == (2, 10, 3)
    resized = np_of(K.resize_images(ft.constant(img), 2, 3, "channels_last"))
    np.testing.assert_array_equal(resized, img.repeat(2, 1).repeat(3, 2))
    with pytest.raises(ValueError, match="channels_last"):
        K.conv2d(ft.constant(img), ft.constant(kernel), data_format="channels_first")
    with pytest.raises(ValueError, match="nearest"):
        K.resize_images(ft.constant(img), 2, 2, "channels_last", interpolation="bilinear")


def test_gradients_flow_through_batch_dot_and_reverse():
    x0, y0 = RNG.standard_normal((2, 3, 4)), RNG.standard_normal((2, 4, 2))
    w = RNG.standard_normal((2, 3, 2))

    def value(xv):
        return float(ft.reduce_sum(K.reverse(K.batch_dot(ft.constant(xv), ft.constant(y0)), 1) * w))

    x = ft.constant(x0)
    with ft.GradientTape() as tape:
        tape.watch(x)
        y = ft.reduce_sum(K.reverse(K.batch_dot(x, ft.constant(y0)), 1) * w)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), fd_grad(value, x0), rtol=1e-6)


def test_dtype_helpers():
    assert K.standardize_dtype(None) == "float32" and K.standardize_dtype(int) == "int64"
    assert K.standardize_dtype(np.float64) == "float64" and K.standardize_dtype(ft.int32) == "int32"
    with pytest.raises(ValueError, match="Invalid dtype"):
        K.standardize_dtype("float")
    assert K.is_float_dtype("bfloat16") and not K.is_float_dtype("int8")
    assert K.is_int_dtype("uint8") and not K.is_int_dtype("bool")
    # TF 2.21's answers
    cases = {
        ("int32", int): "int32",
        ("int8", float): "float32",
        ("uint8", "int8"): "int16",
        ("uint64", "int64"): "float32",
        ("uint32", "int32"): "int64",
        ("float16", "bfloat16"): "float32",
        ("bool", int): "int32",
        ("float16", float): "float16",
        ("float64", "int8"): "float64",
        (): "float32",
    }
    for args, expected in cases.items():
        assert K.result_type(*args) == expected, args


def test_cumulative_sums_and_products_with_gradients():
    x0 = RNG.standard_normal((2, 3, 4))
    for axis in (0, 1, 2):
        np.testing.assert_allclose(np_of(K.cumsum(ft.constant(x0), axis)), np.cumsum(x0, axis))
        np.testing.assert_allclose(np_of(K.cumprod(ft.constant(x0), axis)), np.cumprod(x0, axis))
    w = RNG.standard_normal((2, 3, 4))

    def value(xv):
        return float(ft.reduce_sum(K.cumprod(ft.constant(xv), 1) * w))

    x = ft.constant(x0)
    with ft.GradientTape() as tape:
        tape.watch(x)
        y = ft.reduce_sum(K.cumprod(x, 1) * w)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), fd_grad(value, x0), rtol=1e-6)


def np_rnn(x, w, u, mask=None, backwards=False, zero_masked=False):
    """A tanh RNN over (batch, time, features), masked steps keeping the state."""
    h = np.zeros((x.shape[0], u.shape[0]))
    outputs, previous = [], np.zeros_like(h)
    steps = range(x.shape[1] - 1, -1, -1) if backwards else range(x.shape[1])
    for t in steps:
        new = np.tanh(x[:, t] @ w + h @ u)
        keep = np.ones((x.shape[0], 1), bool) if mask is None else mask[:, t : t + 1]
        h = np.where(keep, new, h)
        out = np.where(keep, new, 0.0 if zero_masked else previous)
        outputs.append(out)
        previous = out
    return outputs[-1], np.stack(outputs, 1), h


@pytest.mark.parametrize(
    "kwargs",
    [{}, {"go_backwards": True}, {"mask": True}, {"mask": True, "zero_output_for_mask": True}],
)
def test_rnn_threads_states_through_the_steps(kwargs):
    x = RNG.standard_normal((2, 5, 3))
    w, u = RNG.standard_normal((3, 4)), RNG.standard_normal((4, 4)) * 0.5
    mask = np.array([[1, 1, 0, 1, 0], [1, 0, 1, 1, 1]], bool)

    def step(inputs, states):
        h = ft.tanh(ft.matmul(inputs, w) + ft.matmul(states[0], u))
        return h, [h]

    call = dict(kwargs)
    if call.get("mask"):
        call["mask"] = ft.constant(mask)
    last, outputs, states = K.rnn(step, ft.constant(x), [ft.zeros((2, 4), "float64")], **call)
    expected = np_rnn(
        x,
        w,
        u,
        mask if kwargs.get("mask") else None,
        kwargs.get("go_backwards", False),
        kwargs.get("zero_output_for_mask", False),
    )
    np.testing.assert_allclose(np_of(last), expected[0], rtol=1e-12)
    np.testing.assert_allclose(np_of(outputs), expected[1], rtol=1e-12)
    np.testing.assert_allclose(np_of(states[0]), expected[2], rtol=1e-12)
    only_last = K.rnn(step, ft.constant(x), [ft.zeros((2, 4), "float64")], return_all_outputs=False)
    assert only_last[1].shape == (2, 1, 4)
    with pytest.raises(ValueError, match="rank >= 3"):
        K.rnn(step, ft.ones((2, 3)), [ft.zeros((2, 4))])


def test_loss_reduction_names():
    from ferrotape.keras import losses

    assert losses.Reduction.all() == ("auto", "none", "sum", "sum_over_batch_size")
    losses.Reduction.validate("sum")
    with pytest.raises(ValueError, match="Invalid Reduction Key"):
        losses.Reduction.validate("mean_of_means")


def test_depthwise_and_separable_convolutions():
    img = RNG.standard_normal((2, 5, 4, 3))
    depthwise = RNG.standard_normal((3, 2, 3, 2))
    pointwise = RNG.standard_normal((1, 1, 6, 4))
    got = np_of(K.depthwise_conv2d(ft.constant(img), ft.constant(depthwise)))
    expected = np.zeros((2, 3, 3, 6))
    for i in range(3):
        for j in range(3):
            patch = img[:, i : i + 3, j : j + 2]  # (n, 3, 2, channels)
            # output channel c * multiplier + m
            expected[:, i, j] = np.einsum("nabc,abcm->ncm", patch, depthwise).reshape(2, 6)
    np.testing.assert_allclose(got, expected, rtol=1e-10)
    separable = np_of(
        K.separable_conv2d(ft.constant(img), ft.constant(depthwise), ft.constant(pointwise))
    )
    np.testing.assert_allclose(separable, expected @ pointwise[0, 0], rtol=1e-10)
    with pytest.raises(ValueError, match="input channels"):
        K.depthwise_conv2d(ft.constant(img), ft.ones((3, 3, 2, 1), dtype="float64"))


def test_conv3d_and_pool3d():
    vol = RNG.standard_normal((2, 4, 5, 3, 2))
    kernel = RNG.standard_normal((2, 3, 2, 2, 3))
    got = np_of(K.conv3d(ft.constant(vol), ft.constant(kernel)))
    expected = np.zeros((2, 3, 3, 2, 3))
    for d in range(3):
        for i in range(3):
            for j in range(2):
                patch = vol[:, d : d + 2, i : i + 3, j : j + 2]
                expected[:, d, i, j] = np.einsum("nabcx,abcxy->ny", patch, kernel)
    np.testing.assert_allclose(got, expected, rtol=1e-10)
    # "same" keeps the size at stride 1: TF pads the depth (smaller half before)
    assert K.conv3d(ft.constant(vol), ft.constant(kernel), padding="same").shape == (2, 4, 5, 3, 3)
    pooled = np_of(K.pool3d(ft.constant(vol), (2, 2, 2), (2, 2, 1)))
    windows = np.stack(
        [
            vol[:, a : a + 4 : 2, b : b + 4 : 2, c : c + 2]
            for a in (0, 1)
            for b in (0, 1)
            for c in (0, 1)
        ]
    )
    np.testing.assert_allclose(pooled, windows.max(0), rtol=1e-12)
    averaged = np_of(K.pool3d(ft.constant(vol), (2, 2, 2), (2, 2, 1), pool_mode="avg"))
    np.testing.assert_allclose(averaged, windows.mean(0), rtol=1e-12)
    with pytest.raises(ValueError, match="pooling mode"):
        K.pool3d(ft.constant(vol), (2, 2, 2), pool_mode="sum")

    w = RNG.standard_normal(got.shape)

    def value(kv):
        return float(ft.reduce_sum(K.conv3d(ft.constant(vol), ft.constant(kv)) * w))

    k = ft.constant(kernel)
    with ft.GradientTape() as tape:
        tape.watch(k)
        y = ft.reduce_sum(K.conv3d(ft.constant(vol), k) * w)
    np.testing.assert_allclose(tape.gradient(y, k).numpy(), fd_grad(value, kernel), rtol=1e-6)
