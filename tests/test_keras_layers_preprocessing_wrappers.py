"""CategoryEncoding, Discretization, ThresholdedReLU, TimeDistributed (and Wrapper's config)
and ``layers.serialize``/``deserialize``: values against numpy and hand-computed cases,
gradients against float64 finite differences where there are any, get_config round trips and
bad arguments."""

import numpy as np
import pytest
from test_keras_layers import check_input_gradient, check_weight_gradients, rand

import ferrotape as ft
from ferrotape.keras import layers


@pytest.mark.parametrize(
    "mode, x, expected",
    [
        ("one_hot", [1, 3], [[0, 1, 0, 0], [0, 0, 0, 1]]),
        ("one_hot", [[1], [3]], [[0, 1, 0, 0], [0, 0, 0, 1]]),
        ("one_hot", 2, [[0, 0, 1, 0]]),
        ("multi_hot", [[1, 1, 3], [0, 2, 2]], [[0, 1, 0, 1], [1, 0, 1, 0]]),
        ("multi_hot", [1, 3], [0, 1, 0, 1]),
        ("count", [[1, 1, 3], [0, 2, 2]], [[0, 2, 0, 1], [1, 0, 2, 0]]),
        ("count", [[1, 9]], [[0, 1, 0, 0]]),  # out-of-range tokens count for nothing
    ],
)
def test_category_encoding(mode, x, expected):
    out = layers.CategoryEncoding(4, output_mode=mode)(ft.constant(x))
    assert out.dtype == ft.float32
    np.testing.assert_array_equal(out.numpy(), expected)


def test_category_encoding_count_weights_and_errors():
    layer = layers.CategoryEncoding(4, output_mode="count")
    out = layer(ft.constant([[1, 1, 3]]), count_weights=np.array([[0.5, 1.0, 2.0]]))
    np.testing.assert_allclose(out.numpy(), [[0.0, 1.5, 0.0, 2.0]])
    with pytest.raises(ValueError, match="count_weights"):
        layers.CategoryEncoding(4)(ft.constant([[1]]), count_weights=[[1.0]])
    with pytest.raises(ValueError, match="maximum supported output rank is 2"):
        layers.CategoryEncoding(4)(ft.zeros([2, 2, 2], dtype="int32"))
    with pytest.raises(ValueError, match="num_tokens"):
        layers.CategoryEncoding()
    with pytest.raises(ValueError, match="output_mode"):
        layers.CategoryEncoding(3, output_mode="tf_idf")


def test_discretization_buckets_and_encodings():
    x = ft.constant([[-1.0, 0.0, 0.5, 1.0, 2.0, 3.0]])
    layer = layers.Discretization(bin_boundaries=[0.0, 1.0, 2.0])
    out = layer(x)
    assert out.dtype == ft.int32
    assert out.numpy().tolist() == [[0, 1, 1, 2, 3, 3]]
    one_hot = layers.Discretization(bin_boundaries=[0.0, 1.0, 2.0], output_mode="one_hot")
    np.testing.assert_array_equal(
        one_hot(ft.constant([0.5, 2.5])).numpy(), [[0, 1, 0, 0], [0, 0, 0, 1]]
    )
    count = layers.Discretization(bin_boundaries=[0.0], output_mode="count")
    np.testing.assert_array_equal(count(ft.constant([[-1.0, 2.0, 3.0]])).numpy(), [[1, 2]])


def test_discretization_adapt_places_boundaries_at_quantiles():
    layer = layers.Discretization(num_bins=4)
    layer.adapt(np.arange(100.0).reshape(-1, 1))
    # The i-th smallest of n values sits at i / n: the 1/4 quantile of 0..99 is 24.
    np.testing.assert_allclose(layer.bin_boundaries, [24.0, 49.0, 74.0])
    counts = np.bincount(layer(ft.constant(np.arange(100.0))).numpy(), minlength=4)
    assert counts.tolist() == [24, 25, 25, 26]
    batched = layers.Discretization(num_bins=4)
    batched.adapt(ft.data.Dataset.from_tensor_slices(np.arange(100.0)).batch(7))
    assert batched.bin_boundaries == layer.bin_boundaries
    with pytest.raises(ValueError, match="num_bins"):
        layers.Discretization(bin_boundaries=[1.0]).adapt(np.ones(3))
    with pytest.raises(ValueError, match="adapt"):
        layers.Discretization(num_bins=3)(ft.ones([2]))


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({}, "exactly one"),
        ({"bin_boundaries": [1.0], "num_bins": 2}, "exactly one"),
        ({"bin_boundaries": [2.0, 1.0]}, "sorted"),
        ({"num_bins": 0}, "num_bins"),
        ({"bin_boundaries": [1.0], "output_mode": "tf_idf"}, "output_mode"),
    ],
)
def test_discretization_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        layers.Discretization(**kwargs)


