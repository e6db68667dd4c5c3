"""``ft.keras.random``: Keras 3's seeded sampling.

A ``seed`` is an int (the same numbers on every call, as Keras's stateless ops give), a
``SeedGenerator`` (a new, reproducible draw on each call) or None (a draw from the global
generator, which ``keras.utils.set_random_seed`` seeds).

>>> import ferrotape as ft
>>> a = ft.keras.random.normal([2], seed=3)
>>> b = ft.keras.random.normal([2], seed=3)
>>> bool(ft.reduce_all(a == b))
True
>>> gen = ft.keras.random.SeedGenerator(42)
>>> first, second = (ft.keras.random.uniform([2], seed=gen) for _ in range(2))
>>> bool(ft.reduce_all(first == second))
False

The numbers are drawn with numpy on the host. Inside a function ``ft.function`` traces (a
``Model.fit`` step, say), a draw with a ``SeedGenerator`` or no seed is recorded as a host effect
that draws again on every replay, in the same order as eager calls would, so a traced step gets
new numbers each call (the same ones an eager run gets); an int seed's numbers are constants.
One exception: a replay that a branch on a tensor value stops partway (see ``ft.function``) has
already drawn its numbers, so the draws after it are new but no longer the eager run's.
"""

import random as _python_random

import numpy as np

from .. import _core
from ..polymorphic_function import host_computed
from . import backend
from .backend_dtypes import as_dtype

# Keras's SeedGenerator advances its state by this much per draw; any odd constant works, a
# large one keeps the seeds of consecutive draws far apart.
_SEED_STRIDE = 0x9E3779B97F4A7C15


class SeedGenerator:
    """Reproducible seeds for the random ops: each ``next()`` returns a new one."""

    def __init__(self, seed=None, name=None, **kwargs):
        del kwargs
        if seed is None:
            seed = _python_random.randint(0, 2**31 - 1)
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
            raise ValueError(f"SeedGenerator: seed must be an int or None. Received: seed={seed!r}")
        self.name = name or "seed_generator"
        self._initial = int(seed)
        self._draws = 0

    def next(self, ordered=True):
        del ordered
        self._draws += 1
        return (self._initial * 1_000_003 + self._draws * _SEED_STRIDE) % 2**63

    def get_config(self):
        return {"seed": self._initial, "name": self.name}


def _rng(seed):
    if seed is None:
        return np.random.default_rng(_python_random.getrandbits(63))
    if isinstance(seed, SeedGenerator):
        return np.random.default_rng(seed.next())
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(
            "keras.random: seed must be a non-negative int, a SeedGenerator or None. "
            f"Received: seed={seed!r}"
        )
    return np.random.default_rng(int(seed))


def _shape(shape, op):
    shape = [shape] if isinstance(shape, (int, np.integer)) else list(shape)
    if any(isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d < 0 for d in shape):
        raise ValueError(f"{op}: shape must be a list of non-negative ints. Received: {shape!r}")
    return [int(d) for d in shape]


def _drawn(seed, draw, dtype):
    """A tensor of ``draw(rng)``'s numpy values (``rng`` from ``seed``), drawn again on every
    replay of a trace being recorded unless ``seed`` is an int (see the module documentation):
    the draw is a host computation of the trace (``ft.function``'s ``host_computed``)."""
    dtype = as_dtype(dtype or backend.floatx())

    def drawn():
        return [_core.constant(np.asarray(draw(_rng(seed))), dtype=dtype)]

    if not (seed is None or isinstance(seed, SeedGenerator)):
        return drawn()[0]  # an int seed's numbers are the same on every call
    return host_computed(drawn, [])[0]


def _checked(dtype, op, floating=True):
    """``dtype`` (Keras's reading of it), refused unless it is of the kind ``op`` draws."""
    if dtype is None:
        return None
    resolved = as_dtype(dtype)
    if resolved.is_floating != floating or resolved.is_bool or resolved.is_complex:
        kind = "a floating point" if floating else "an integer"
        raise ValueError(f"`keras.random.{op}` requires {kind} `dtype`. Received: dtype={dtype}")
    return resolved


def normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None):
    """Samples of a normal distribution."""
    shape, dtype = _shape(shape, "normal"), _checked(dtype, "normal")
    return _drawn(seed, lambda rng: rng.normal(mean, stddev, size=shape), dtype)


