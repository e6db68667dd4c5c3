"""``ft.data``: input pipelines in TensorFlow's ``tf.data.Dataset`` style.

Elements are structures (tuples, dicts) of arrays (or of datasets: ``window``'s elements); as in
``tf.data``, lists are values. Inside the pipeline they are kept as numpy arrays, so slicing,
shuffling and batching cost no per-op dispatch; iteration hands out ferrotape tensors, and
``map`` functions receive and return ferrotape tensors, as in TensorFlow. Everything runs
eagerly on the calling thread; ``prefetch`` is accepted and does nothing.

A dataset is a recipe: each ``iter()`` starts a fresh pipeline, and no transformation keeps
per-iteration state on the dataset itself, so two iterators over one dataset never disturb each
other. ``cache`` is the one shared state: as in TensorFlow, each iterator that starts before the
cache is complete reads its input into a list of its own, and the first to finish a whole pass
publishes it; later iterators read the published list.

Cardinalities follow ``tf.data``: a count, ``INFINITE_CARDINALITY`` (-1) or
``UNKNOWN_CARDINALITY`` (-2); ``Model.fit`` refuses an infinite dataset without
``steps_per_epoch``.

>>> import numpy as np, ferrotape as ft
>>> ds = ft.data.Dataset.from_tensor_slices((np.arange(5.0), np.arange(5))).batch(2)
>>> [(x.shape.as_list(), y.dtype.name) for x, y in ds]
[([2], 'int64'), ([2], 'int64'), ([1], 'int64')]
"""

import itertools
import numbers
import reprlib

import numpy as np

from . import _core, dtypes, nest
from .data_iterators import Iterator, NumpyIterator
from .data_options import Options, ThreadingOptions

AUTOTUNE = -1
INFINITE_CARDINALITY = INFINITE = -1
UNKNOWN_CARDINALITY = UNKNOWN = -2


# As in tf.data, tuples and dicts are structure; lists are values (converted to tensors).
def _flatten(element, who="Dataset"):
    return nest.flatten_for(element, tuple, who)


def _pack(structure, flat, who="Dataset"):
    return nest.pack_for(structure, flat, tuple, who)


def _map_structure(fn, element, who="Dataset"):
    return nest.map_for(fn, (element,), tuple, True, who)


def _int_arg(who, name, value):
    """A Python int from an int, a numpy integer or a scalar integer tensor (TF's int64
    arguments); anything else is a TypeError naming the argument."""
    if isinstance(value, (_core.Tensor, _core.Variable, np.ndarray)) and not np.shape(value):
        value = np.asarray(value)[()]
    if isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_)):
        return int(value)
    raise TypeError(f"{who}: {name} must be an integer, received {name}={reprlib.repr(value)}")


def _as_numpy(value):
    """One component as a numpy array with TensorFlow's dtype rules (Python floats float32);
    a dataset (a window, or what ``map`` made of one) stays a dataset."""
    if isinstance(value, (np.ndarray, Dataset)):
        return value
    return np.asarray(_core.convert_to_tensor(value))


def _to_tensor(component):
    # A window's components are datasets (see ``Dataset.window``): they stay as they are.
    return component if isinstance(component, Dataset) else _core.constant(component)


def _to_tensors(element):
    return _map_structure(_to_tensor, element)


def _to_numpy(element):
    return _map_structure(_as_numpy, element)


def _call_unpacked(fn, element):
    """Calls ``fn`` on an element as ``map`` does: a tuple element as separate arguments."""
    tensors = _to_tensors(element)
    return fn(*tensors) if isinstance(tensors, tuple) else fn(tensors)


def _exhaust(iterator):
    for _ in iterator:
        pass
    yield from ()


def _scalar_bool(value):
    """``filter``'s predicate result as a bool; it must be a scalar, as in TensorFlow."""
    array = np.asarray(value)
    if array.shape != ():
        raise ValueError(
            f"Dataset.filter: the predicate must return a scalar boolean, received a value of "
            f"shape {array.shape}"
        )
    return bool(array)


