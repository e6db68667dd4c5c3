"""``ft.random``: seeded sampling (``set_seed`` makes programs reproducible).

The native draws (``uniform``, ``normal``, ``truncated_normal``, ``shuffle``) follow TensorFlow's
seed contract. The distributions defined here draw with numpy's generators:

- the stateful ones (``categorical``, ``gamma``, ``poisson``) seed a numpy generator from one
  native ``uniform`` draw, so they follow the same contract (the n-th random op of a program
  after ``set_seed`` draws the same numbers every run);
- the stateless ones (``stateless_*``) are a pure function of their ``seed`` pair: numpy's Philox
  keyed by the two ints. The same seed gives the same values on every run and machine, but not
  TensorFlow's values: its Philox/ThreeFry streams are not reproduced.
"""

import enum
import operator
import reprlib

import numpy as np

from . import _core
from ._exports.random import *  # noqa: F403 (the native names: scripts/gen_bindings.py)
from ._exports.random import __all__ as _native
from .dtypes import as_dtype
from .polymorphic_function import computed_on_host_when_traced

_U64 = (1 << 64) - 1


class Algorithm(enum.Enum):
    """TensorFlow's RNG algorithm names; ferrotape draws with numpy's Philox for all of them.

    ``alg`` arguments accept a member, its name (``"philox"``, ``"threefry"``,
    ``"auto_select"``) or its value.
    """

    PHILOX = 1
    THREEFRY = 2
    AUTO_SELECT = 3


def _algorithm(alg):
    if alg is None:
        return Algorithm.AUTO_SELECT
    if isinstance(alg, Algorithm):
        return alg
    if isinstance(alg, str) and alg.upper() in Algorithm.__members__:
        return Algorithm[alg.upper()]
    if isinstance(alg, (int, np.integer)) and int(alg) in (1, 2, 3):
        return Algorithm(int(alg))
    raise ValueError(
        f"random: alg must be 'philox', 'threefry', 'auto_select' or an Algorithm, "
        f"received alg={reprlib.repr(alg)}"
    )


def _values(x):
    return np.asarray(x.numpy() if hasattr(x, "numpy") else x)


def _seed_pair(op, seed):
    """The two ints of a stateless ``seed`` (a shape-[2] int tensor, array or list)."""
    array = _values(seed)
    if array.shape != (2,) or array.dtype.kind not in "iu":
        raise ValueError(
            f"{op}: seed must be a shape [2] integer tensor, received seed={reprlib.repr(seed)}"
        )
    return int(array[0]), int(array[1])


def _stateless_rng(op, seed):
    """numpy's Philox keyed by the seed pair: a pure function of ``seed``."""
    s0, s1 = _seed_pair(op, seed)
    return np.random.Generator(np.random.Philox(key=(s0 & _U64) | ((s1 & _U64) << 64)))


_MAXINT32 = 2**31 - 1


def _seed_int(op, seed):
    """A global or op seed as the kernels take it: TF reduces every seed to
    ``seed % (2**31 - 1)`` (its ``random_seed._truncate_seed``), so any int is accepted, negative
    or past 64 bits, and seeds that agree modulo ``2**31 - 1`` draw alike. ``None`` stays."""
    if seed is None:
        return None
    try:
        value = operator.index(seed)
    except TypeError:
        array = _values(seed)
        if array.shape != () or array.dtype.kind not in "iub":
            raise TypeError(
                f"{op}: seed must be an int or None, received seed={reprlib.repr(seed)}"
            ) from None
        value = int(array)
    return value % _MAXINT32


def set_seed(seed):
    """Fixes the global seed: after it, the n-th random op of a program draws the same numbers
    on every run (an op seed fixes one op); ``None`` returns to fresh numbers.

    Any int is accepted, as in TensorFlow, which reduces it modulo ``2**31 - 1``: ``set_seed(s)``
    and ``set_seed(s % (2**31 - 1))`` draw alike.

    >>> import ferrotape as ft
    >>> ft.random.set_seed(2**70)
    >>> a = ft.random.uniform([3], seed=5)
    >>> ft.random.set_seed(2**70 % (2**31 - 1))
    >>> bool(ft.reduce_all(ft.random.uniform([3], seed=5) == a))
    True
    >>> ft.random.set_seed(None)

    Args:
        seed: An int (any size or sign), or None.

    Returns:
        None.

    Raises:
        TypeError: if ``seed`` is not an int or None.
    """
    _core.random.set_seed(_seed_int("set_seed", seed))


