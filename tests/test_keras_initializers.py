"""ft.keras.initializers, activations and regularizers against Keras 3's formulas (numpy
references written here)."""

import math

import numpy as np
import pytest

import ferrotape as ft
from ferrotape.keras import activations, initializers, regularizers

# ----------------------------------------------------------------------------- initializers


def sample(init, shape, dtype=None):
    value = init(shape, dtype=dtype)
    assert isinstance(value, ft.Tensor)
    assert tuple(value.shape) == tuple(shape)
    return value.numpy()


@pytest.mark.parametrize(
    ("shape", "fans"),
    [
        ((), (1, 1)),
        ((7,), (7, 7)),
        ((5, 3), (5, 3)),
        ((3, 3, 16, 32), (144, 288)),
        ((2, 4, 6), (8, 12)),
    ],
)
def test_compute_fans_uses_the_receptive_field(shape, fans):
    assert initializers.compute_fans(shape) == fans


def test_glorot_uniform_bounds_and_spread_for_a_conv_kernel():
    ft.random.set_seed(1)
    values = sample(initializers.GlorotUniform(), (3, 3, 64, 64))
    limit = math.sqrt(6.0 / (3 * 3 * 64 + 3 * 3 * 64))
    assert values.min() >= -limit and values.max() <= limit
    assert values.max() > 0.98 * limit and values.min() < -0.98 * limit
    assert abs(values.mean()) < 0.02 * limit
    assert values.std() == pytest.approx(limit / math.sqrt(3.0), rel=0.03)


@pytest.mark.parametrize(
    ("cls", "scale", "fan"),
    [
        (initializers.HeNormal, 2.0, "in"),
        (initializers.LecunNormal, 1.0, "in"),
        (initializers.GlorotNormal, 1.0, "avg"),
    ],
)
def test_truncated_normal_variance_scaling_keeps_the_variance(cls, scale, fan):
    ft.random.set_seed(2)
    shape = (300, 200)
    n = {"in": 300, "avg": 250}[fan]
    values = sample(cls(), shape)
    target = math.sqrt(scale / n)
    # Keras divides by 0.8796 so the truncated distribution has the intended stddev...
    assert values.std() == pytest.approx(target, rel=0.03)
    # ... and cuts at two stddevs of the untruncated normal.
    assert np.abs(values).max() <= 2 * target / 0.87962566103423978 + 1e-6


@pytest.mark.parametrize(
    ("cls", "scale", "n"),
    [(initializers.HeUniform, 2.0, 400), (initializers.LecunUniform, 1.0, 400)],
)
def test_uniform_variance_scaling_limits(cls, scale, n):
    ft.random.set_seed(3)
    values = sample(cls(), (n, 100))
    limit = math.sqrt(3.0 * scale / n)
    assert values.min() >= -limit and values.max() <= limit
    assert values.max() > 0.97 * limit
    assert values.std() == pytest.approx(limit / math.sqrt(3), rel=0.03)


@pytest.mark.parametrize("mode", ["fan_in", "fan_out", "fan_avg"])
def test_variance_scaling_modes_and_untruncated_normal(mode):
    shape = (120, 480)
    fan = {"fan_in": 120, "fan_out": 480, "fan_avg": 300}[mode]
    init = initializers.VarianceScaling(
        scale=3.0, mode=mode, distribution="untruncated_normal", seed=11
    )
    values = sample(init, shape)
    assert values.std() == pytest.approx(math.sqrt(3.0 / fan), rel=0.03)
    # An untruncated normal reaches beyond 2 stddevs.
    assert np.abs(values).max() > 2.5 * math.sqrt(3.0 / fan)


def test_variance_scaling_normal_means_truncated_and_fans_are_at_least_one():
    init = initializers.VarianceScaling(distribution="normal")
    assert init.distribution == "truncated_normal"
    # A scalar weight: fan 1, so the stddev is sqrt(scale).
    values = np.array([float(initializers.VarianceScaling(seed=i)(())) for i in range(300)])
    assert np.abs(values).max() <= 2 / 0.87962566103423978 + 1e-6


