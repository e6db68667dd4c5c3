"""``ft.random.Generator``: an RNG object with its own state, as ``tf.random.Generator``.

The state is a key and a counter: every draw is the stateless draw of the seed pair
``(key, counter)``, then the counter moves on by one. So a generator made from a seed draws the
same sequence on every run (not TensorFlow's values: see ``ft.random``), and ``split`` makes
independent generators whose keys are drawn from this one.

The state is Python numbers, so inside a function ``ft.function`` traces each draw is a host
computation of the trace (``_draw``): every replay draws with the generator's next seed, as
TensorFlow's generator ops do, rather than replaying the numbers drawn while tracing.
"""

import operator
import reprlib

import numpy as np

from . import random as _random
from .polymorphic_function import host_computed, tensor_arguments


class Generator:
    """A random number generator with explicit state (``tf.random.Generator``).

    Build one with ``Generator.from_seed(seed)`` (reproducible) or
    ``Generator.from_non_deterministic_state()``. Draws: ``normal``, ``uniform``,
    ``truncated_normal``, ``uniform_full_int``, ``binomial``; ``make_seeds`` gives seeds for the
    ``stateless_*`` ops and ``split`` gives independent generators.

    >>> import ferrotape as ft
    >>> g = ft.random.Generator.from_seed(1)
    >>> a = g.normal([2])
    >>> b = ft.random.Generator.from_seed(1).normal([2])
    >>> bool((a.numpy() == b.numpy()).all())
    True
    """

    def __init__(self, copy_from=None, state=None, alg=None):
        """A generator copied from ``copy_from``, or with the given ``state``.

        Args:
            copy_from: A ``Generator`` to copy the state of.
            state: The state as ``[counter, 0, key]`` (see ``state``).
            alg: The algorithm (see ``ft.random.Algorithm``).
        """
        if copy_from is not None:
            self._key, self._counter, self._alg = copy_from._key, copy_from._counter, copy_from._alg
            return
        if state is None:
            raise ValueError("Generator: give copy_from or state (or use Generator.from_seed)")
        self._alg = _random._algorithm(alg)
        if self._alg is _random.Algorithm.AUTO_SELECT:  # resolves to Philox, as on TF's CPU
            self._alg = _random.Algorithm.PHILOX
        self.reset(state)

    @classmethod
    def from_seed(cls, seed, alg=None):
        """A generator whose draws are a function of the int ``seed``.

        Args:
            seed: An int of any size (or a list of ints, mixed into one key).
            alg: The algorithm (see ``ft.random.Algorithm``).

        Returns:
            A new ``Generator``.
        """
        if isinstance(seed, int) and not -(2**63) <= seed < 2**64:
            # TensorFlow chops a Python int of any size into the state's 64-bit words.
            seed = np.array([(seed >> n) & _random._U64 for n in (0, 64, 128)], np.uint64)
        values = np.asarray(seed.numpy() if hasattr(seed, "numpy") else seed)
        if values.dtype.kind not in "iu":
            raise ValueError(f"Generator.from_seed: seed must be ints, received {seed!r}")
        if values.ndim == 0:
            key = int(values)
        else:
            words = [int(v) & _random._U64 for v in values.reshape(-1)]
            key = int(np.random.SeedSequence(words).generate_state(1, np.uint64)[0])
        return cls(state=[0, 0, _signed(key)], alg=alg)

    @classmethod
    def from_non_deterministic_state(cls, alg=None):
        """A generator seeded from the operating system's entropy.

        Args:
            alg: The algorithm (see ``ft.random.Algorithm``).

        Returns:
            A new ``Generator``.
        """
        key = int(np.random.SeedSequence().generate_state(1, np.uint64)[0])
        return cls(state=[0, 0, _signed(key)], alg=alg)

    @classmethod
    def from_state(cls, state, alg):
        """A generator with the given ``state`` (``[counter, 0, key]``).

        Args:
            state: Three ints.
            alg: The algorithm (see ``ft.random.Algorithm``).

        Returns:
            A new ``Generator``.
        """
        return cls(state=state, alg=alg)

    @classmethod
    def from_key_counter(cls, key, counter, alg):
        """A generator with the given ``key`` (an int) and ``counter`` (an int or ``[c, 0]``).

        Args:
            key: An int.
            counter: An int, or a list whose first entry is the counter.
            alg: The algorithm (see ``ft.random.Algorithm``).

        Returns:
            A new ``Generator``.
        """
        count = np.asarray(counter).reshape(-1)
        return cls(state=[int(count[0]) if count.size else 0, 0, int(key)], alg=alg)

    @property
    def state(self):
        """The state as an int64 tensor ``[counter, 0, key]``."""
        return _random._tensor(np.array([self._counter, 0, self._key], np.int64), "int64")

    @property
    def algorithm(self):
        """The algorithm's value (1 Philox, 2 ThreeFry, 3 auto-select)."""
        return self._alg.value

    @property
    def key(self):
        """The key, an int64 scalar tensor."""
        return _random._tensor(np.int64(self._key), "int64")

    def reset(self, state):
        """Sets the state to ``state`` (``[counter, 0, key]``).

        Args:
            state: Three ints.
        """
        values = np.asarray(state.numpy() if hasattr(state, "numpy") else state)
        if values.shape != (3,) or values.dtype.kind not in "iu":
            raise ValueError(
                f"Generator: state must be 3 ints [counter, 0, key], received {reprlib.repr(state)}"
            )
        self._counter, self._key = _signed(int(values[0])), _signed(int(values[2]))

    def reset_from_seed(self, seed):
        """Resets the state as ``from_seed(seed)`` would make it.

        Args:
            seed: An int.
        """
        other = Generator.from_seed(seed)
        self._key, self._counter = other._key, other._counter

    def reset_from_key_counter(self, key, counter):
        """Resets the key and the counter.

        Args:
            key: An int.
            counter: An int, or a list whose first entry is the counter.
        """
        other = Generator.from_key_counter(key, counter, self._alg)
        self._key, self._counter = other._key, other._counter

    def skip(self, delta):
        """Moves the counter on by ``delta`` draws.

        Args:
            delta: An int.
        """
        self._counter = _signed(self._counter + operator.index(delta))

    def _next_seed(self):
        seed = [self._key, self._counter]
        self._counter = _signed(self._counter + 1)
        return seed

    def _draw(self, stateless_draw, *args):
        """``stateless_draw(args[0], next seed, *args[1:])``; inside a trace, a host computation
        run again on every replay (tensors among ``args`` given that call's values)."""
        tensors, call = tensor_arguments(
            lambda shape, *rest: stateless_draw(shape, self._next_seed(), *rest), args, {}
        )
        return host_computed(lambda *values: [call(*values)], tensors)[0]

    def normal(self, shape, mean=0.0, stddev=1.0, dtype="float32", name=None):
        """Normal samples N(``mean``, ``stddev``²).

        Args:
            shape: The output shape.
            mean: The mean.
            stddev: The standard deviation.
            dtype: A floating dtype.
            name: Ignored (TensorFlow's op name).

        Returns:
            A tensor of ``shape``.
        """
        return self._draw(_random.stateless_normal, shape, mean, stddev, dtype, name)

    def truncated_normal(self, shape, mean=0.0, stddev=1.0, dtype="float32", name=None):
        """Normal samples redrawn until within two ``stddev`` of ``mean``.

        Args:
            shape: The output shape.
            mean: The mean.
            stddev: The standard deviation of the untruncated normal.
            dtype: A floating dtype.
            name: Ignored (TensorFlow's op name).

        Returns:
            A tensor of ``shape``.
        """
        return self._draw(_random.stateless_truncated_normal, shape, mean, stddev, dtype, name)

    def uniform(self, shape, minval=0, maxval=None, dtype="float32", name=None):
        """Uniform samples in ``[minval, maxval)`` (``maxval`` required for int dtypes).

        Args:
            shape: The output shape.
            minval: The lower bound.
            maxval: The upper bound, exclusive; 1 for floats when ``None``.
            dtype: A float or int dtype.
            name: Ignored (TensorFlow's op name).

        Returns:
            A tensor of ``shape``.
        """
        return self._draw(_random.stateless_uniform, shape, minval, maxval, dtype, name)

    def uniform_full_int(self, shape, dtype="int64", name=None):
        """Integers uniform over the whole range of ``dtype``.

        Args:
            shape: The output shape.
            dtype: int32 or int64 (TensorFlow's default, uint64, has no ferrotape dtype).
            name: Ignored (TensorFlow's op name).

        Returns:
            A tensor of ``shape``.
        """
        return self._draw(_random.stateless_uniform, shape, None, None, dtype, name)

    def binomial(self, shape, counts, probs, dtype="int32", name=None):
        """Binomial(``counts``, ``probs``) samples.

        Args:
            shape: The output shape.
            counts: The numbers of trials, broadcastable to ``shape``.
            probs: The success probabilities, broadcastable to ``shape``.
            dtype: The dtype of the result.
            name: Ignored (TensorFlow's op name).

        Returns:
            A tensor of ``shape``.
        """
        return self._draw(_random.stateless_binomial, shape, counts, probs, dtype, name)

    def make_seeds(self, count=1):
        """Seeds for the ``stateless_*`` ops: an int64 tensor ``[2, count]`` (one per column).

        Args:
            count: How many seeds.

        Returns:
            An int64 tensor ``[2, count]``.
        """

        def seeds(_, seed, count):
            rng = _random._stateless_rng("Generator.make_seeds", seed)
            return _random._tensor(_random._new_seeds(rng, count).T, "int64")

        return self._draw(seeds, None, operator.index(count))

    def split(self, count=1):
        """``count`` new generators, independent of this one and of each other.

        Args:
            count: How many generators.

        Returns:
            A list of ``Generator``.
        """
        rng = _random._stateless_rng("Generator.split", self._next_seed())
        keys = _random._new_seeds(rng, operator.index(count))[:, 0]
        return [Generator(state=[0, 0, int(k)], alg=self._alg) for k in keys]


def _signed(value):
    """``value`` wrapped into int64's range (the state is stored as int64)."""
    return (value + (1 << 63)) % (1 << 64) - (1 << 63)


_global_generator = None


def get_global_generator():
    """The global ``Generator``, made from non-deterministic state on first use.

    Returns:
        The global ``Generator``.
    """
    global _global_generator
    if _global_generator is None:
        _global_generator = Generator.from_non_deterministic_state()
    return _global_generator


def set_global_generator(generator):
    """Replaces the global ``Generator`` (``get_global_generator`` returns it from now on).

    Args:
        generator: A ``Generator``.
    """
    global _global_generator
    if not isinstance(generator, Generator):
        raise TypeError(f"set_global_generator: expected a Generator, received {generator!r}")
    _global_generator = generator