def _op_rng(seed, op="random"):
    """A numpy generator for one stateful op, seeded by one native draw (TF's seed contract)."""
    seed = _seed_int(op, seed)
    words = _core.random.uniform([4], maxval=2**31 - 1, dtype="int32", seed=seed).numpy()
    return np.random.default_rng([int(w) for w in words])


def _shape(op, shape):
    array = _values(shape)
    if array.ndim > 1 or (array.size and array.dtype.kind not in "iu") or (array < 0).any():
        raise ValueError(f"{op}: shape must be a list of non-negative ints, received {shape!r}")
    return tuple(int(d) for d in array.reshape(-1))


def _float_dtype(op, dtype):
    dtype = as_dtype(dtype)
    if not dtype.is_floating:
        raise ValueError(f"{op}: dtype must be a floating dtype, received {dtype.name}")
    return dtype


def _tensor(array, dtype):
    return _core.cast(_core.constant(np.asarray(array)), dtype)


def _uniform(op, rng, shape, minval, maxval, dtype):
    dtype = as_dtype(dtype)
    if dtype.is_integer:
        if minval is None and maxval is None:
            info = np.iinfo(dtype.as_numpy_dtype)
            return _tensor(rng.integers(info.min, info.max, shape, endpoint=True), dtype)
        if maxval is None:
            raise ValueError(f"{op}: maxval must be given for integer dtype {dtype.name}")
        minval = 0 if minval is None else minval
        if int(maxval) <= int(minval):
            raise ValueError(f"{op}: need minval < maxval, received {minval} and {maxval}")
        return _tensor(rng.integers(int(minval), int(maxval), shape), dtype)
    _float_dtype(op, dtype)
    lo = 0.0 if minval is None else _values(minval).astype(np.float64)
    hi = 1.0 if maxval is None else _values(maxval).astype(np.float64)
    return _tensor(lo + (hi - lo) * rng.random(shape), dtype)


def _truncated(rng, shape, low=-2.0, high=2.0):
    """Standard normal samples redrawn until inside ``[low, high]`` (broadcast to ``shape``)."""
    low, high = np.broadcast_to(low, shape), np.broadcast_to(high, shape)
    out = rng.standard_normal(shape)
    bad = (out < low) | (out > high)
    while bad.any():
        out[bad] = rng.standard_normal(int(bad.sum()))
        bad = (out < low) | (out > high)
    return out


def _categorical(op, rng, logits, num_samples, dtype):
    logits = _values(logits).astype(np.float64)
    if logits.ndim != 2:
        raise ValueError(
            f"{op}: logits must be 2-D [batch, classes], received shape {list(logits.shape)}"
        )
    num_samples = operator.index(num_samples)
    dtype = as_dtype("int64" if dtype is None else dtype)
    if not dtype.is_integer:
        raise ValueError(f"{op}: dtype must be int32 or int64, received {dtype.name}")
    # The Gumbel-max trick: argmax(logits + Gumbel noise) is a draw from softmax(logits); a
    # -inf logit is never drawn.
    gumbel = -np.log(-np.log(rng.random((logits.shape[0], num_samples, logits.shape[1]))))
    return _tensor(np.argmax(logits[:, None, :] + gumbel, axis=-1), dtype)


def categorical(logits, num_samples, dtype=None, seed=None, name=None):
    """Draws class indices from the categorical distributions ``softmax(logits)``.

    Args:
        logits: A 2-D tensor ``[batch, num_classes]`` of unnormalized log-probabilities.
        num_samples: How many indices to draw per row.
        dtype: The integer dtype of the result (int64 when ``None``).
        seed: An int op seed (see ``set_seed``).
        name: Ignored (TensorFlow's op name).

    Returns:
        An int tensor ``[batch, num_samples]``.

    >>> import ferrotape as ft
    >>> ft.random.categorical(ft.math.log([[0.0, 1.0]]), 3, seed=1).numpy()
    array([[1, 1, 1]])
    """
    del name
    return _categorical("categorical", _op_rng(seed, "categorical"), logits, num_samples, dtype)