def test_thresholded_relu_values_and_gradient():
    layer = layers.ThresholdedReLU(theta=0.5, dtype="float64")
    x = np.array([[-1.0, 0.2, 0.7, 2.0]])
    np.testing.assert_array_equal(layer(x).numpy(), [[0.0, 0.0, 0.7, 2.0]])
    check_input_gradient(layer, rand(3, 4) + 0.05)  # away from the kink at theta
    with pytest.raises(ValueError, match="theta"):
        layers.ThresholdedReLU(theta=-1.0)


def test_time_distributed_applies_the_layer_to_every_step():
    inner = layers.Dense(3, dtype="float64")
    layer = layers.TimeDistributed(inner, dtype="float64")
    x = rand(2, 5, 4)
    y = layer(x).numpy()
    assert y.shape == (2, 5, 3)
    assert layer.weights == inner.weights and inner.kernel.shape.as_list() == [4, 3]
    expected = x @ inner.kernel.numpy() + inner.bias.numpy()
    np.testing.assert_allclose(y, expected, rtol=1e-12)
    check_input_gradient(layer, x)
    check_weight_gradients(layer, x)
    conv = layers.TimeDistributed(layers.Conv2D(2, 3, padding="same"))
    assert conv(ft.ones([2, 4, 6, 6, 1])).shape.as_list() == [2, 4, 6, 6, 2]
    with pytest.raises(ValueError, match="at least 3"):
        layers.TimeDistributed(layers.Dense(2))(ft.ones([2, 3]))
    with pytest.raises(ValueError, match="Wrapper"):
        layers.TimeDistributed("dense")


@pytest.mark.parametrize(
    "make",
    [
        lambda: layers.CategoryEncoding(5, output_mode="count"),
        lambda: layers.Discretization(bin_boundaries=[0.0, 1.5], output_mode="one_hot"),
        lambda: layers.ThresholdedReLU(theta=0.3),
        lambda: layers.TimeDistributed(layers.Dense(4, activation="relu")),
    ],
)
def test_get_config_round_trips(make):
    layer = make()
    config = layer.get_config()
    assert type(layer).from_config(config).get_config() == config


def test_serialize_and_deserialize():
    layer = layers.Conv1D(4, 3, padding="causal", name="c")
    config = layers.serialize(layer)
    assert config["class_name"] == "Conv1D" and config["module"] == "keras.layers"
    clone = layers.deserialize(config)
    assert isinstance(clone, layers.Conv1D) and clone.get_config() == layer.get_config()

    class Scale(layers.Layer):
        def call(self, inputs):
            return inputs * 2.0

    restored = layers.deserialize(
        layers.serialize(Scale(name="s")), custom_objects={"Scale": Scale}
    )
    assert isinstance(restored, Scale) and restored.name == "s"


# ------------------------------------------------------- adaptive pooling, Pipeline, ...