def uniform(shape, minval=0.0, maxval=1.0, dtype=None, seed=None):
    """Samples uniform in ``[minval, maxval)``."""
    shape, dtype = _shape(shape, "uniform"), _checked(dtype, "uniform")
    return _drawn(seed, lambda rng: rng.uniform(minval, maxval, size=shape), dtype)


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None):
    """Normal samples redrawn until within two standard deviations of the mean."""
    shape, dtype = _shape(shape, "truncated_normal"), _checked(dtype, "truncated_normal")

    def draw(rng):
        values = rng.standard_normal(shape)
        outside = np.abs(values) > 2.0
        while outside.any():
            values[outside] = rng.standard_normal(int(outside.sum()))
            outside = np.abs(values) > 2.0
        return mean + stddev * values

    return _drawn(seed, draw, dtype)


def randint(shape, minval, maxval, dtype="int32", seed=None):
    """Integers uniform in ``[minval, maxval)``."""
    if maxval <= minval:
        raise ValueError(f"randint: maxval must exceed minval. Received: {minval}, {maxval}")
    shape, dtype = _shape(shape, "randint"), _checked(dtype, "randint", floating=False)
    return _drawn(seed, lambda rng: rng.integers(minval, maxval, size=shape), dtype)


def dropout(inputs, rate, noise_shape=None, seed=None):
    """``inputs`` with a fraction ``rate`` of entries zeroed and the rest scaled by
    ``1 / (1 - rate)`` (differentiable in ``inputs``)."""
    if not 0.0 <= rate < 1.0:
        raise ValueError(f"dropout: rate must be in [0, 1). Received: rate={rate!r}")
    inputs = _core.convert_to_tensor(inputs)
    shape = inputs.shape.as_list() if noise_shape is None else _shape(noise_shape, "dropout")
    mask = _drawn(seed, lambda rng: (rng.uniform(size=shape) >= rate) / (1.0 - rate), inputs.dtype)
    return inputs * mask


def shuffle(x, axis=0, seed=None):
    """``x`` with its entries along ``axis`` in a random order."""
    x = _core.convert_to_tensor(x)
    size = x.shape[axis]
    return _core.gather(x, _drawn(seed, lambda rng: rng.permutation(size), "int32"), axis=axis)


def categorical(logits, num_samples, dtype="int32", seed=None):
    """For each row of ``logits``, ``num_samples`` class indices drawn from its softmax."""
    logits = np.asarray(_core.convert_to_tensor(logits).numpy(), dtype=np.float64)
    if logits.ndim != 2:
        raise ValueError(f"categorical: logits must be 2-D. Received shape {logits.shape}")
    probs = np.exp(logits - logits.max(axis=1, keepdims=True))
    probs /= probs.sum(axis=1, keepdims=True)
    num_samples = int(num_samples)

    def draw(rng):
        return np.stack([rng.choice(len(p), size=num_samples, p=p) for p in probs])

    return _drawn(seed, draw, dtype)


def beta(shape, alpha, beta, dtype=None, seed=None):
    """Samples of the Beta(``alpha``, ``beta``) distribution, in ``[0, 1]`` (each parameter a
    positive number, or an array that broadcasts to ``shape``)."""
    a, b = (np.asarray(_core.convert_to_tensor(v).numpy(), np.float64) for v in (alpha, beta))
    if np.any(a <= 0) or np.any(b <= 0):
        raise ValueError(f"beta: alpha and beta must be positive. Received: {alpha!r}, {beta!r}")
    shape, dtype = _shape(shape, "beta"), _checked(dtype, "beta")
    return _drawn(seed, lambda rng: rng.beta(a, b, size=shape), dtype)


def gamma(shape, alpha, dtype=None, seed=None):
    """Samples of the Gamma distribution of shape ``alpha`` (scale 1), positive."""
    a = np.asarray(_core.convert_to_tensor(alpha).numpy(), np.float64)
    if np.any(a <= 0):
        raise ValueError(f"gamma: alpha must be positive. Received: alpha={alpha!r}")
    shape, dtype = _shape(shape, "gamma"), _checked(dtype, "gamma")
    return _drawn(seed, lambda rng: rng.gamma(a, size=shape), dtype)


__all__ = [
    "SeedGenerator",
    "beta",
    "categorical",
    "dropout",
    "gamma",
    "normal",
    "randint",
    "shuffle",
    "truncated_normal",
    "uniform",
]