def _gamma(rng, shape, alpha, beta, dtype):
    alpha = _values(alpha).astype(np.float64)
    beta = np.ones(()) if beta is None else _values(beta).astype(np.float64)
    batch = np.broadcast_shapes(alpha.shape, beta.shape)
    return _tensor(rng.standard_gamma(alpha, shape + batch) / beta, dtype)


def gamma(shape, alpha, beta=None, dtype="float32", seed=None, name=None):
    """Samples of Gamma(``alpha``, ``beta``) (shape ``alpha``, rate ``beta``).

    Args:
        shape: The sample shape, prepended to the broadcast shape of ``alpha`` and ``beta``.
        alpha: The concentration (shape) parameters, positive.
        beta: The rate (inverse scale) parameters, positive; ``None`` means 1.
        dtype: A floating dtype.
        seed: An int op seed (see ``set_seed``).
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor of shape ``shape + broadcast(alpha, beta).shape``.

    Gradient: none (the samples are not reparameterized).

    >>> import ferrotape as ft
    >>> ft.random.gamma([2], alpha=[1.0, 3.0], seed=1).shape
    TensorShape([2, 2])
    """
    del name
    dtype = _float_dtype("gamma", dtype)
    return _gamma(_op_rng(seed, "gamma"), _shape("gamma", shape), alpha, beta, dtype)


def poisson(shape, lam, dtype="float32", seed=None, name=None):
    """Samples of Poisson(``lam``).

    Args:
        shape: The sample shape, prepended to ``lam``'s shape.
        lam: The rates, non-negative.
        dtype: The dtype of the result (float or int).
        seed: An int op seed (see ``set_seed``).
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor of shape ``shape + lam.shape``.

    >>> import ferrotape as ft
    >>> ft.random.poisson([3], lam=0.0, seed=1).numpy()
    array([0., 0., 0.], dtype=float32)
    """
    del name
    lam = _values(lam).astype(np.float64)
    rng = _op_rng(seed, "poisson")
    return _tensor(rng.poisson(lam, _shape("poisson", shape) + lam.shape), as_dtype(dtype))


@computed_on_host_when_traced()
def stateless_uniform(
    shape, seed, minval=0, maxval=None, dtype="float32", name=None, alg="auto_select"
):
    """Uniform samples in ``[minval, maxval)``, a pure function of ``seed``.

    Deterministic: the same ``seed`` gives the same values every run, but not TensorFlow's
    values (ferrotape keys numpy's Philox with the seed pair).

    Args:
        shape: The output shape.
        seed: A shape ``[2]`` int tensor.
        minval: The lower bound (``None`` with ``maxval=None`` for the full range of an int dtype).
        maxval: The upper bound, exclusive; 1 for floats when ``None``, required for ints.
        dtype: A float or int dtype.
        name: Ignored (TensorFlow's op name).
        alg: The algorithm name; accepted and checked, numpy's Philox draws for all of them.

    Returns:
        A tensor of ``shape`` and ``dtype``.

    >>> import ferrotape as ft
    >>> a = ft.random.stateless_uniform([3], seed=[1, 2])
    >>> bool((a.numpy() == ft.random.stateless_uniform([3], seed=[1, 2]).numpy()).all())
    True
    """
    del name
    _algorithm(alg)
    rng = _stateless_rng("stateless_uniform", seed)
    shape = _shape("stateless_uniform", shape)
    return _uniform("stateless_uniform", rng, shape, minval, maxval, dtype)


