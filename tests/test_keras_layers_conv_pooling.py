"""The 1-D and 3-D convolutions and poolings, the separable and depthwise 1-D convolutions and
Conv1DTranspose: values against a direct numpy convolution/pooling (TF's padding rules),
Keras's weight shapes and output shapes, float64 finite-difference gradients, get_config round
trips and bad arguments."""

import itertools

import numpy as np
import pytest
from test_keras_layers import check_input_gradient, check_weight_gradients, rand
from test_keras_layers_more import conv_transpose_ref

import ferrotape as ft
from ferrotape.keras import layers


def tf_pads(size, window, stride, padding):
    """TF's (before, after) padding and output size of one spatial axis."""
    if padding == "valid":
        return (0, 0), (size - window) // stride + 1
    out = -(-size // stride)
    total = max((out - 1) * stride + window - size, 0)
    return (total // 2, total - total // 2), out


def conv_ref(x, k, strides, padding, dilation):
    """N-d convolution of channels-last ``x`` with ``k`` (spatial..., in, out), directly."""
    rank = x.ndim - 2
    spatial = k.shape[:rank]
    span = [d * (s - 1) + 1 for s, d in zip(spatial, dilation, strict=True)]
    if padding == "causal":
        x = np.pad(x, [(0, 0), (span[0] - 1, 0), (0, 0)])
        padding = "valid"
    pads, outs = zip(
        *(tf_pads(x.shape[1 + i], span[i], strides[i], padding) for i in range(rank)),
        strict=True,
    )
    x = np.pad(x, [(0, 0), *pads, (0, 0)])
    out = np.zeros((x.shape[0], *outs, k.shape[-1]))
    for pos in itertools.product(*map(range, outs)):
        for tap in itertools.product(*map(range, spatial)):
            idx = tuple(
                p * s + t * d for p, s, t, d in zip(pos, strides, tap, dilation, strict=True)
            )
            out[(slice(None), *pos)] += x[(slice(None), *idx)] @ k[tap]
    return out


def depthwise_as_full(k):
    """A depthwise kernel (..., c, m) as the full kernel (..., c, c * m)."""
    *spatial, c, m = k.shape
    full = np.zeros((*spatial, c, c * m))
    for i in range(c):
        full[..., i, i * m : (i + 1) * m] = k[..., i, :]
    return full


def pool_ref(x, window, strides, padding, kind):
    """N-d max/average pooling; `same` padding leaves padded cells out of both."""
    rank = x.ndim - 2
    pads, outs = zip(
        *(tf_pads(x.shape[1 + i], window[i], strides[i], padding) for i in range(rank)),
        strict=True,
    )
    out = np.zeros((x.shape[0], *outs, x.shape[-1]))
    for pos in itertools.product(*map(range, outs)):
        box = tuple(
            slice(max(p * s - b, 0), min(p * s - b + w, n))
            for p, s, (b, _), w, n in zip(pos, strides, pads, window, x.shape[1:-1], strict=True)
        )
        cells = x[(slice(None), *box)].reshape(x.shape[0], -1, x.shape[-1])
        out[(slice(None), *pos)] = cells.max(1) if kind == "max" else cells.mean(1)
    return out


@pytest.fixture
def float64():
    """Layers made inside the test compute in float64 (for finite differences)."""
    saved = ft.keras.backend.floatx()
    ft.keras.backend.set_floatx("float64")
    yield
    ft.keras.backend.set_floatx(saved)


# ------------------------------------------------------------------------- convolutions


@pytest.mark.parametrize(
    "kernel_size, strides, padding, dilation",
    [
        (3, 1, "valid", 1),
        (3, 2, "same", 1),
        (4, 3, "same", 1),
        (3, 1, "causal", 2),
        (2, 1, "same", 3),
    ],
)
def test_conv1d_matches_numpy(kernel_size, strides, padding, dilation):
    layer = layers.Conv1D(
        3,
        kernel_size,
        strides=strides,
        padding=padding,
        dilation_rate=dilation,
        bias_initializer="ones",
        dtype="float64",
    )
    x = rand(2, 9, 2)
    y = layer(x).numpy()
    assert layer.kernel.shape.as_list() == [kernel_size, 2, 3]
    expected = conv_ref(x, layer.kernel.numpy(), (strides,), padding, (dilation,)) + 1.0
    np.testing.assert_allclose(y, expected, rtol=1e-10, atol=1e-12)
    if padding == "causal":
        assert y.shape[1] == 9  # causal keeps the length, and step t sees only inputs <= t
        x2 = x.copy()
        x2[:, 5:] += 1.0
        np.testing.assert_allclose(layer(x2).numpy()[:, :5], y[:, :5])


@pytest.mark.parametrize(
    "kernel_size, strides, padding, dilation",
    [
        (3, 1, "valid", 1),
        ((3, 2, 3), (2, 1, 2), "same", 1),
        (2, 1, "same", 2),
        (2, 1, "same", 1),
        ((1, 3, 2), 2, "valid", 1),
    ],
)
def test_conv3d_matches_numpy(kernel_size, strides, padding, dilation):
    layer = layers.Conv3D(
        2,
        kernel_size,
        strides=strides,
        padding=padding,
        dilation_rate=dilation,
        bias_initializer="ones",
        dtype="float64",
    )
    x = rand(2, 5, 6, 4, 2)
    y = layer(x).numpy()
    expected = conv_ref(x, layer.kernel.numpy(), layer.strides, padding, layer.dilation_rate)
    np.testing.assert_allclose(y, expected + 1.0, rtol=1e-10, atol=1e-12)
    assert layer.kernel.shape.as_list() == [*layer.kernel_size, 2, 2]


def test_depthwise_conv1d_matches_numpy():
    layer = layers.DepthwiseConv1D(
        3, strides=2, padding="same", depth_multiplier=2, dtype="float64"
    )
    x = rand(2, 9, 3)
    y = layer(x).numpy()
    assert [w.shape.as_list() for w in layer.weights] == [[3, 3, 2], [6]]
    full = depthwise_as_full(layer.kernel.numpy())
    np.testing.assert_allclose(y, conv_ref(x, full, (2,), "same", (1,)), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("rank", [1, 2])
def test_separable_convs_are_depthwise_then_pointwise(rank):
    cls = layers.SeparableConv1D if rank == 1 else layers.SeparableConv2D
    layer = cls(4, 3, padding="same", depth_multiplier=2, bias_initializer="ones", dtype="float64")
    x = rand(2, *(7,) * rank, 3)
    y = layer(x).numpy()
    depthwise, pointwise, _ = (w.numpy() for w in layer.weights)
    assert [w.shape.as_list() for w in layer.weights] == [
        [*(3,) * rank, 3, 2],
        [*(1,) * rank, 6, 4],
        [4],
    ]
    assert [w.name.split("/")[-1].split(":")[0] for w in layer.weights] == [
        "depthwise_kernel",
        "pointwise_kernel",
        "bias",
    ]
    mid = conv_ref(x, depthwise_as_full(depthwise), (1,) * rank, "same", (1,) * rank)
    expected = conv_ref(mid, pointwise, (1,) * rank, "valid", (1,) * rank) + 1.0
    np.testing.assert_allclose(y, expected, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize(
    "kernel_size, strides, padding, length", [(3, 2, "valid", 11), (4, 3, "same", 15)]
)
def test_conv1d_transpose_is_conv2d_transpose_of_a_row(kernel_size, strides, padding, length):
    layer = layers.Conv1DTranspose(
        4, kernel_size, strides=strides, padding=padding, dtype="float64"
    )
    x = rand(2, 5, 3)
    y = layer(x).numpy()
    assert y.shape == (2, length, 4)
    assert layer.kernel.shape.as_list() == [kernel_size, 4, 3]
    k = layer.kernel.numpy()[None]
    expected = conv_transpose_ref(x[:, None], k, (1, strides), padding, (1, length))[:, 0]
    np.testing.assert_allclose(y, expected, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize(
    "layer, shape",
    [
        (
            lambda: layers.Conv1D(2, 3, padding="causal", dilation_rate=2, activation="tanh"),
            (2, 6, 2),
        ),
        (lambda: layers.Conv3D(2, 2, strides=(2, 1, 1), padding="same"), (1, 3, 3, 3, 2)),
        (lambda: layers.DepthwiseConv1D(3, depth_multiplier=2), (2, 5, 2)),
        (lambda: layers.SeparableConv1D(3, 2, depth_multiplier=2), (2, 5, 2)),
        (lambda: layers.SeparableConv2D(3, 2, padding="same"), (1, 4, 4, 2)),
        (lambda: layers.Conv1DTranspose(2, 3, strides=2, padding="same"), (2, 4, 2)),
    ],
)
def test_convolution_gradients(layer, shape):
    with (
        ft.keras.backend.floatx_scope("float64")
        if hasattr(ft.keras.backend, "floatx_scope")
        else _float64()
    ):
        built = layer()
    x = rand(*shape)
    check_input_gradient(built, x)
    check_weight_gradients(built, x)


class _float64:
    def __enter__(self):
        self.saved = ft.keras.backend.floatx()
        ft.keras.backend.set_floatx("float64")

    def __exit__(self, *exc):
        ft.keras.backend.set_floatx(self.saved)


# ------------------------------------------------------------------------------ pooling


@pytest.mark.parametrize("kind", ["max", "avg"])
@pytest.mark.parametrize(
    "window, strides, padding", [(2, None, "valid"), (3, 2, "same"), (3, 1, "valid")]
)
def test_pooling1d_matches_numpy(kind, window, strides, padding):
    cls = layers.MaxPooling1D if kind == "max" else layers.AveragePooling1D
    x = rand(2, 10, 3)
    y = cls(window, strides=strides, padding=padding, dtype="float64")(x).numpy()
    expected = pool_ref(x, (window,), (strides or window,), padding, kind)
    np.testing.assert_allclose(y, expected, rtol=1e-12)


@pytest.mark.parametrize("kind", ["max", "avg"])
@pytest.mark.parametrize(
    "window, strides, padding",
    [(2, None, "valid"), ((3, 2, 2), (2, 1, 2), "same"), ((2, 3, 1), 1, "valid")],
)
def test_pooling3d_matches_numpy(kind, window, strides, padding):
    cls = layers.MaxPooling3D if kind == "max" else layers.AveragePooling3D
    layer = cls(window, strides=strides, padding=padding, dtype="float64")
    x = rand(2, 5, 6, 7, 2)
    expected = pool_ref(x, layer.pool_size, layer.strides, padding, kind)
    np.testing.assert_allclose(layer(x).numpy(), expected, rtol=1e-12)


def test_global_pooling_1d_3d_and_the_masked_average():
    x = rand(2, 4, 3)
    np.testing.assert_allclose(layers.GlobalMaxPooling1D(dtype="float64")(x).numpy(), x.max(1))
    np.testing.assert_allclose(
        layers.GlobalAveragePooling1D(keepdims=True, dtype="float64")(x).numpy(),
        x.mean(1, keepdims=True),
    )
    mask = np.array([[1, 1, 0, 0], [1, 1, 1, 1]], bool)
    masked = layers.GlobalAveragePooling1D(dtype="float64")(x, mask=ft.constant(mask)).numpy()
    np.testing.assert_allclose(masked, [x[0, :2].mean(0), x[1].mean(0)])
    v = rand(2, 3, 4, 5, 2)
    np.testing.assert_allclose(
        layers.GlobalAveragePooling3D(dtype="float64")(v).numpy(), v.mean((1, 2, 3))
    )
    np.testing.assert_allclose(
        layers.GlobalMaxPooling3D(keepdims=True, dtype="float64")(v).numpy(),
        v.max((1, 2, 3), keepdims=True),
    )


@pytest.mark.parametrize(
    "layer, shape",
    [
        (lambda: layers.MaxPooling1D(3, 2, padding="same"), (2, 7, 2)),
        (lambda: layers.AveragePooling1D(3, 2, padding="same"), (2, 7, 2)),
        (lambda: layers.MaxPooling3D((2, 2, 1), padding="same"), (1, 3, 3, 2, 2)),
        (lambda: layers.AveragePooling3D(2, 1, padding="same"), (1, 3, 3, 2, 2)),
        (lambda: layers.GlobalAveragePooling3D(), (2, 2, 2, 2, 2)),
    ],
)
def test_pooling_gradients(layer, shape):
    with _float64():
        built = layer()
    check_input_gradient(built, rand(*shape))


def test_aliases_are_the_same_classes():
    assert layers.MaxPool1D is layers.MaxPooling1D and layers.AvgPool3D is layers.AveragePooling3D
    assert layers.GlobalAvgPool1D is layers.GlobalAveragePooling1D
    assert layers.GlobalMaxPool3D is layers.GlobalMaxPooling3D
    assert layers.Convolution1D is layers.Conv1D and layers.Convolution3D is layers.Conv3D
    assert layers.Convolution2D is layers.Conv2D
    assert layers.Convolution1DTranspose is layers.Conv1DTranspose
    assert layers.SeparableConvolution2D is layers.SeparableConv2D


@pytest.mark.parametrize(
    "make",
    [
        lambda: layers.Conv1D(3, 2, strides=2, padding="causal"),
        lambda: layers.Conv3D(3, (1, 2, 3), padding="same"),
        lambda: layers.DepthwiseConv1D(2, depth_multiplier=3),
        lambda: layers.SeparableConv1D(3, 2, depth_multiplier=2),
        lambda: layers.SeparableConv2D(3, 2),
        lambda: layers.Conv1DTranspose(3, 2, strides=2),
        lambda: layers.MaxPooling1D(3, 1, padding="same"),
        lambda: layers.AveragePooling3D((1, 2, 2)),
        lambda: layers.GlobalMaxPooling1D(keepdims=True),
    ],
)
def test_get_config_round_trips(make):
    layer = make()
    config = layer.get_config()
    clone = type(layer).from_config(config)
    assert clone.get_config() == config


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: layers.Conv1D(0, 3), "filters"),
        (lambda: layers.Conv1D(2, (3, 3)), "kernel_size"),
        (lambda: layers.Conv1D(2, 3, strides=2, dilation_rate=2), "dilation_rate"),
        (lambda: layers.Conv1D(2, 3, groups=2), "groups"),
        (lambda: layers.Conv3D(2, (3, 3)), "kernel_size"),
        (lambda: layers.Conv2D(2, 3, padding="causal"), "padding"),
        (lambda: layers.SeparableConv1D(2, 3, padding="causal"), "padding"),
        (lambda: layers.DepthwiseConv1D(3, depth_multiplier=0), "depth_multiplier"),
        (lambda: layers.SeparableConv2D(2, 3, depth_multiplier=1.5), "depth_multiplier"),
        (lambda: layers.Conv1DTranspose(2, 3, output_padding=1), "output_padding"),
        (lambda: layers.MaxPooling1D(0), "pool_size"),
        (lambda: layers.AveragePooling3D((2, 2)), "pool_size"),
        (lambda: layers.MaxPooling3D(2, padding="full"), "padding"),
        (lambda: layers.GlobalAveragePooling1D(data_format="channels_first"), "data_format"),
    ],
)
def test_bad_arguments_raise_value_error(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_inputs_of_the_wrong_rank_or_size_raise_value_error():
    with pytest.raises(ValueError, match="expected ndim=3"):
        layers.Conv1D(2, 3)(ft.ones([2, 5, 5, 1]))
    with pytest.raises(ValueError, match="expected ndim=5"):
        layers.MaxPooling3D()(ft.ones([2, 4, 4, 1]))
    with pytest.raises(ValueError, match="depth"):
        layers.Conv3D(2, 3)(ft.ones([1, 2, 5, 5, 1]))
    with pytest.raises(TypeError):
        layers.AveragePooling1D()  # Keras has no default window for average pooling


# ------------------------------------------------------------------- Conv3DTranspose


def conv_transpose_nd_ref(x, k, strides, padding):
    """Each input element scatters ``x[n, pos] @ k[tap].T`` to ``pos * stride + tap``; the
    full result is cut as TF pads the matching convolution (Keras's output sizes)."""
    spatial_in, taps = x.shape[1:-1], k.shape[:3]
    full_sizes = [(n - 1) * s + t for n, s, t in zip(spatial_in, strides, taps, strict=True)]
    full = np.zeros((x.shape[0], *full_sizes, k.shape[3]))
    for pos in itertools.product(*map(range, spatial_in)):
        for tap in itertools.product(*map(range, taps)):
            at = tuple(p * s + t for p, s, t in zip(pos, strides, tap, strict=True))
            full[(slice(None), *at)] += x[(slice(None), *pos)] @ k[tap].T
    outs = [
        n * s if padding == "same" else n * s + max(t - s, 0)
        for n, s, t in zip(spatial_in, strides, taps, strict=True)
    ]
    out = np.zeros((x.shape[0], *outs, k.shape[3]))
    starts = [max(f - o, 0) // 2 for f, o in zip(full_sizes, outs, strict=True)]
    box = tuple(
        slice(s, s + min(o, f - s)) for s, o, f in zip(starts, outs, full_sizes, strict=True)
    )
    sizes = tuple(slice(0, b.stop - b.start) for b in box)
    out[(slice(None), *sizes)] = full[(slice(None), *box)]
    return out


@pytest.mark.parametrize(
    "kernel_size, strides, padding",
    [
        (3, 1, "valid"),
        (3, 2, "same"),
        ((2, 3, 1), (3, 2, 1), "valid"),
        ((4, 3, 3), (3, 1, 2), "same"),
        (1, 3, "valid"),
    ],
)
def test_conv3d_transpose_matches_numpy(kernel_size, strides, padding):
    layer = layers.Conv3DTranspose(
        2, kernel_size, strides=strides, padding=padding, bias_initializer="ones", dtype="float64"
    )
    x = rand(1, 3, 4, 2, 2)
    y = layer(x).numpy()
    assert layer.kernel.shape.as_list() == [*layer.kernel_size, 2, 2]
    expected = conv_transpose_nd_ref(x, layer.kernel.numpy(), layer.strides, padding) + 1.0
    np.testing.assert_allclose(y, expected, rtol=1e-10, atol=1e-12)


def test_conv3d_transpose_gradients_and_config(float64):
    layer = layers.Conv3DTranspose(2, 2, strides=(2, 1, 1), padding="same", activation="tanh")
    x = rand(1, 2, 2, 2, 1)
    check_input_gradient(layer, x)
    check_weight_gradients(layer, x)
    config = layer.get_config()
    assert layers.Conv3DTranspose.from_config(config).get_config() == config
    assert layers.Convolution3DTranspose is layers.Conv3DTranspose
    with pytest.raises(ValueError, match="kernel_size"):
        layers.Conv3DTranspose(2, (2, 2))
