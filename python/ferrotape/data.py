"""``ft.data``: input pipelines in TensorFlow's ``tf.data.Dataset`` style.

Elements are structures (tuples, dicts) of arrays; as in ``tf.data``, lists are values. Inside
the pipeline they are kept as numpy arrays, so slicing, shuffling and batching cost no per-op
dispatch; iteration hands out ferrotape tensors, and ``map`` functions receive and return
ferrotape tensors, as in TensorFlow. Everything runs eagerly on the calling thread; ``prefetch``
is accepted and does nothing.

>>> import numpy as np, ferrotape as ft
>>> ds = ft.data.Dataset.from_tensor_slices((np.arange(5.0), np.arange(5))).batch(2)
>>> [(x.shape.as_list(), y.dtype.name) for x, y in ds]
[([2], 'int64'), ([2], 'int64'), ([1], 'int64')]
"""

import itertools

import numpy as np

from . import _core, nest

AUTOTUNE = -1
INFINITE = -1
UNKNOWN = -2


# As in tf.data, tuples and dicts are structure; lists are values (converted to tensors).
def _flatten(element):
    return nest.flatten(element, sequences=tuple)


def _pack(structure, flat):
    return nest.pack_sequence_as(structure, flat, sequences=tuple)


def _map_structure(fn, element):
    return nest.map_structure(fn, element, sequences=tuple)


def _as_numpy(value):
    """One component as a numpy array with TensorFlow's dtype rules (Python floats float32)."""
    if isinstance(value, np.ndarray):
        return value
    return np.asarray(_core.convert_to_tensor(value))


def _to_tensors(element):
    return _map_structure(_core.constant, element)


def _to_numpy(element):
    return _map_structure(_as_numpy, element)