def adaptive_ref(x, sizes, reduce):
    """Adaptive pooling by its definition: a box per output element."""
    out = np.zeros((x.shape[0], *sizes, x.shape[-1]))
    spatial = x.shape[1:-1]
    for pos in np.ndindex(*sizes):
        box = tuple(
            slice(i * n // s, -(-(i + 1) * n // s))
            for i, n, s in zip(pos, spatial, sizes, strict=True)
        )
        cells = x[(slice(None), *box)].reshape(x.shape[0], -1, x.shape[-1])
        out[(slice(None), *pos)] = reduce(cells, axis=1)
    return out


@pytest.mark.parametrize(
    "name, size, shape",
    [
        ("AdaptiveAveragePooling1D", 4, (2, 10, 3)),
        ("AdaptiveMaxPooling1D", 7, (2, 5, 3)),
        ("AdaptiveAveragePooling2D", (3, 4), (2, 7, 9, 2)),
        ("AdaptiveMaxPooling2D", 2, (2, 5, 5, 2)),
        ("AdaptiveAveragePooling3D", (2, 3, 2), (1, 5, 7, 4, 2)),
        ("AdaptiveMaxPooling3D", 2, (1, 5, 7, 4, 2)),
    ],
)
def test_adaptive_pooling_matches_its_definition(name, size, shape):
    layer = getattr(layers, name)(size, dtype="float64")
    x = rand(*shape)
    reduce = np.max if "Max" in name else np.mean
    expected = adaptive_ref(x, layer.output_size, reduce)
    np.testing.assert_allclose(layer(x).numpy(), expected, rtol=1e-12)
    check_input_gradient(layer, x)
    config = layer.get_config()
    assert type(layer).from_config(config).get_config() == config


def test_adaptive_pooling_bad_arguments():
    with pytest.raises(TypeError, match="output_size"):
        layers.AdaptiveAveragePooling2D((2, 2, 2))
    with pytest.raises(TypeError, match="output_size"):
        layers.AdaptiveMaxPooling1D(0)
    with pytest.raises(ValueError, match="data_format"):
        layers.AdaptiveMaxPooling1D(2, data_format="channels_first")
    with pytest.raises(ValueError, match="expected ndim=4"):
        layers.AdaptiveAveragePooling2D(2)(ft.ones([2, 3, 4]))


@pytest.mark.parametrize("tie_weights", [True, False])
def test_reversible_embedding(tie_weights):
    layer = layers.ReversibleEmbedding(10, 4, tie_weights=tie_weights, logit_soft_cap=3.0)
    ids = ft.constant([[1, 2, 7]])
    hidden = layer(ids)
    table = layer.embeddings.numpy()
    np.testing.assert_allclose(hidden.numpy()[0], table[[1, 2, 7]])
    h = rand(1, 3, 4).astype(np.float32)
    kernel = table.T if tie_weights else layer.reverse_embeddings.numpy()
    assert [w.name.split("/")[-1].split(":")[0] for w in layer.weights] == (
        ["embeddings"] if tie_weights else ["embeddings", "reverse_embeddings"]
    )
    expected = 3.0 * np.tanh(h @ kernel / 3.0)
    np.testing.assert_allclose(layer(h, reverse=True).numpy(), expected, rtol=1e-5, atol=1e-6)
    config = layer.get_config()
    assert layers.ReversibleEmbedding.from_config(config).get_config() == config


def test_pipeline_runs_its_layers_in_order():
    pipeline = layers.Pipeline(
        [layers.Rescaling(2.0), layers.CenterCrop(2, 2), layers.GaussianNoise(1.0, seed=1)]
    )
    x = rand(1, 4, 4, 1).astype(np.float32)
    out = pipeline(x, training=False).numpy()
    np.testing.assert_allclose(out, 2.0 * x[:, 1:3, 1:3], rtol=1e-6)
    noisy = pipeline(x).numpy()  # Keras's Pipeline trains (adds the noise) by default
    assert not np.allclose(noisy, out)
    assert [type(x).__name__ for x in pipeline.layers] == [
        "Rescaling",
        "CenterCrop",
        "GaussianNoise",
    ]
    clone = layers.Pipeline.from_config(pipeline.get_config())
    assert [type(x).__name__ for x in clone.layers] == ["Rescaling", "CenterCrop", "GaussianNoise"]
    with pytest.raises(ValueError, match="list of layers"):
        layers.Pipeline(["rescaling"])


# ------------------------------------------------------------ Resizing, RandomFlip/Crop


def bilinear_ref(x, height, width):
    """TF's half-pixel bilinear resize with np.interp, one axis at a time."""

    def axis(a, size, ax):
        n = a.shape[ax]
        src = (np.arange(size) + 0.5) * n / size - 0.5
        return np.apply_along_axis(lambda v: np.interp(src, np.arange(n), v), ax, a)

    return axis(axis(x, height, 1), width, 2)


def test_resizing_hand_computed_rows():
    row = ft.reshape(ft.range(4.0), [1, 1, 4, 1])
    up = layers.Resizing(1, 8)(row)[0, 0, :, 0].numpy()
    np.testing.assert_allclose(up, [0, 0.25, 0.75, 1.25, 1.75, 2.25, 2.75, 3])
    down = layers.Resizing(1, 2)(row)[0, 0, :, 0].numpy()
    np.testing.assert_allclose(down, [0.5, 2.5])
    nearest = layers.Resizing(1, 2, interpolation="nearest")(row)[0, 0, :, 0].numpy()
    np.testing.assert_allclose(nearest, [1.0, 3.0])


@pytest.mark.parametrize("size", [(3, 4), (10, 5), (7, 9)])
def test_resizing_matches_numpy_interp_with_gradients(size):
    layer = layers.Resizing(*size, dtype="float64")
    x = rand(2, 7, 9, 2)
    np.testing.assert_allclose(layer(x).numpy(), bilinear_ref(x, *size), rtol=1e-12)
    single = layer(x[0]).numpy()
    np.testing.assert_allclose(single, bilinear_ref(x, *size)[0], rtol=1e-12)
    check_input_gradient(layer, x)


def test_resizing_aspect_ratio_options_and_integers():
    x = rand(1, 6, 9, 1)
    cropped = layers.Resizing(3, 3, crop_to_aspect_ratio=True, dtype="float64")(x).numpy()
    np.testing.assert_allclose(cropped, bilinear_ref(x[:, :, 1:7], 3, 3), rtol=1e-12)
    padded = layers.Resizing(4, 2, pad_to_aspect_ratio=True, fill_value=7.0, dtype="float64")
    # 6 x 9 padded to the ratio 2:1 (height 18): 6 rows of 7.0 above and below.
    full = np.concatenate([np.full((1, 6, 9, 1), 7.0), x, np.full((1, 6, 9, 1), 7.0)], 1)
    np.testing.assert_allclose(padded(x).numpy(), bilinear_ref(full, 4, 2), rtol=1e-12)
    ints = layers.Resizing(1, 2)(ft.constant([[[[0], [1], [2], [4]]]]))
    assert ints.dtype == ft.int32 and ints.numpy().ravel().tolist() == [0, 3]  # 0.5, 3 rounded


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"height": 0, "width": 2}, "height"),
        ({"height": 2, "width": 2, "interpolation": "bicubic"}, "interpolation"),
        (
            {"height": 2, "width": 2, "crop_to_aspect_ratio": True, "pad_to_aspect_ratio": True},
            "Only one",
        ),
        ({"height": 2, "width": 2, "antialias": True}, "antialias"),
    ],
)
def test_resizing_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        layers.Resizing(**kwargs)


