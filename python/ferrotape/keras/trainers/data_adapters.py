"""Turns ``fit``/``evaluate``/``predict`` inputs (arrays, tensors, iterables, datasets) into
batches, and splits off validation data (Keras 3's ``keras.src.trainers.data_adapters``).
"""

import inspect
import math
import reprlib

import numpy as np

from ... import _core, nest
from .py_dataset_adapter import PyDataset, _PyDatasetBatches


def unpack_x_y_sample_weight(data):
    """(x, y, sample_weight) from a batch: ``x``, ``(x,)``, ``(x, y)`` or ``(x, y, sw)``."""
    if isinstance(data, list):
        data = tuple(data)
    if not isinstance(data, tuple):
        return data, None, None
    if len(data) == 1:
        return data[0], None, None
    if len(data) == 2:
        return data[0], data[1], None
    if len(data) == 3:
        return data
    raise ValueError(
        f"Data is expected to be in format `x`, `(x,)`, `(x, y)`, or `(x, y, sample_weight)`, "
        f"found a tuple of {len(data)} elements"
    )


def pack_x_y_sample_weight(x, y=None, sample_weight=None):
    """The batch structure ``unpack_x_y_sample_weight`` reads: ``x`` alone (or ``(x,)`` when
    ``x`` is itself a tuple or list), ``(x, y)`` or ``(x, y, sample_weight)``."""
    if y is None:
        return (x,) if isinstance(x, tuple | list) else x
    if sample_weight is None:
        return (x, y)
    return (x, y, sample_weight)


def _batch_size(x):
    """The number of samples in a batch (the first dim of its first tensor)."""
    if isinstance(x, (_core.Tensor, np.ndarray)):
        return len(x) if x.ndim else 1  # len() is much cheaper than building .shape
    for leaf in nest.flatten(x):
        if getattr(leaf, "ndim", 0):
            return len(leaf)
    return 1


def _as_array(value):
    """A training array: numpy, with float64 data cast to float32 (Keras's floatx)."""
    array = np.asarray(value)
    if array.dtype == np.float64:
        array = array.astype(np.float32)
    return array