class Dataset:
    """A re-iterable sequence of elements built from a source and transformations."""

    def __init__(self, make_iterator, length=UNKNOWN):
        self._make_iterator = make_iterator  # () -> iterator over numpy elements
        self._length = length

    # ------------------------------------------------------------------ sources
    @staticmethod
    def from_tensor_slices(tensors, name=None):
        """Slices every component along its first axis: element i holds row i of each."""
        del name
        components = [_as_numpy(c) for c in _flatten(tensors)]
        if not components:
            raise ValueError("from_tensor_slices: expected at least one component")
        sizes = {c.shape[0] if c.ndim else None for c in components}
        if None in sizes:
            raise ValueError("from_tensor_slices: components must have at least one dimension")
        if len(sizes) != 1:
            raise ValueError(
                f"from_tensor_slices: all components must have the same first dimension, "
                f"received {sorted(sizes)}"
            )
        (n,) = sizes

        def rows():
            for i in range(n):
                yield _pack(tensors, [c[i] for c in components])

        return Dataset(rows, n)

    @staticmethod
    def from_tensors(tensors, name=None):
        """A dataset of exactly one element."""
        del name
        element = _to_numpy(tensors)
        return Dataset(lambda: iter([element]), 1)

    @staticmethod
    def range(*args, **kwargs):
        """Like Python's ``range``, with int64 elements."""
        dtype = kwargs.pop("output_type", "int64")
        values = range(*args)
        return Dataset(
            lambda: (np.asarray(v, dtype=np.dtype(str(dtype))) for v in values), len(values)
        )

    # ------------------------------------------------------------------ iteration
    def __iter__(self):
        for element in self._make_iterator():
            yield _to_tensors(element)

    def as_numpy_iterator(self):
        return iter(self._make_iterator())

    def cardinality(self):
        """The number of elements, ``INFINITE`` (-1) or ``UNKNOWN`` (-2)."""
        return _core.constant(self._length, dtype="int64")

    def __len__(self):
        if self._length < 0:
            raise TypeError("The dataset length is unknown or infinite.")
        return self._length

    # ------------------------------------------------------------------ transformations
    def batch(
        self,
        batch_size,
        drop_remainder=False,
        num_parallel_calls=None,
        deterministic=None,
        name=None,
    ):
        """Stacks consecutive elements into batches of ``batch_size`` (the last may be short
        unless ``drop_remainder``)."""
        del num_parallel_calls, deterministic, name
        if batch_size < 1:
            raise ValueError(f"batch: batch_size must be positive, received {batch_size}")

        def batches():
            it = self._make_iterator()
            while True:
                chunk = list(itertools.islice(it, batch_size))
                if not chunk or (drop_remainder and len(chunk) < batch_size):
                    return
                columns = zip(*(_flatten(e) for e in chunk), strict=True)
                yield _pack(chunk[0], [np.stack(c) for c in columns])

        n = self._length
        if n >= 0:
            n = n // batch_size if drop_remainder else -(-n // batch_size)
        return Dataset(batches, n)

    def unbatch(self, name=None):
        """Splits each element along its first axis: the inverse of ``batch``.

        >>> import numpy as np
        >>> ds = Dataset.from_tensor_slices(np.arange(6).reshape(3, 2)).unbatch()
        >>> [int(x) for x in ds]
        [0, 1, 2, 3, 4, 5]
        """
        del name

        def rows():
            for element in self._make_iterator():
                components = _flatten(element)
                sizes = {np.shape(c)[0] if np.ndim(c) else None for c in components}
                if None in sizes or len(sizes) != 1:
                    raise ValueError(
                        "unbatch: every component needs the same first dimension, received "
                        f"shapes {[np.shape(c) for c in components]}"
                    )
                for i in range(sizes.pop()):
                    yield _pack(element, [c[i] for c in components])

        return Dataset(rows, INFINITE if self._length == INFINITE else UNKNOWN)

    def shuffle(self, buffer_size, seed=None, reshuffle_each_iteration=True, name=None):
        """Shuffles with a buffer of ``buffer_size`` elements (uniform when it holds them all).
        With a seed, the order is reproducible; by default each iteration reshuffles."""
        del name
        if buffer_size < 1:
            raise ValueError(f"shuffle: buffer_size must be positive, received {buffer_size}")
        epochs = itertools.count()
        base = np.random.SeedSequence(seed).entropy if seed is not None else None

        def shuffled():
            epoch = next(epochs) if reshuffle_each_iteration else 0
            rng = np.random.default_rng(None if base is None else [base, epoch])
            buffer = []
            for element in self._make_iterator():
                if len(buffer) < buffer_size:
                    buffer.append(element)
                    continue
                i = rng.integers(len(buffer))
                yield buffer[i]
                buffer[i] = element
            while buffer:
                yield buffer.pop(rng.integers(len(buffer)))

        return Dataset(shuffled, self._length)

    def map(self, map_func, num_parallel_calls=None, deterministic=None, name=None):
        """Applies ``map_func`` to each element; a tuple element is passed as arguments."""
        del num_parallel_calls, deterministic, name

        def mapped():
            for element in self._make_iterator():
                tensors = _to_tensors(element)
                out = map_func(*tensors) if isinstance(tensors, tuple) else map_func(tensors)
                yield _to_numpy(out)

        return Dataset(mapped, self._length)

    def filter(self, predicate, name=None):
        del name

        def kept():
            for element in self._make_iterator():
                tensors = _to_tensors(element)
                keep = predicate(*tensors) if isinstance(tensors, tuple) else predicate(tensors)
                if bool(keep):
                    yield element

        return Dataset(kept, UNKNOWN)

    def repeat(self, count=None, name=None):
        """Repeats the dataset ``count`` times (forever when ``None`` or -1)."""
        del name
        forever = count is None or count < 0

        def repeated():
            for _ in itertools.count() if forever else range(count):
                yield from self._make_iterator()

        n = self._length
        length = INFINITE if forever and n != 0 else (n * count if n >= 0 else n)
        return Dataset(repeated, 0 if n == 0 else length)

    def take(self, count, name=None):
        """The first ``count`` elements (all of them when ``count`` is -1)."""
        del name
        if count < 0:
            n = self._length
        elif self._length == UNKNOWN:
            n = UNKNOWN
        elif self._length == INFINITE:
            n = count
        else:
            n = min(count, self._length)
        stop = None if count < 0 else count
        return Dataset(lambda: itertools.islice(self._make_iterator(), stop), n)

    def skip(self, count, name=None):
        del name
        n = max(self._length - count, 0) if self._length >= 0 else self._length
        return Dataset(lambda: itertools.islice(self._make_iterator(), count, None), n)

    def enumerate(self, start=0, name=None):
        del name

        def numbered():
            for i, element in enumerate(self._make_iterator(), start):
                yield (np.asarray(i, np.int64), element)

        return Dataset(numbered, self._length)

    def cache(self, filename="", name=None):
        """Keeps the elements in memory after the first full pass.

        Each iteration that starts before a pass has completed reads the source itself, so
        two iterators at once each see every element once; the first to finish a full pass
        fills the cache (a pass stopped early fills nothing, as in TensorFlow).

        >>> ds = Dataset.range(3).cache()
        >>> a, b = iter(ds), iter(ds)
        >>> [(int(next(a)), int(next(b))) for _ in range(3)]
        [(0, 0), (1, 1), (2, 2)]
        """
        del filename, name
        complete = []  # the elements of the first finished pass, once there is one

        def cached():
            if complete:
                yield from complete[0]
                return
            elements = []
            for element in self._make_iterator():
                elements.append(element)
                yield element
            if not complete:
                complete.append(elements)

        return Dataset(cached, self._length)

    def prefetch(self, buffer_size, name=None):
        """Accepted for compatibility; the pipeline runs eagerly on the calling thread."""
        del buffer_size, name
        return self


__all__ = ["AUTOTUNE", "Dataset", "INFINITE", "UNKNOWN"]