@pytest.mark.parametrize(
    "kwargs",
    [{"scale": 0.0}, {"scale": -1.0}, {"mode": "fan_sum"}, {"distribution": "cauchy"}],
)
def test_variance_scaling_rejects_bad_arguments(kwargs):
    with pytest.raises(ValueError, match="VarianceScaling"):
        initializers.VarianceScaling(**kwargs)


def test_random_normal_uniform_truncated_statistics():
    ft.random.set_seed(4)
    normal = sample(initializers.RandomNormal(mean=1.0, stddev=0.5), (200, 200))
    assert normal.mean() == pytest.approx(1.0, abs=0.01)
    assert normal.std() == pytest.approx(0.5, rel=0.02)
    uniform = sample(initializers.RandomUniform(minval=-2.0, maxval=3.0), (200, 200))
    assert uniform.min() >= -2.0 and uniform.max() < 3.0
    assert uniform.mean() == pytest.approx(0.5, abs=0.03)
    truncated = sample(initializers.TruncatedNormal(mean=0.0, stddev=1.0), (200, 200))
    assert np.abs(truncated).max() <= 2.0
    # The stddev of a standard normal truncated to [-2, 2] is 0.8796.
    assert truncated.std() == pytest.approx(0.87962566, rel=0.02)


def test_defaults_match_keras():
    assert (initializers.RandomNormal().mean, initializers.RandomNormal().stddev) == (0.0, 0.05)
    uniform = initializers.RandomUniform()
    assert (uniform.minval, uniform.maxval) == (-0.05, 0.05)
    assert initializers.TruncatedNormal().stddev == 0.05
    scaling = initializers.VarianceScaling()
    assert (scaling.scale, scaling.mode, scaling.distribution) == (
        1.0,
        "fan_in",
        "truncated_normal",
    )
    values = sample(initializers.RandomUniform(), (1000,))
    assert values.min() >= -0.05 and values.max() <= 0.05


def test_seeded_initializers_repeat_and_unseeded_follow_the_global_seed():
    seeded = initializers.GlorotUniform(seed=7)
    np.testing.assert_array_equal(sample(seeded, (4, 5)), sample(seeded, (4, 5)))
    np.testing.assert_array_equal(
        sample(seeded, (4, 5)), sample(initializers.GlorotUniform(seed=7), (4, 5))
    )
    assert not np.array_equal(
        sample(seeded, (4, 5)), sample(initializers.GlorotUniform(seed=8), (4, 5))
    )
    unseeded = initializers.HeNormal()
    ft.random.set_seed(5)
    first = sample(unseeded, (3, 3)), sample(unseeded, (3, 3))
    ft.random.set_seed(5)
    second = sample(unseeded, (3, 3)), sample(unseeded, (3, 3))
    np.testing.assert_array_equal(first[0], second[0])
    np.testing.assert_array_equal(first[1], second[1])
    assert not np.array_equal(first[0], first[1])


def test_constant_zeros_ones_identity_and_dtypes():
    np.testing.assert_array_equal(sample(initializers.Zeros(), (2, 3)), np.zeros((2, 3)))
    np.testing.assert_array_equal(sample(initializers.Ones(), (2,)), np.ones(2))
    np.testing.assert_array_equal(sample(initializers.Constant(2.5), (2, 2)), np.full((2, 2), 2.5))
    np.testing.assert_array_equal(
        sample(initializers.Constant([1.0, 2.0]), (3, 2)), np.tile([1.0, 2.0], (3, 1))
    )
    np.testing.assert_array_equal(sample(initializers.Identity(gain=3.0), (2, 3)), 3 * np.eye(2, 3))
    assert initializers.Zeros()((2,), dtype="int32").dtype == ft.int32
    assert initializers.GlorotUniform()((2, 2), dtype="float64").dtype == ft.float64
    assert initializers.GlorotUniform(seed=1)((2, 2), dtype=ft.float16).dtype == ft.float16
    with pytest.raises(ValueError, match="Identity"):
        initializers.Identity()((2, 2, 2))
    with pytest.raises(ValueError, match="floating"):
        initializers.RandomNormal()((2,), dtype="int32")
    with pytest.raises(ValueError, match="Constant"):
        initializers.Constant([1.0, 2.0, 3.0])((2, 2))


