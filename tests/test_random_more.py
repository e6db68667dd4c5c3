"""ft.random's distributions beyond uniform/normal: categorical, gamma, poisson, the stateless_*
family, split/fold_in and Generator. TensorFlow's exact streams are not reproduced, so the tests
check the contracts (determinism in the seed, shapes, dtypes, ranges) and the distributions'
moments against their formulas. Runs without TensorFlow."""

import numpy as np
import pytest

import ferrotape as ft

SEED = [12, 34]


def test_stateful_draws_follow_set_seed():
    for draw in (
        lambda: ft.random.categorical(ft.zeros([1, 4]), 50),
        lambda: ft.random.gamma([3], alpha=[1.0, 2.0]),
        lambda: ft.random.poisson([4], lam=3.0),
    ):
        ft.random.set_seed(5)
        first = [draw().numpy() for _ in range(2)]
        ft.random.set_seed(5)
        again = [draw().numpy() for _ in range(2)]
        for a, b in zip(first, again, strict=True):
            np.testing.assert_array_equal(a, b)
        assert not np.array_equal(first[0], first[1])  # the op counter moves on


def test_categorical_frequencies_and_impossible_classes():
    logits = np.array([np.log([0.1, 0.6, 0.3]), [0.0, -np.inf, -np.inf]])
    draws = ft.random.categorical(logits, 20000, seed=1).numpy()
    assert draws.shape == (2, 20000) and draws.dtype == np.int64
    np.testing.assert_allclose(
        np.bincount(draws[0], minlength=3) / 20000, [0.1, 0.6, 0.3], atol=0.02
    )
    assert (draws[1] == 0).all()  # log(0) = -inf is never drawn
    assert ft.random.categorical(logits, 2, dtype=ft.int32).dtype == ft.int32
    with pytest.raises(ValueError, match="logits must be 2-D"):
        ft.random.categorical([0.0, 1.0], 1)


def test_gamma_and_poisson_shapes_and_moments():
    samples = ft.random.gamma([20000], alpha=[[1.0], [4.0]], beta=[1.0, 2.0], seed=2).numpy()
    assert samples.shape == (20000, 2, 2) and samples.dtype == np.float32
    alpha, beta = np.array([[1.0], [4.0]]), np.array([1.0, 2.0])
    np.testing.assert_allclose(samples.mean(0), alpha / beta, rtol=0.05)
    np.testing.assert_allclose(samples.var(0), alpha / beta**2, rtol=0.1)
    counts = ft.random.poisson([20000], lam=[0.5, 6.0], dtype=ft.int32, seed=3).numpy()
    assert counts.shape == (20000, 2) and counts.dtype == np.int32
    np.testing.assert_allclose(counts.mean(0), [0.5, 6.0], rtol=0.05)
    with pytest.raises(ValueError, match="dtype must be a floating dtype"):
        ft.random.gamma([2], 1.0, dtype=ft.int32)


STATELESS = {
    "uniform": lambda seed: ft.random.stateless_uniform([200], seed, minval=-1.0, maxval=3.0),
    "uniform_int": lambda seed: ft.random.stateless_uniform(
        [200], seed, minval=2, maxval=9, dtype=ft.int32
    ),
    "normal": lambda seed: ft.random.stateless_normal([200], seed, mean=1.0, stddev=2.0),
    "truncated": lambda seed: ft.random.stateless_truncated_normal([200], seed, stddev=3.0),
    "parameterized": lambda seed: ft.random.stateless_parameterized_truncated_normal(
        [200], seed, means=1.0, minvals=0.5, maxvals=4.0
    ),
    "categorical": lambda seed: ft.random.stateless_categorical(np.zeros((2, 4)), 100, seed),
    "binomial": lambda seed: ft.random.stateless_binomial([200], seed, counts=10, probs=0.3),
    "gamma": lambda seed: ft.random.stateless_gamma([200], seed, alpha=2.0),
    "poisson": lambda seed: ft.random.stateless_poisson([200], seed, lam=4.0),
}


@pytest.mark.parametrize("name", sorted(STATELESS))
def test_stateless_draws_are_pure_functions_of_the_seed(name):
    draw = STATELESS[name]
    first = draw(SEED).numpy()
    ft.random.set_seed(99)  # the global seed plays no part
    np.testing.assert_array_equal(draw(SEED).numpy(), first)
    np.testing.assert_array_equal(draw(np.array(SEED, np.int64)).numpy(), first)
    assert not np.array_equal(draw([12, 35]).numpy(), first)