@computed_on_host_when_traced()
def stateless_normal(shape, seed, mean=0.0, stddev=1.0, dtype="float32", name=None, alg=None):
    """Normal samples N(``mean``, ``stddev``²), a pure function of ``seed``.

    Deterministic in ``seed``, but not TensorFlow's values (see ``stateless_uniform``).

    Args:
        shape: The output shape.
        seed: A shape ``[2]`` int tensor.
        mean: The mean, broadcastable to ``shape``.
        stddev: The standard deviation, broadcastable to ``shape``.
        dtype: A floating dtype.
        name: Ignored (TensorFlow's op name).
        alg: The algorithm name (see ``stateless_uniform``).

    Returns:
        A tensor of ``shape`` and ``dtype``.

    >>> import ferrotape as ft
    >>> ft.random.stateless_normal([2, 3], seed=[4, 2]).shape
    TensorShape([2, 3])
    """
    del name
    _algorithm(alg)
    dtype = _float_dtype("stateless_normal", dtype)
    rng = _stateless_rng("stateless_normal", seed)
    z = rng.standard_normal(_shape("stateless_normal", shape))
    return _tensor(_values(mean) + _values(stddev) * z, dtype)


@computed_on_host_when_traced()
def stateless_truncated_normal(
    shape, seed, mean=0.0, stddev=1.0, dtype="float32", name=None, alg=None
):
    """Normal samples redrawn until within two ``stddev`` of ``mean``, a pure function of ``seed``.

    Deterministic in ``seed``, but not TensorFlow's values (see ``stateless_uniform``).

    Args:
        shape: The output shape.
        seed: A shape ``[2]`` int tensor.
        mean: The mean, broadcastable to ``shape``.
        stddev: The standard deviation of the untruncated normal.
        dtype: A floating dtype.
        name: Ignored (TensorFlow's op name).
        alg: The algorithm name (see ``stateless_uniform``).

    Returns:
        A tensor of ``shape`` and ``dtype``, every value within ``mean ± 2 * stddev``.

    >>> import ferrotape as ft
    >>> x = ft.random.stateless_truncated_normal([100], seed=[1, 1])
    >>> bool(ft.reduce_max(ft.abs(x)) <= 2.0)
    True
    """
    del name
    _algorithm(alg)
    dtype = _float_dtype("stateless_truncated_normal", dtype)
    rng = _stateless_rng("stateless_truncated_normal", seed)
    z = _truncated(rng, _shape("stateless_truncated_normal", shape))
    return _tensor(_values(mean) + _values(stddev) * z, dtype)


@computed_on_host_when_traced()
def stateless_parameterized_truncated_normal(
    shape, seed, means=0.0, stddevs=1.0, minvals=-2.0, maxvals=2.0, name=None
):
    """Normal samples N(``means``, ``stddevs``²) truncated to ``[minvals, maxvals]``.

    Deterministic in ``seed``, but not TensorFlow's values (see ``stateless_uniform``).

    Args:
        shape: The output shape.
        seed: A shape ``[2]`` int tensor.
        means: The means, broadcastable to ``shape``.
        stddevs: The standard deviations, positive, broadcastable to ``shape``.
        minvals: The lower bounds, broadcastable to ``shape``.
        maxvals: The upper bounds, broadcastable to ``shape`` and above ``minvals``.
        name: Ignored (TensorFlow's op name).

    Returns:
        A float32 tensor of ``shape`` (float64 when ``means`` is a float64 tensor).

    >>> import ferrotape as ft
    >>> x = ft.random.stateless_parameterized_truncated_normal([50], [3, 4], minvals=0.0)
    >>> bool(ft.reduce_min(x) >= 0.0)
    True
    """
    del name
    op = "stateless_parameterized_truncated_normal"
    rng = _stateless_rng(op, seed)
    shape = _shape(op, shape)
    mean, std = _values(means).astype(np.float64), _values(stddevs).astype(np.float64)
    low = (_values(minvals) - mean) / std
    high = (_values(maxvals) - mean) / std
    if (np.broadcast_to(low, shape) >= np.broadcast_to(high, shape)).any():
        raise ValueError(f"{op}: every minval must be below its maxval")
    # Rejection from the standard normal: fine for bounds that keep a fair share of the mass.
    z = _truncated(rng, shape, low, high)
    dtype = "float64" if getattr(means, "dtype", None) == "float64" else "float32"
    return _tensor(mean + std * z, dtype)