class Dataset:
    """A re-iterable sequence of elements built from a source and transformations."""

    def __init__(self, make_iterator, length=UNKNOWN):
        """A dataset over the elements ``make_iterator()`` yields (the sources build these).

        Args:
            make_iterator: A callable returning a fresh iterator over the (numpy) elements.
            length: The number of elements, or ``INFINITE`` / ``UNKNOWN``.
        """
        self._make_iterator = make_iterator  # () -> iterator over numpy elements
        self._length = length

    # ------------------------------------------------------------------ sources
    @staticmethod
    def from_tensor_slices(tensors, name=None):
        """Slices every component along its first axis: element i holds row i of each.

        Args:
            tensors: A tensor, array or nest (tuple, dict) of them, all with the same first
                dimension.
            name: Ignored (TensorFlow's op name).

        Returns:
            A new ``Dataset``.

        >>> [int(x) for x in Dataset.from_tensor_slices([1, 2, 3])]
        [1, 2, 3]
        """
        del name
        who = "Dataset.from_tensor_slices"
        components = [_as_numpy(c) for c in _flatten(tensors, who)]
        if not components:
            raise ValueError(
                f"{who}: expected at least one component, received {reprlib.repr(tensors)}"
            )
        sizes = {c.shape[0] if c.ndim else None for c in components}
        if None in sizes:
            raise ValueError(
                f"{who}: every component needs at least one dimension to slice, received shapes "
                f"{[c.shape for c in components]}"
            )
        if len(sizes) != 1:
            raise ValueError(
                f"{who}: all components must have the same first dimension, received "
                f"{sorted(sizes)}"
            )
        (n,) = sizes

        def rows():
            for i in range(n):
                yield _pack(tensors, [c[i] for c in components], who)

        return Dataset(rows, n)

    @staticmethod
    def from_tensors(tensors, name=None):
        """A dataset of exactly one element.

        Args:
            tensors: A tensor, array or nest of them: the one element.
            name: Ignored (TensorFlow's op name).

        Returns:
            A new ``Dataset``.

        >>> [x.numpy().tolist() for x in Dataset.from_tensors([1, 2])]
        [[1, 2]]
        """
        del name
        element = _to_numpy(tensors)
        return Dataset(lambda: iter([element]), 1)

    @staticmethod
    def range(*args, **kwargs):
        """Like Python's ``range``, with int64 elements (``output_type`` to change it).

        Args:
            *args: ``stop``, or ``start, stop`` or ``start, stop, step`` (ints; step not 0).
            **kwargs: ``output_type``, the elements' dtype; ``name``, ignored.

        Returns:
            A new ``Dataset``.

        >>> [int(x) for x in Dataset.range(1, 7, 2)]
        [1, 3, 5]
        """
        dtype = np.dtype(dtypes.as_dtype(kwargs.pop("output_type", "int64")).name)
        kwargs.pop("name", None)
        if kwargs:
            raise TypeError(f"Dataset.range: unexpected arguments {sorted(kwargs)}")
        if not 1 <= len(args) <= 3:
            raise TypeError(
                f"Dataset.range: expected 1 to 3 arguments (start, stop, step), received "
                f"{len(args)}"
            )
        names = ("stop",) if len(args) == 1 else ("start", "stop", "step")
        bounds = [_int_arg("Dataset.range", n, a) for n, a in zip(names, args, strict=False)]
        if len(bounds) == 3 and bounds[2] == 0:
            raise ValueError("Dataset.range: step must not be zero, received step=0")
        values = range(*bounds)
        return Dataset(lambda: (np.asarray(v, dtype=dtype) for v in values), len(values))

    # ------------------------------------------------------------------ iteration
    def __iter__(self):
        iterator = Iterator(self._make_iterator(), _to_tensors, restart=self._make_iterator)
        if _core.is_tracing():
            # Each replay iterates afresh from here (reshuffling, as each eager pass does).
            def restart():
                iterator._restart(self._make_iterator())

            _core.trace_host_effect(restart, [])
        return iterator

    def as_numpy_iterator(self):
        """An iterator over the elements as numpy values (nests of arrays).

        Returns:
            A ``NumpyIterator``.

        >>> list(Dataset.range(2).as_numpy_iterator())
        [array(0), array(1)]

        Raises:
            RuntimeError: inside a function ``ft.function`` traces (as in TensorFlow: a
                replay could not give Python the numpy values).
        """
        if _core.is_tracing():
            raise RuntimeError("Dataset.as_numpy_iterator() is only supported in eager mode.")
        return NumpyIterator(self._make_iterator())

    def with_options(self, options, name=None):
        """This dataset with ``options`` merged into its options (``options()``).

        ferrotape's eager pipeline runs the same whatever the options; they are kept by the
        dataset returned here (transformations applied after it start again from defaults).

        Args:
            options: A ``tf.data.Options``.
            name: Ignored (TensorFlow's op name).

        Returns:
            A new ``Dataset`` with the same elements.
        """
        del name
        if not isinstance(options, Options):
            raise TypeError(f"with_options: expected a tf.data.Options, received {type(options)}")
        dataset = Dataset(self._make_iterator, self._length)
        dataset._options = self.options().merge(options)
        return dataset

    def options(self):
        """The dataset's options (a new ``Options`` whose fields are unset by default).

        Returns:
            A ``tf.data.Options``.
        """
        return Options().merge(getattr(self, "_options", None) or Options())

    def reduce(self, initial_state, reduce_func, name=None):
        """Folds the dataset into one value: ``state = reduce_func(state, element)`` for each
        element in order, from ``initial_state``.

        Args:
            initial_state: The starting state, a tensor or a structure of tensors.
            reduce_func: A callable ``(state, element) -> new state`` of the same structure (the
                element is passed whole, a tuple as one argument, as in TensorFlow).
            name: Ignored (TensorFlow's op name).

        Returns:
            The final state, as tensors.

        >>> int(Dataset.range(5).reduce(0, lambda total, x: total + int(x)))
        10
        """
        del name
        state = nest.map_structure(_core.convert_to_tensor, initial_state)
        # Through the dataset's iterator, whose elements a traced function fetches on every call.
        for element in self:
            state = nest.map_structure(_core.convert_to_tensor, reduce_func(state, element))
        return state

    def cardinality(self):
        """The number of elements, ``INFINITE`` (-1) or ``UNKNOWN`` (-2)."""
        return _core.constant(self._length, dtype="int64")

    def __len__(self):
        if self._length == INFINITE:
            raise TypeError("The dataset is infinite.")  # TensorFlow's messages
        if self._length < 0:
            raise TypeError("The dataset length is unknown.")
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
        unless ``drop_remainder``).

        Args:
            batch_size: The number of elements per batch, an int of at least 1.
            drop_remainder: If true, a last batch shorter than ``batch_size`` is dropped.
            num_parallel_calls: Ignored (the pipeline runs on the calling thread).
            deterministic: Ignored.
            name: Ignored (TensorFlow's op name).

        Returns:
            A new ``Dataset``.

        >>> [b.numpy().tolist() for b in Dataset.range(5).batch(2)]
        [[0, 1], [2, 3], [4]]
        """
        del num_parallel_calls, deterministic, name
        batch_size = _int_arg("Dataset.batch", "batch_size", batch_size)
        if batch_size < 1:
            raise ValueError(
                f"Dataset.batch: batch_size must be greater than zero, received "
                f"batch_size={batch_size}"
            )

        def batches():
            it = self._make_iterator()
            while True:
                chunk = list(itertools.islice(it, batch_size))
                if not chunk or (drop_remainder and len(chunk) < batch_size):
                    return
                yield _stack(chunk, "Dataset.batch")

        n = self._length
        if n >= 0:
            n = n // batch_size if drop_remainder else -(-n // batch_size)
        return Dataset(batches, n)

    def unbatch(self, name=None):
        """Splits each element along its first axis: the inverse of ``batch``.

        Args:
            name: Ignored (TensorFlow's op name).

        Returns:
            A new ``Dataset``.

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

    def window(self, size, shift=None, stride=1, drop_remainder=False, name=None):
        """Groups elements into windows: window ``k`` holds elements ``k * shift + j * stride``
        for ``j < size``, each component as a dataset of its own (``flat_map`` + ``batch`` turn
        windows into tensors).

        Without ``drop_remainder`` windows start at every ``shift`` up to the last element, so
        the last ones are short, as in TensorFlow.

        Args:
            size: The number of elements per window, at least 1.
            shift: The number of elements between window starts (default: ``size``).
            stride: The step between the elements of one window (default 1).
            drop_remainder: If true, windows shorter than ``size`` are dropped.
            name: Ignored (TensorFlow's op name).

        Returns:
            A new ``Dataset`` whose elements have the input's structure with a ``Dataset`` for
            each component.

        >>> windows = Dataset.range(5).window(3, shift=1, drop_remainder=True)
        >>> [[int(x) for x in w] for w in windows]
        [[0, 1, 2], [1, 2, 3], [2, 3, 4]]
        """
        del name
        size = _int_arg("Dataset.window", "size", size)
        shift = size if shift is None else _int_arg("Dataset.window", "shift", shift)
        stride = _int_arg("Dataset.window", "stride", stride)
        for arg, value in (("size", size), ("shift", shift), ("stride", stride)):
            if value < 1:
                raise ValueError(
                    f"Dataset.window: {arg} must be greater than zero, received {arg}={value}"
                )
        span = (size - 1) * stride + 1  # input elements one full window covers

        def windows():
            it = self._make_iterator()
            buffer = []  # the input from the current window's start on
            exhausted = False
            while True:
                while not exhausted and len(buffer) < span:
                    buffer.extend(itertools.islice(it, span - len(buffer)))
                    exhausted = len(buffer) < span
                if not buffer or (drop_remainder and len(buffer) < span):
                    return
                yield _window_of(buffer[::stride])
                if shift < len(buffer):
                    del buffer[:shift]
                else:
                    _skip(it, shift - len(buffer))
                    buffer = []

        n = self._length
        if n >= 0:
            n = (n - span) // shift + 1 if drop_remainder else -(-n // shift)
            n = max(n, 0)
        return Dataset(windows, n)

    def shuffle(self, buffer_size, seed=None, reshuffle_each_iteration=True, name=None):
        """Shuffles with a buffer of ``buffer_size`` elements (uniform when it holds them all).
        With a seed, the order is reproducible; by default each iteration reshuffles.

        Args:
            buffer_size: The number of elements the shuffle buffer holds, an int of at least 1.
            seed: An int seed, or ``None`` (then the global seed, if set).
            reshuffle_each_iteration: If false, every iteration repeats the first order.
            name: Ignored (TensorFlow's op name).

        Returns:
            A new ``Dataset``.
        """
        del name
        buffer_size = _int_arg("Dataset.shuffle", "buffer_size", buffer_size)
        if buffer_size < 1:
            raise ValueError(
                f"Dataset.shuffle: buffer_size must be greater than zero, received "
                f"buffer_size={buffer_size}"
            )
        if seed is not None:
            seed = _int_arg("Dataset.shuffle", "seed", seed)
        epochs = itertools.count()
        # Without a seed, entropy is drawn once here, so that reshuffle_each_iteration=False
        # repeats one order, as in TensorFlow (a fresh generator per pass reshuffled anyway).
        base = np.random.SeedSequence(seed).entropy

        def shuffled():
            epoch = next(epochs) if reshuffle_each_iteration else 0
            rng = np.random.default_rng([base, epoch])
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
        """Applies ``map_func`` to each element; a tuple element is passed as arguments.

        Args:
            map_func: A callable taking an element (a tuple element as separate arguments).
            num_parallel_calls: Ignored (the pipeline runs on the calling thread).
            deterministic: Ignored.
            name: Ignored (TensorFlow's op name).

        Returns:
            A new ``Dataset``.

        >>> [int(x) for x in Dataset.range(3).map(lambda x: x * 10)]
        [0, 10, 20]
        """
        del num_parallel_calls, deterministic, name

        def mapped():
            for element in self._make_iterator():
                out = _call_unpacked(map_func, element)
                if out is None:
                    raise TypeError(
                        "Dataset.map: map_func returned None; it must return a tensor or a "
                        "tuple/dict of tensors"
                    )
                yield _to_numpy(out)

        return Dataset(mapped, self._length)

    def flat_map(self, map_func, name=None):
        """Maps each element to a dataset and chains those datasets' elements in order.

        Args:
            map_func: A callable taking an element (a tuple element as separate arguments) and
                returning a ``Dataset``.
            name: Ignored (TensorFlow's op name).

        Returns:
            A new ``Dataset`` (of unknown cardinality, as in TensorFlow).

        >>> [int(x) for x in Dataset.range(1, 4).flat_map(lambda n: Dataset.range(n))]
        [0, 0, 1, 0, 1, 2]
        """
        del name

        def chained():
            for element in self._make_iterator():
                out = _call_unpacked(map_func, element)
                if not isinstance(out, Dataset):
                    raise TypeError(
                        f"Dataset.flat_map: map_func must return a Dataset, received "
                        f"{type(out).__name__}"
                    )
                yield from out._make_iterator()

        return Dataset(chained, UNKNOWN)

    def filter(self, predicate, name=None):
        """The elements for which ``predicate`` returns true.

        Args:
            predicate: A callable taking an element (a tuple as separate arguments) and returning a
                bool scalar.
            name: Ignored (TensorFlow's op name).

        Returns:
            A new ``Dataset``.

        >>> [int(x) for x in Dataset.range(6).filter(lambda x: x % 2 == 0)]
        [0, 2, 4]
        """
        del name

        def kept():
            for element in self._make_iterator():
                if _scalar_bool(_call_unpacked(predicate, element)):
                    yield element

        return Dataset(kept, UNKNOWN)

    def zip(*datasets, name=None):  # noqa: N805 - a static and an instance method, as in TF
        """Elements of several datasets side by side, as a tuple (or the structure given:
        ``Dataset.zip((a, (b, c)))`` or ``a.zip(b)``); ends with the shortest.

        Args:
            *datasets: Datasets, or one tuple or dict of datasets.
            name: Ignored (TensorFlow's op name).

        Returns:
            A new ``Dataset``.

        >>> a, b = Dataset.range(3), Dataset.range(10, 12)
        >>> [(int(x), int(y)) for x, y in Dataset.zip(a, b)]
        [(0, 10), (1, 11)]
        """
        del name
        structure = datasets[0] if len(datasets) == 1 else datasets
        parts = nest.flatten_for(structure, (tuple, dict), "Dataset.zip")
        if not parts or not all(isinstance(d, Dataset) for d in parts):
            raise TypeError(
                f"Dataset.zip: expected datasets (or a tuple/dict of them), received "
                f"{reprlib.repr(datasets)}"
            )

        def zipped():
            for flat in zip(*(d._make_iterator() for d in parts), strict=False):
                yield nest.pack_for(structure, list(flat), (tuple, dict), "Dataset.zip")

        return Dataset(zipped, _min_cardinality([d._length for d in parts]))

    def concatenate(self, dataset, name=None):
        """The elements of this dataset, then those of ``dataset``.

        Args:
            dataset: The ``Dataset`` whose elements follow.
            name: Ignored (TensorFlow's op name).

        Returns:
            A new ``Dataset``.

        >>> [int(x) for x in Dataset.range(2).concatenate(Dataset.range(5, 6))]
        [0, 1, 5]
        """
        del name
        if not isinstance(dataset, Dataset):
            raise TypeError(
                f"Dataset.concatenate: expected a Dataset, received {type(dataset).__name__}"
            )
        a, b = self._length, dataset._length
        length = INFINITE if INFINITE in (a, b) else UNKNOWN if UNKNOWN in (a, b) else a + b
        return Dataset(
            lambda: itertools.chain(self._make_iterator(), dataset._make_iterator()), length
        )

    def repeat(self, count=None, name=None):
        """Repeats the dataset ``count`` times (forever when ``None`` or -1).

        Args:
            count: The number of passes, an int; ``None`` or -1 for forever.
            name: Ignored (TensorFlow's op name).

        Returns:
            A new ``Dataset``.

        >>> [int(x) for x in Dataset.range(2).repeat(2)]
        [0, 1, 0, 1]
        """
        del name
        if count is not None:
            count = _int_arg("Dataset.repeat", "count", count)
        forever = count is None or count < 0

        def repeated():
            for _ in itertools.count() if forever else range(count):
                yield from self._make_iterator()

        # TF's RepeatDatasetOp: 0 if either is 0, infinite when forever, else the product (the
        # unknown and infinite cardinalities stay as they are).
        n = self._length
        if n == 0 or count == 0:
            length = 0
        elif forever:
            length = INFINITE
        else:
            length = n * count if n >= 0 else n
        return Dataset(repeated, length)

    def take(self, count, name=None):
        """The first ``count`` elements (all of them when ``count`` is -1).

        Args:
            count: The number of elements to keep, an int (-1 for all).
            name: Ignored (TensorFlow's op name).

        Returns:
            A new ``Dataset``.

        >>> [int(x) for x in Dataset.range(10).take(2)]
        [0, 1]
        """
        del name
        count = _int_arg("Dataset.take", "count", count)
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
        """All but the first ``count`` elements (none of them when ``count`` is -1).

        Args:
            count: The number of elements to drop, an int (-1 for all).
            name: Ignored (TensorFlow's op name).

        Returns:
            A new ``Dataset``.

        >>> [int(x) for x in Dataset.range(4).skip(2)]
        [2, 3]
        """
        del name
        count = _int_arg("Dataset.skip", "count", count)
        if count < 0:  # TF: a negative count skips the whole dataset
            return Dataset(lambda: _exhaust(self._make_iterator()), min(self._length, 0))
        n = max(self._length - count, 0) if self._length >= 0 else self._length
        return Dataset(lambda: itertools.islice(self._make_iterator(), count, None), n)

    def enumerate(self, start=0, name=None):
        """Pairs each element with its index: ``(i, element)``, i counted from ``start``.

        Args:
            start: The first index, an int.
            name: Ignored (TensorFlow's op name).

        Returns:
            A new ``Dataset``.

        >>> [(int(i), int(x)) for i, x in Dataset.range(5, 7).enumerate()]
        [(0, 5), (1, 6)]
        """
        del name
        start = _int_arg("Dataset.enumerate", "start", start)

        def numbered():
            for i, element in enumerate(self._make_iterator(), start):
                yield (np.asarray(i, np.int64), element)

        return Dataset(numbered, self._length)

    def cache(self, filename="", name=None):
        """Keeps the elements in memory after the first full pass.

        Args:
            filename: Ignored: the cache is always in memory.
            name: Ignored (TensorFlow's op name).

        Returns:
            A new ``Dataset``.

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
        """Accepted for compatibility; the pipeline runs eagerly on the calling thread.

        Args:
            buffer_size: ``AUTOTUNE`` (-1) or a non-negative int.
            name: Ignored (TensorFlow's op name).

        Returns:
            This dataset.
        """
        del name
        buffer_size = _int_arg("Dataset.prefetch", "buffer_size", buffer_size)
        if buffer_size < AUTOTUNE:
            raise ValueError(
                f"Dataset.prefetch: buffer_size must be AUTOTUNE (-1) or non-negative, received "
                f"buffer_size={buffer_size}"
            )
        return self


def _stack(chunk, who):
    """One batch from a list of elements of the same structure and shapes."""
    flats = [_flatten(e, who) for e in chunk]
    if any(len(f) != len(flats[0]) for f in flats):
        raise ValueError(f"{who}: the elements do not all have the same structure")
    columns = []
    for column in zip(*flats, strict=True):
        shapes = {np.shape(c) for c in column}
        if len(shapes) > 1:
            raise ValueError(
                f"{who}: cannot batch elements of different shapes {sorted(shapes)}; map them to "
                f"one shape first"
            )
        columns.append(np.stack(column))
    return _pack(chunk[0], columns, who)


def _skip(iterator, count):
    """Advances ``iterator`` by up to ``count`` elements."""
    for _ in itertools.islice(iterator, count):
        pass


def _window_of(elements):
    """One window: the elements' structure with each component's values as a dataset."""
    flats = [_flatten(e, "Dataset.window") for e in elements]
    columns = [list(column) for column in zip(*flats, strict=True)]
    datasets = [Dataset(lambda c=column: iter(c), len(column)) for column in columns]
    return _pack(elements[0], datasets, "Dataset.window")


def _min_cardinality(lengths):
    """``zip``'s cardinality: the shortest, unknown if any is, infinite if all are."""
    finite = [n for n in lengths if n >= 0]
    if finite:
        return min(finite)
    return UNKNOWN if UNKNOWN in lengths else INFINITE


__all__ = [
    "AUTOTUNE",
    "Dataset",
    "INFINITE",
    "INFINITE_CARDINALITY",
    "Iterator",
    "NumpyIterator",
    "Options",
    "ThreadingOptions",
    "UNKNOWN",
    "UNKNOWN_CARDINALITY",
]