def test_stateless_ranges_and_dtypes():
    u = ft.random.stateless_uniform([1000], SEED, minval=-1.0, maxval=3.0).numpy()
    assert u.dtype == np.float32 and u.min() >= -1 and u.max() < 3
    ints = ft.random.stateless_uniform([1000], SEED, minval=2, maxval=9, dtype=ft.int64).numpy()
    assert ints.dtype == np.int64 and set(np.unique(ints)) == set(range(2, 9))
    full = ft.random.stateless_uniform([4], SEED, minval=None, maxval=None, dtype=ft.int32)
    assert full.dtype == ft.int32
    t = ft.random.stateless_truncated_normal([1000], SEED, mean=1.0, stddev=3.0).numpy()
    assert np.abs(t - 1).max() <= 6
    p = ft.random.stateless_parameterized_truncated_normal(
        [1000], SEED, means=1.0, minvals=0.5, maxvals=4.0
    ).numpy()
    assert p.min() >= 0.5 and p.max() <= 4.0
    b = ft.random.stateless_binomial([2, 1000], SEED, counts=[[10], [3]], probs=0.3).numpy()
    assert b.dtype == np.int32 and b.min() >= 0 and b[0].max() <= 10 and b[1].max() <= 3
    n = ft.random.stateless_normal([20000], SEED, mean=1.0, stddev=2.0, dtype=ft.float64).numpy()
    assert n.dtype == np.float64
    np.testing.assert_allclose([n.mean(), n.std()], [1.0, 2.0], atol=0.05)
    with pytest.raises(ValueError, match="seed must be a shape \\[2\\] integer tensor"):
        ft.random.stateless_uniform([2], [1, 2, 3])
    with pytest.raises(ValueError, match="maxval must be given"):
        ft.random.stateless_uniform([2], SEED, dtype=ft.int32)
    with pytest.raises(ValueError, match="alg must be"):
        ft.random.stateless_uniform([2], SEED, alg="mersenne")


def test_split_and_fold_in_make_new_seeds():
    seeds = ft.random.split(SEED, num=3)
    assert seeds.shape == [3, 2] and seeds.dtype == ft.int32
    np.testing.assert_array_equal(ft.random.split(SEED, 3).numpy(), seeds.numpy())
    assert len({tuple(s) for s in seeds.numpy()}) == 3
    a, b = ft.random.fold_in(SEED, 1), ft.random.fold_in(SEED, 2)
    assert not np.array_equal(a.numpy(), b.numpy())
    np.testing.assert_array_equal(ft.random.fold_in(SEED, 1).numpy(), a.numpy())
    assert ft.random.fold_in(np.array(SEED, np.int64), 1).dtype == ft.int64
    np.testing.assert_array_equal(ft.random.create_rng_state(7, "philox").numpy(), [7, 0, 0])
    assert ft.random.Algorithm.PHILOX.value == 1


def test_generator_is_reproducible_and_advances():
    g = ft.random.Generator.from_seed(42)
    assert g.algorithm == ft.random.Algorithm.PHILOX.value
    first, second = g.normal([3]).numpy(), g.normal([3]).numpy()
    assert not np.array_equal(first, second)
    np.testing.assert_array_equal(g.state.numpy(), [2, 0, 42])
    h = ft.random.Generator.from_seed(42)
    np.testing.assert_array_equal(h.normal([3]).numpy(), first)
    h.reset_from_seed(42)
    h.skip(1)
    np.testing.assert_array_equal(h.normal([3]).numpy(), second)
    copy = ft.random.Generator(copy_from=g)
    np.testing.assert_array_equal(copy.uniform([2]).numpy(), g.uniform([2]).numpy())
    restored = ft.random.Generator.from_state(g.state, "philox")
    np.testing.assert_array_equal(restored.uniform([2]).numpy(), g.uniform([2]).numpy())


def test_generator_draws_splits_and_seeds():
    g = ft.random.Generator.from_seed(1)
    u = g.uniform([500], minval=2.0, maxval=5.0).numpy()
    assert u.min() >= 2 and u.max() < 5
    assert g.uniform([3], maxval=10, dtype=ft.int64).dtype == ft.int64
    assert np.abs(g.truncated_normal([500]).numpy()).max() <= 2
    assert g.uniform_full_int([4]).dtype == ft.int64
    assert g.binomial([4], counts=5.0, probs=1.0).numpy().tolist() == [5, 5, 5, 5]
    seeds = g.make_seeds(3)
    assert seeds.shape == [2, 3] and seeds.dtype == ft.int64
    ft.random.stateless_normal([2], seeds[:, 0])  # a column is a valid stateless seed
    children = g.split(2)
    draws = [c.normal([4]).numpy() for c in children]
    assert not np.array_equal(draws[0], draws[1])
    other = ft.random.Generator.from_non_deterministic_state()
    assert other.normal([2]).shape == [2]
    ft.random.set_global_generator(ft.random.Generator.from_seed(3))
    np.testing.assert_array_equal(
        ft.random.get_global_generator().normal([2]).numpy(),
        ft.random.Generator.from_seed(3).normal([2]).numpy(),
    )
    with pytest.raises(TypeError, match="expected a Generator"):
        ft.random.set_global_generator(3)
    with pytest.raises(ValueError, match="state must be 3 ints"):
        ft.random.Generator.from_state([1, 2], "philox")