@computed_on_host_when_traced()
def stateless_categorical(logits, num_samples, seed, dtype="int64", name=None):
    """Draws class indices from ``softmax(logits)``, a pure function of ``seed``.

    Deterministic in ``seed``, but not TensorFlow's values (see ``stateless_uniform``).

    Args:
        logits: A 2-D tensor ``[batch, num_classes]`` of unnormalized log-probabilities.
        num_samples: How many indices to draw per row.
        seed: A shape ``[2]`` int tensor.
        dtype: int32 or int64.
        name: Ignored (TensorFlow's op name).

    Returns:
        An int tensor ``[batch, num_samples]``.

    >>> import ferrotape as ft
    >>> ft.random.stateless_categorical(ft.math.log([[1.0, 0.0]]), 2, seed=[7, 7]).numpy()
    array([[0, 0]])
    """
    del name
    rng = _stateless_rng("stateless_categorical", seed)
    return _categorical("stateless_categorical", rng, logits, num_samples, dtype)


@computed_on_host_when_traced()
def stateless_binomial(shape, seed, counts, probs, output_dtype="int32", name=None):
    """Binomial(``counts``, ``probs``) samples, a pure function of ``seed``.

    Deterministic in ``seed``, but not TensorFlow's values (see ``stateless_uniform``).

    Args:
        shape: The output shape.
        seed: A shape ``[2]`` int tensor.
        counts: The numbers of trials, broadcastable to ``shape``.
        probs: The success probabilities in ``[0, 1]``, broadcastable to ``shape``.
        output_dtype: The dtype of the result (int or float).
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor of ``shape``.

    >>> import ferrotape as ft
    >>> ft.random.stateless_binomial([3], [1, 2], counts=5, probs=1.0).numpy()
    array([5, 5, 5], dtype=int32)
    """
    del name
    rng = _stateless_rng("stateless_binomial", seed)
    shape = _shape("stateless_binomial", shape)
    counts = np.broadcast_to(_values(counts).astype(np.int64), shape)
    probs = np.broadcast_to(_values(probs).astype(np.float64), shape)
    return _tensor(rng.binomial(counts, probs), as_dtype(output_dtype))


@computed_on_host_when_traced()
def stateless_gamma(shape, seed, alpha, beta=None, dtype="float32", name=None):
    """Gamma(``alpha``, ``beta``) samples (rate ``beta``), a pure function of ``seed``.

    Deterministic in ``seed``, but not TensorFlow's values (see ``stateless_uniform``).

    Args:
        shape: The output shape; ``alpha`` and ``beta`` broadcast to it.
        seed: A shape ``[2]`` int tensor.
        alpha: The concentrations, positive.
        beta: The rates, positive; ``None`` means 1.
        dtype: A floating dtype.
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor of ``shape``.

    >>> import ferrotape as ft
    >>> ft.random.stateless_gamma([2, 3], [1, 2], alpha=[1.0, 2.0, 3.0]).shape
    TensorShape([2, 3])
    """
    del name
    dtype = _float_dtype("stateless_gamma", dtype)
    rng = _stateless_rng("stateless_gamma", seed)
    shape = _shape("stateless_gamma", shape)
    alpha = np.broadcast_to(_values(alpha).astype(np.float64), shape)
    beta = 1.0 if beta is None else np.broadcast_to(_values(beta).astype(np.float64), shape)
    return _tensor(rng.standard_gamma(alpha) / beta, dtype)


@computed_on_host_when_traced()
def stateless_poisson(shape, seed, lam, dtype="int32", name=None):
    """Poisson(``lam``) samples, a pure function of ``seed``.

    Deterministic in ``seed``, but not TensorFlow's values (see ``stateless_uniform``).

    Args:
        shape: The output shape; ``lam`` broadcasts to it.
        seed: A shape ``[2]`` int tensor.
        lam: The rates, non-negative.
        dtype: The dtype of the result (int or float).
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor of ``shape``.

    >>> import ferrotape as ft
    >>> ft.random.stateless_poisson([2], [1, 2], lam=0.0).numpy()
    array([0, 0], dtype=int32)
    """
    del name
    rng = _stateless_rng("stateless_poisson", seed)
    shape = _shape("stateless_poisson", shape)
    lam = np.broadcast_to(_values(lam).astype(np.float64), shape)
    return _tensor(rng.poisson(lam), as_dtype(dtype))