class _ArrayBatches:
    """Batches sliced from in-memory arrays (numpy or tensors), reshuffled every epoch."""

    def __init__(self, x, y, sample_weight, batch_size, shuffle, who):
        self.structure = (
            (x,)
            if y is None
            else (x, y)
            if sample_weight is None
            else (
                x,
                y,
                sample_weight,
            )
        )
        self.arrays = [_as_array(a) for a in nest.flatten(self.structure)]
        sizes = {a.shape[0] if a.ndim else None for a in self.arrays}
        if None in sizes:
            scalars = [
                n
                for n, v in zip(("x", "y", "sample_weight"), self.structure, strict=False)
                if None in _leaf_sizes(v)
            ]
            raise ValueError(
                f"{who}: every input array needs a batch (first) dimension; received a scalar "
                f"in `{scalars[0]}`"
            )
        if len(sizes) != 1:
            parts = [
                f"'{n}' sizes: {_leaf_sizes(v)}"
                for n, v in zip("xys", self.structure, strict=False)
            ]
            raise ValueError(
                f"{who}: data cardinality is ambiguous; make sure all arrays contain the same "
                f"number of samples. {' '.join(parts)}"
            )
        (self.num_samples,) = sizes
        if batch_size is not None and (not isinstance(batch_size, int) or batch_size < 1):
            raise ValueError(f"{who}: batch_size must be a positive int, received {batch_size!r}")
        self.batch_size = batch_size or 32
        self.shuffle = shuffle
        self.steps = -(-self.num_samples // self.batch_size)
        self._single = len(self.arrays) == len(self.structure) and all(
            not isinstance(s, (list, tuple, dict)) for s in self.structure
        )

    def _order(self):
        """A permutation from ``ft.random``, so ``ft.random.set_seed`` makes runs repeatable."""
        if not self.shuffle or self.num_samples < 2:
            return None
        n = self.num_samples
        if self.shuffle == "batch":
            starts = _core.random.shuffle(_core.range(self.steps, dtype="int64")).numpy()
            return np.concatenate(
                [np.arange(s * self.batch_size, min((s + 1) * self.batch_size, n)) for s in starts]
            )
        return _core.random.shuffle(_core.range(n, dtype="int64")).numpy()

    def batches(self):
        order = self._order()
        for start in range(0, self.num_samples, self.batch_size):
            index = slice(start, start + self.batch_size)
            if order is not None:
                index = order[index]
            flat = [_core.convert_to_tensor(np.ascontiguousarray(a[index])) for a in self.arrays]
            if self._single:
                yield tuple(flat)
            else:
                yield nest.pack_sequence_as(self.structure, flat)


def _leaf_sizes(value):
    return [np.shape(a)[0] if np.ndim(a) else None for a in nest.flatten(value)]


class _IterableBatches:
    """Batches from a ``ft.data.Dataset`` (re-iterated each epoch) or a one-shot iterator."""

    def __init__(self, source, who):
        from ... import data

        self.source = source
        # A generator's length is unknown; a Dataset knows its cardinality (or that it is
        # infinite, which needs a step count: see _EpochIterator).
        self.cardinality = source._length if isinstance(source, data.Dataset) else data.UNKNOWN
        self.steps = self.cardinality if self.cardinality >= 0 else None
        self.who = who

    def batches(self):
        for element in self.source:
            yield element if isinstance(element, tuple) else (element,)


def _is_dataset_like(x):
    from ... import data

    if isinstance(x, data.Dataset):
        return True
    return inspect.isgenerator(x) or (hasattr(x, "__next__") and hasattr(x, "__iter__"))


def _make_batches(x, y, sample_weight, batch_size, shuffle, who, class_weight=None):
    if x is None:
        raise ValueError(f"{who}: expected input data `x`, received None")
    if _is_dataset_like(x):
        if y is not None:
            raise ValueError(
                f"{who}: argument `y` is not supported when `x` is a dataset or generator "
                f"(it yields (x, y) pairs); received y={type(y).__name__}"
            )
        if sample_weight is not None:
            raise ValueError(
                f"{who}: argument `sample_weight` is not supported when `x` is a dataset; "
                f"yield (x, y, sample_weight) from the dataset instead"
            )
        return _IterableBatches(x, who)
    if isinstance(x, PyDataset):
        if y is not None or sample_weight is not None:
            raise ValueError(
                f"{who}: arguments `y` and `sample_weight` are not supported when `x` is a "
                "PyDataset (its batches hold them)"
            )
        return _PyDatasetBatches(x, who)
    x, y, sample_weight = (_numbers_as_array(v, who) for v in (x, y, sample_weight))
    if class_weight is not None and y is not None:
        sample_weight = _class_sample_weights(y, class_weight, sample_weight, who)
    return _ArrayBatches(x, y, sample_weight, batch_size, shuffle, who)


def _numbers_as_array(value, who):
    """A (nested) list of plain numbers is one array; lists holding arrays are structures
    (several inputs or outputs). Every user structure passes here first, so its depth is
    checked here (nest's bound), naming the method."""
    leaves = nest.flatten_for(value, (list, tuple), who)
    if isinstance(value, list) and not any(
        isinstance(leaf, (np.ndarray, _core.Tensor, _core.Variable)) for leaf in leaves
    ):
        return np.asarray(value)
    return value


def _class_sample_weights(y, class_weight, sample_weight, who):
    """Per-sample weights from ``class_weight`` (class index -> weight), times ``sample_weight``."""
    labels = np.asarray(nest.flatten(y)[0])
    if labels.ndim > 1 and labels.shape[-1] > 1:
        labels = labels.argmax(axis=-1)
    if labels.ndim == 0:
        raise ValueError(f"{who}: class_weight needs labels with a batch axis, received a scalar y")
    # The first entry of each sample's label (numpy's reshape(n, -1) fails for zero samples).
    labels = labels[(slice(None),) + (0,) * (labels.ndim - 1)].astype(np.int64)
    try:
        weights = np.array([class_weight[int(c)] for c in labels], dtype=np.float32)
    except KeyError as missing:
        raise ValueError(f"{who}: class_weight has no entry for class {missing}") from None
    if sample_weight is not None:
        weights = weights * np.asarray(sample_weight, dtype=np.float32)
    return weights


def _steps_arg(who, name, steps):
    """``steps_per_epoch``/``validation_steps``/``steps``: None or a positive int; fit's
    ``steps_per_epoch`` may also be -1 (run until the data ends or ``stop_training``, for ever
    on an infinite dataset, as Keras documents)."""
    forever_ok = name == "steps_per_epoch"
    if steps is None:
        return None
    if isinstance(steps, (int, np.integer)) and not isinstance(steps, (bool, np.bool_)):
        if steps >= 1 or (steps == -1 and forever_ok):
            return int(steps)
    expected = "None, a positive integer or -1" if forever_ok else "None or a positive integer"
    raise ValueError(f"{who}: `{name}` must be {expected}. Received: {name}={reprlib.repr(steps)}")


def _to_numpy(value):
    return value.numpy() if hasattr(value, "numpy") else np.asarray(value)


def _should_validate(epoch, validation_freq):
    if isinstance(validation_freq, int):
        if validation_freq < 1:
            raise ValueError(f"fit: validation_freq must be >= 1, received {validation_freq}")
        return (epoch + 1) % validation_freq == 0
    return epoch + 1 in validation_freq


def _unpack_validation(validation_data):
    if _is_dataset_like(validation_data):
        return validation_data, None, None
    if isinstance(validation_data, (tuple, list)) and len(validation_data) in (2, 3):
        return tuple(validation_data) + (None,) * (3 - len(validation_data))
    raise ValueError(
        "fit: validation_data must be a tuple (x_val, y_val), (x_val, y_val, val_sample_weight) "
        f"or a dataset, received {type(validation_data).__name__}"
    )


def _split_validation(x, y, sample_weight, validation_split):
    """Keras's split: the last ``validation_split`` fraction of the samples (before shuffling)
    is held out."""
    if _is_dataset_like(x):
        raise ValueError(
            "fit: `validation_split` is only supported for arrays and tensors, not datasets or "
            "generators; pass `validation_data` instead"
        )
    if not 0.0 < validation_split < 1.0:
        raise ValueError(f"fit: validation_split must be in (0, 1), received {validation_split}")
    arrays = [_as_array(a) for a in nest.flatten((x, y, sample_weight)) if a is not None]
    n = arrays[0].shape[0]
    split_at = int(math.floor(n * (1.0 - validation_split)))
    if split_at == 0 or split_at == n:
        raise ValueError(
            f"fit: validation_split={validation_split} leaves an empty training or validation "
            f"set for {n} samples"
        )

    def head(value):
        return (
            None if value is None else nest.map_structure(lambda a: _as_array(a)[:split_at], value)
        )

    def tail(value):
        return (
            None if value is None else nest.map_structure(lambda a: _as_array(a)[split_at:], value)
        )

    return head(x), head(y), head(sample_weight), (tail(x), tail(y), tail(sample_weight))