@pytest.mark.parametrize("shape", [(6, 4), (4, 6), (3, 3, 2, 5)])
def test_orthogonal_columns_or_rows_are_orthonormal(shape):
    values = sample(initializers.Orthogonal(gain=2.0, seed=3), shape).astype(np.float64)
    matrix = values.reshape(-1, shape[-1])
    small = matrix.T @ matrix if matrix.shape[0] >= matrix.shape[1] else matrix @ matrix.T
    np.testing.assert_allclose(small, 4.0 * np.eye(small.shape[0]), atol=1e-5)
    with pytest.raises(ValueError, match="two-dimensional"):
        initializers.Orthogonal()((5,))


def test_get_resolves_names_dicts_instances_and_callables():
    assert isinstance(initializers.get("glorot_uniform"), initializers.GlorotUniform)
    assert isinstance(initializers.get("GlorotUniform"), initializers.GlorotUniform)
    assert isinstance(initializers.get("he_normal"), initializers.HeNormal)
    assert isinstance(initializers.get("zeros"), initializers.Zeros)
    assert isinstance(initializers.get("uniform"), initializers.RandomUniform)
    assert isinstance(initializers.get("normal"), initializers.RandomNormal)
    assert isinstance(initializers.get("orthogonal"), initializers.Orthogonal)
    assert initializers.get(None) is None
    instance = initializers.RandomNormal(stddev=2.0)
    assert initializers.get(instance) is instance

    def custom(shape, dtype=None):
        return ft.ones(shape, dtype=dtype)

    assert initializers.get(custom) is custom
    config = initializers.serialize(initializers.RandomNormal(mean=1.0, stddev=3.0, seed=2))
    rebuilt = initializers.get(config)
    assert (rebuilt.mean, rebuilt.stddev, rebuilt.seed) == (1.0, 3.0, 2)
    assert initializers.glorot_uniform is initializers.GlorotUniform
    with pytest.raises(ValueError, match="Could not interpret initializer identifier"):
        initializers.get("glorot_uniformm")
    with pytest.raises(ValueError):
        initializers.get(42)


# ----------------------------------------------------------------------------- activations

X = np.array([[-3.5, -1.0, -0.2, 0.0], [0.3, 1.0, 2.5, 7.0]], np.float32)


def erf(values):
    return np.vectorize(math.erf)(values)


def softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


REFERENCES = {
    "relu": lambda x: np.maximum(x, 0),
    "relu6": lambda x: np.clip(x, 0, 6),
    "leaky_relu": lambda x: np.where(x >= 0, x, 0.2 * x),
    "elu": lambda x: np.where(x > 0, x, np.expm1(x)),
    "selu": lambda x: 1.0507009873554805 * np.where(x > 0, x, 1.6732632423543772 * np.expm1(x)),
    "gelu": lambda x: 0.5 * x * (1 + erf(x / math.sqrt(2))),
    "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
    "tanh": np.tanh,
    "softmax": softmax,
    "log_softmax": lambda x: np.log(softmax(x)),
    "softplus": lambda x: np.log1p(np.exp(x)),
    "softsign": lambda x: x / (1 + np.abs(x)),
    "silu": lambda x: x / (1 + np.exp(-x)),
    "swish": lambda x: x / (1 + np.exp(-x)),
    "hard_sigmoid": lambda x: np.clip(x / 6 + 0.5, 0, 1),
    "hard_silu": lambda x: x * np.clip(x / 6 + 0.5, 0, 1),
    "mish": lambda x: x * np.tanh(np.log1p(np.exp(x))),
    "exponential": np.exp,
    "linear": lambda x: x,
}


@pytest.mark.parametrize("name", sorted(REFERENCES))
def test_activation_matches_numpy(name):
    result = activations.get(name)(ft.constant(X))
    np.testing.assert_allclose(
        np.asarray(result), REFERENCES[name](X.astype(np.float64)), rtol=2e-5, atol=2e-6
    )