@pytest.mark.parametrize("mode", ["horizontal", "vertical", "horizontal_and_vertical"])
def test_random_flip(mode):
    x = rand(64, 2, 3, 1)
    layer = layers.RandomFlip(mode, seed=4, dtype="float64")
    np.testing.assert_array_equal(layer(x, training=False).numpy(), x)
    y = layer(x).numpy()  # Keras's RandomFlip trains by default
    flipped = x
    if mode != "vertical":
        flipped = flipped[:, :, ::-1]
    if mode != "horizontal":
        flipped = flipped[:, ::-1]
    same = np.all(y == x, axis=(1, 2, 3))
    turned = np.all(y == flipped, axis=(1, 2, 3))
    assert np.all(same | turned) and 10 < turned.sum() < 54
    with pytest.raises(ValueError, match="unknown mode"):
        layers.RandomFlip("diagonal")


def test_random_crop():
    x = rand(2, 6, 8, 1)
    layer = layers.RandomCrop(4, 5, seed=2, dtype="float64")
    np.testing.assert_array_equal(layer(x, training=False).numpy(), x)
    y = layer(x).numpy()
    windows = [x[:, i : i + 4, j : j + 5] for i in range(3) for j in range(4)]
    assert any(np.array_equal(y, w) for w in windows)  # one offset for the whole batch
    small = rand(1, 3, 8, 1)
    out = layers.RandomCrop(4, 4, dtype="float64")(small).numpy()
    # Too small: from the centred 3 x 3 window's corner, 3 x 4 cut, resized to 4 x 4.
    np.testing.assert_allclose(out, bilinear_ref(small[:, :, 2:6], 4, 4), rtol=1e-12)


@pytest.mark.parametrize(
    "make",
    [
        lambda: layers.Resizing(3, 4, interpolation="nearest", pad_to_aspect_ratio=True),
        lambda: layers.RandomFlip("vertical", seed=3),
        lambda: layers.RandomCrop(2, 3, seed=1),
    ],
)
def test_image_layer_configs_round_trip(make):
    layer = make()
    config = layer.get_config()
    assert type(layer).from_config(config).get_config() == config


# -------------------------------------------------------------------------- InputSpec


class _Checked(layers.Layer):
    def __init__(self, spec, **kwargs):
        super().__init__(**kwargs)
        self.input_spec = spec

    def call(self, inputs):
        return inputs