def _new_seeds(rng, count, dtype=np.int64):
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, (count, 2), endpoint=True, dtype=dtype)


def _seed_dtype(seed):
    """The int dtype a derived seed keeps: the seed's own (int32 for a list of Python ints)."""
    if hasattr(seed, "numpy") or isinstance(seed, np.ndarray):
        values = np.asarray(seed.numpy() if hasattr(seed, "numpy") else seed)
        return np.int64 if values.dtype.itemsize > 4 else np.int32
    return np.int32


@computed_on_host_when_traced()
def split(seed, num=2, alg="auto_select"):
    """Splits a stateless ``seed`` into ``num`` new seeds (a pure function of ``seed``).

    Args:
        seed: A shape ``[2]`` int tensor.
        num: How many seeds to make.
        alg: The algorithm name (see ``stateless_uniform``).

    Returns:
        A tensor ``[num, 2]`` of ``seed``'s int dtype (int32 for a list of Python ints).

    >>> import ferrotape as ft
    >>> ft.random.split([1, 2], num=3).shape
    TensorShape([3, 2])
    """
    _algorithm(alg)
    dtype = _seed_dtype(seed)
    seeds = _new_seeds(_stateless_rng("split", seed), operator.index(num), dtype)
    return _core.constant(seeds)


@computed_on_host_when_traced()
def fold_in(seed, data, alg="auto_select"):
    """A new stateless seed from ``seed`` and the int ``data`` (e.g. a step or replica index).

    Args:
        seed: A shape ``[2]`` int tensor.
        data: An int; different values give different seeds.
        alg: The algorithm name (see ``stateless_uniform``).

    Returns:
        A tensor ``[2]`` of ``seed``'s int dtype (int32 for a list of Python ints).

    >>> import ferrotape as ft
    >>> a, b = ft.random.fold_in([1, 2], 0), ft.random.fold_in([1, 2], 1)
    >>> bool((a.numpy() != b.numpy()).any())
    True
    """
    _algorithm(alg)
    s0, s1 = _seed_pair("fold_in", seed)
    data = int(_values(data))
    mixed = np.random.SeedSequence([s0 & _U64, s1 & _U64, data & _U64]).generate_state(2, np.uint64)
    dtype = _seed_dtype(seed)
    return _core.constant(mixed.view(np.int64).astype(dtype))


def create_rng_state(seed, alg):
    """The initial state of a ``Generator`` for the int ``seed``: ``[seed, 0, 0]`` for Philox.

    Args:
        seed: An int.
        alg: The algorithm (see ``Algorithm``).

    Returns:
        An int64 tensor of 3 values.

    >>> import ferrotape as ft
    >>> ft.random.create_rng_state(1234, "philox").numpy()
    array([1234,    0,    0])
    """
    _algorithm(alg)
    return _core.constant(np.array([operator.index(seed), 0, 0], dtype=np.int64))


from ._candidate_sampling import (  # noqa: E402
    all_candidate_sampler,
    fixed_unigram_candidate_sampler,
    learned_unigram_candidate_sampler,
    log_uniform_candidate_sampler,
    uniform_candidate_sampler,
)
from ._generator import Generator, get_global_generator, set_global_generator  # noqa: E402

__all__ = [
    *_native,  # set_seed among them, replaced above by the wrapper that takes any int
    "Algorithm",
    "Generator",
    "all_candidate_sampler",
    "categorical",
    "create_rng_state",
    "fixed_unigram_candidate_sampler",
    "fold_in",
    "gamma",
    "get_global_generator",
    "learned_unigram_candidate_sampler",
    "log_uniform_candidate_sampler",
    "poisson",
    "set_global_generator",
    "split",
    "stateless_binomial",
    "stateless_categorical",
    "stateless_gamma",
    "stateless_normal",
    "stateless_parameterized_truncated_normal",
    "stateless_poisson",
    "stateless_truncated_normal",
    "stateless_uniform",
    "uniform_candidate_sampler",
]