def test_activation_arguments():
    x = ft.constant(X)
    np.testing.assert_allclose(
        activations.relu(x, negative_slope=0.1, max_value=5.0, threshold=0.5).numpy(),
        np.where(X >= 0.5, np.minimum(X, 5.0), 0.1 * (X - 0.5)),
        rtol=1e-6,
    )
    np.testing.assert_allclose(
        activations.leaky_relu(x, negative_slope=0.3).numpy(), np.where(X >= 0, X, 0.3 * X)
    )
    np.testing.assert_allclose(
        activations.elu(x, alpha=2.0).numpy(), np.where(X > 0, X, 2.0 * np.expm1(X)), rtol=1e-6
    )
    np.testing.assert_allclose(
        activations.softmax(x, axis=0).numpy(), softmax(X, axis=0), rtol=1e-6
    )
    tanh_gelu = 0.5 * X * (1 + np.tanh(math.sqrt(2 / math.pi) * (X + 0.044715 * X**3)))
    np.testing.assert_allclose(
        activations.gelu(x, approximate=True).numpy(), tanh_gelu, rtol=1e-5, atol=1e-6
    )


def test_activation_get_and_serialize():
    assert activations.get(None) is activations.linear
    assert activations.get(ft.nn.relu) is ft.nn.relu
    assert activations.get("swish") is activations.silu
    assert activations.serialize(activations.softmax) == "softmax"
    assert activations.serialize(ft.nn.relu) == "relu"
    assert activations.serialize(ft.nn.swish) == "silu"
    assert activations.serialize(activations.get("linear")) == "linear"
    with pytest.raises(ValueError, match="Could not interpret activation function identifier"):
        activations.get("relu7")


def test_activations_are_differentiable():
    x = ft.Variable(X)
    with ft.GradientTape() as tape:
        y = ft.reduce_sum(activations.hard_sigmoid(x)) + ft.reduce_sum(activations.softsign(x))
    grad = tape.gradient(y, x).numpy()
    expected = np.where(np.abs(X) < 3, 1 / 6, 0) + 1 / (1 + np.abs(X)) ** 2
    np.testing.assert_allclose(grad, expected, rtol=1e-5)


# ----------------------------------------------------------------------------- regularizers


W = np.array([[1.0, -2.0], [0.5, 3.0]], np.float32)


def test_regularizer_values_match_keras_formulas():
    w = ft.constant(W)
    assert float(regularizers.L1()(w)) == pytest.approx(0.01 * np.abs(W).sum())
    assert float(regularizers.L2()(w)) == pytest.approx(0.01 * (W**2).sum())
    assert float(regularizers.L1(0.3)(w)) == pytest.approx(0.3 * np.abs(W).sum())
    assert float(regularizers.L2(l2=0.2)(w)) == pytest.approx(0.2 * (W**2).sum())
    both = regularizers.L1L2(l1=0.1, l2=0.05)(w)
    assert float(both) == pytest.approx(0.1 * np.abs(W).sum() + 0.05 * (W**2).sum())
    assert float(regularizers.L1L2()(w)) == 0.0


def test_regularizer_gradient_and_get():
    w = ft.Variable(W)
    with ft.GradientTape() as tape:
        penalty = regularizers.L2(0.5)(w)
    np.testing.assert_allclose(tape.gradient(penalty, w).numpy(), W, rtol=1e-6)
    assert isinstance(regularizers.get("l2"), regularizers.L2)
    assert regularizers.get("l1").l1 == 0.01
    assert isinstance(regularizers.get("l1_l2"), regularizers.L1L2)
    assert regularizers.get(None) is None
    rebuilt = regularizers.get(regularizers.serialize(regularizers.L1L2(0.2, 0.3)))
    assert (rebuilt.l1, rebuilt.l2) == (0.2, 0.3)
    with pytest.raises(ValueError, match="non-negative"):
        regularizers.L2(-1.0)
    with pytest.raises(ValueError, match="non-negative"):
        regularizers.L1("big")
    with pytest.raises(ValueError, match="Could not interpret regularizer"):
        regularizers.get("l3")