@pytest.mark.parametrize(
    "spec, shape, match",
    [
        (layers.InputSpec(ndim=4), (2, 3, 4), "expected ndim=4, found ndim=3"),
        (layers.InputSpec(min_ndim=3), (2, 3), "expected min_ndim=3"),
        (layers.InputSpec(max_ndim=2), (2, 3, 4), "expected max_ndim=2"),
        (layers.InputSpec(axes={-1: 3}), (2, 4), "expected axis -1 of input shape to have value 3"),
        (layers.InputSpec(shape=(None, 5)), (2, 4), r"expected shape=\(None, 5\)"),
        (layers.InputSpec(dtype="int32"), (2, 4), "expected dtype=int32"),
    ],
)
def test_input_spec_is_checked_on_every_call(spec, shape, match):
    layer = _Checked(spec, name="checked")
    with pytest.raises(ValueError, match=match) as info:
        layer(ft.ones(list(shape)))
    assert "'checked'" in str(info.value)


def test_input_spec_accepts_matching_inputs_and_round_trips():
    spec = layers.InputSpec(ndim=3, axes={-1: 4}, dtype="float32")
    out = _Checked(spec)(ft.ones([2, 5, 4]))
    assert out.shape.as_list() == [2, 5, 4]
    assert repr(spec) == "InputSpec(dtype=float32, ndim=3, axes={-1: 4})"
    assert layers.InputSpec.from_config(spec.get_config()).get_config() == spec.get_config()
    two = _Checked([layers.InputSpec(ndim=2), None])
    assert len(two([ft.ones([1, 2]), ft.ones([3])])) == 2
    with pytest.raises(ValueError, match="expects 2 input"):
        two([ft.ones([1, 2])] * 3)
    with pytest.raises(TypeError, match="axes"):
        layers.InputSpec(axes=[1])
    with pytest.raises(ValueError, match="greater than the maximum"):
        layers.InputSpec(ndim=2, axes={2: 3})


# ------------------------------------------------------------ RandomContrast
def test_random_contrast_scales_each_image_about_its_channel_means():
    x = np.random.default_rng(0).uniform(0.0, 255.0, (3, 4, 5, 2))
    layer = layers.RandomContrast((0.3, 0.6), seed=2, dtype="float64")
    y = layer(x).numpy()  # Keras's RandomContrast trains by default
    mean = x.mean(axis=(1, 2), keepdims=True)
    factors = []
    for image in range(3):
        # The factor is one per image: recover it from the pixels the clip left alone.
        inside = (y[image] > 0.0) & (y[image] < 255.0)
        ratio = ((y[image] - mean[image]) / (x[image] - mean[image]))[inside]
        np.testing.assert_allclose(ratio, ratio[0], rtol=1e-9)
        factors.append(ratio[0])
        expected = np.clip((x[image] - mean[image]) * ratio[0] + mean[image], 0.0, 255.0)
        np.testing.assert_allclose(y[image], expected, rtol=1e-9)
    assert all(0.7 <= f <= 1.6 for f in factors) and len(set(factors)) == 3
    again = layers.RandomContrast((0.3, 0.6), seed=2, dtype="float64")(x).numpy()
    np.testing.assert_array_equal(y, again)  # the seed fixes the draws


def test_random_contrast_inference_single_images_and_factor_rules():
    x = np.arange(12, dtype="uint8").reshape(2, 2, 3)
    layer = layers.RandomContrast(0.5)
    out = layer(x, training=False)
    assert out.dtype == ft.float32 and out.shape == (2, 2, 3)
    np.testing.assert_array_equal(out.numpy(), x)
    # Keras 3 reads a single factor f as the bounds (0, f): the contrast only grows.
    assert layer.factor == (0.0, 0.5)
    assert layers.RandomContrast((0.4, 0.1)).factor == (0.1, 0.4)
    grown = layers.RandomContrast(0.5, seed=3)(x.astype("float32")).numpy()
    spread = np.ptp(grown, axis=(0, 1)) / np.ptp(x, axis=(0, 1))
    assert np.all(spread >= 1.0 - 1e-6) and np.all(spread <= 1.5 + 1e-6)
    for bad in (1.5, -0.1, (0.1, 0.2, 0.3), "0.5"):
        with pytest.raises(ValueError, match="The `factor` argument should be a number"):
            layers.RandomContrast(bad)
