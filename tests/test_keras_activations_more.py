"""The activations Keras 3 added (celu, glu, the shrinks, threshold, log_sigmoid, the sparse
ones, squareplus, sparsemax): values against numpy, lookup by name, and float64 gradients
against finite differences."""

import numpy as np
import pytest
from test_keras_layers import fd_grad

import ferrotape as ft
from ferrotape.keras import activations

# Values away from every kink (0, +-0.5, +-1, the threshold 0.3) so differences are smooth.
X = np.array(
    [[-2.5, -1.2, -0.7, -0.2, 0.1, 0.35, 0.8, 1.4], [0.15, -0.05, 0.2, -0.3, 2.1, 1.9, -1.1, 0.9]]
)


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


CASES = {
    "celu": ({}, lambda x: np.maximum(x, 0) + np.expm1(np.minimum(x, 0))),
    "celu_a": ({"alpha": 0.5}, lambda x: np.maximum(x, 0) + 0.5 * np.expm1(np.minimum(x, 0) / 0.5)),
    "glu": ({}, lambda x: x[:, :4] * sigmoid(x[:, 4:])),
    "glu_0": ({"axis": 0}, lambda x: x[:1] * sigmoid(x[1:])),
    "hard_tanh": ({}, lambda x: np.clip(x, -1, 1)),
    "hard_shrink": ({}, lambda x: np.where(np.abs(x) > 0.5, x, 0)),
    "soft_shrink": ({"threshold": 0.25}, lambda x: np.sign(x) * np.maximum(np.abs(x) - 0.25, 0)),
    "tanh_shrink": ({}, lambda x: x - np.tanh(x)),
    "threshold": ({"threshold": 0.3, "default_value": -7.0}, lambda x: np.where(x > 0.3, x, -7.0)),
    "log_sigmoid": ({}, lambda x: -np.log1p(np.exp(-x))),
    "sparse_plus": ({}, lambda x: np.where(x <= -1, 0, np.where(x < 1, (x + 1) ** 2 / 4, x))),
    "sparse_sigmoid": ({}, lambda x: np.clip((x + 1) / 2, 0, 1)),
    "squareplus": ({"b": 1}, lambda x: (x + np.sqrt(x**2 + 1)) / 2),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_values_and_gradients(case):
    kwargs, reference = CASES[case]
    name = case.split("_")[0] if case in ("celu_a", "glu_0") else case
    fn = activations.get(name)
    assert fn is getattr(activations, name)
    np.testing.assert_allclose(fn(ft.constant(X), **kwargs).numpy(), reference(X), rtol=1e-12)
    weights = np.random.default_rng(0).standard_normal(reference(X).shape)

    def value(x):
        return float(ft.reduce_sum(fn(ft.constant(x), **kwargs) * weights))

    x = ft.constant(X)
    with ft.GradientTape() as tape:
        tape.watch(x)
        y = ft.reduce_sum(fn(x, **kwargs) * weights)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), fd_grad(value, X), rtol=1e-6, atol=1e-8)


def np_sparsemax(z):
    """Martins & Astudillo (2016), Algorithm 1, on the last axis."""
    out = np.zeros_like(z)
    for idx in np.ndindex(z.shape[:-1]):
        row = z[idx]
        ordered = np.sort(row)[::-1]
        cumulative = np.cumsum(ordered)
        k = np.arange(1, len(row) + 1)
        support = k[1 + k * ordered > cumulative].max()
        tau = (cumulative[support - 1] - 1) / support
        out[idx] = np.maximum(row - tau, 0)
    return out


def test_sparsemax_projects_onto_the_simplex():
    z = np.array([[0.0, 0.5, 1.0], [0.1, 0.2, 0.3], [3.0, 0.0, -1.0], [2.0, 2.0, 0.9]])
    got = activations.sparsemax(ft.constant(z)).numpy()
    # the support of two or more entries (keras-team/keras#23425 gets these wrong)
    np.testing.assert_allclose(got[0], [0.0, 0.25, 0.75], atol=1e-12)
    np.testing.assert_allclose(got, np_sparsemax(z), atol=1e-12)
    np.testing.assert_allclose(got.sum(-1), 1.0, atol=1e-12)
    cube = np.random.default_rng(2).standard_normal((2, 3, 4))
    along_1 = activations.sparsemax(ft.constant(cube), axis=1).numpy()
    np.testing.assert_allclose(along_1, np.swapaxes(np_sparsemax(np.swapaxes(cube, 1, 2)), 1, 2))
    # gradient: on the support, the identity minus the support's mean
    x = ft.constant(z[:2])
    weights = np.array([[1.0, 2.0, 3.0], [0.5, -1.0, 2.0]])
    with ft.GradientTape() as tape:
        tape.watch(x)
        y = ft.reduce_sum(activations.sparsemax(x) * weights)

    def value(v):
        return float(ft.reduce_sum(activations.sparsemax(ft.constant(v)) * weights))

    np.testing.assert_allclose(tape.gradient(y, x).numpy(), fd_grad(value, z[:2]), atol=1e-7)


def test_sparsemax_refuses_a_scalar_and_an_axis_out_of_range():
    # TF 2.21 / Keras 3 (keras.ops.sparsemax): a scalar, axis=5 and axis=-3 on a [2, 3] input
    # each raise InvalidArgumentError ("slice index -1 of dimension 0 out of bounds" from a
    # strided slice); axis=None raises a ValueError or TypeError. ferrotape raised
    # ZeroDivisionError on the scalar and wrapped the bad axes silently.
    from ferrotape import keras

    for scalar in (ft.constant(1.0), 1.0):
        with pytest.raises(ft.errors.InvalidArgumentError, match="sparsemax: x must have"):
            keras.ops.sparsemax(scalar)
    for axis in (5, -3):
        with pytest.raises(ft.errors.InvalidArgumentError, match=f"sparsemax: axis {axis} is"):
            activations.sparsemax(ft.ones((2, 3)), axis=axis)
    with pytest.raises(TypeError, match="sparsemax: axis must be an int"):
        activations.sparsemax(ft.ones((2, 3)), axis=None)
    assert activations.sparsemax(ft.ones((2, 3)), axis=np.int64(0)).shape == (2, 3)


def test_glu_needs_an_even_axis_and_names_serialize():
    with pytest.raises(ValueError, match="divisible by 2"):
        activations.glu(ft.ones((2, 3)))
    for name in ("celu", "hard_tanh", "sparsemax", "squareplus", "log_sigmoid", "threshold"):
        assert activations.serialize(activations.get(name)) == name
