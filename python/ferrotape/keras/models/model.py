"""Keras models: ``Model`` (training with ``compile``/``fit``/``evaluate``/``predict``, weight
files, ``summary``), ``Sequential`` and functional models (``Model(inputs, outputs)``).

``fit`` runs ``train_step`` on batches sliced from arrays (or drawn from a ``ft.data.Dataset``),
keeps the loss as a running mean on the device, and reads metric values only when the progress
bar refreshes (at most ten times a second) or a callback asks for batch logs.

>>> import numpy as np, ferrotape as ft
>>> model = ft.keras.Sequential([ft.keras.Input(shape=(3,)), ft.keras.layers.Dense(1)])
>>> model.compile(optimizer=ft.keras.optimizers.SGD(0.1), loss="mse")
>>> x = np.random.default_rng(0).normal(size=(64, 3)).astype("float32")
>>> history = model.fit(x, x.sum(axis=1), epochs=30, verbose=0)
>>> history.history["loss"][-1] < 1e-3
True
"""

import inspect
import math
import re
import reprlib
import shutil
import textwrap
import time
import warnings
from collections.abc import Mapping

import numpy as np

from .. import GradientTape, _core, nest
from .engine import (
    _CONTEXT,
    InputLayer,
    KerasTensor,
    Layer,
    _batch_as_none,
    _format_shape,
    _is_single_shape,
    _plain_shape,
    _shape_of,
    _structure_changed,
    _zeros_for,
)

# ----------------------------------------------------------------------------- training helpers


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


def _batch_size(x):
    """The number of samples in a batch (the first dim of its first tensor)."""
    if isinstance(x, (_core.Tensor, np.ndarray)):
        return len(x) if x.ndim else 1  # len() is much cheaper than building .shape
    for leaf in nest.flatten(x):
        if getattr(leaf, "ndim", 0):
            return len(leaf)
    return 1


class _MeanTracker:
    """A running mean kept as a tensor (no device read per batch), like ``metrics.Mean``."""

    def __init__(self, name):
        self.name = name
        self.reset_state()

    def reset_state(self):
        self._total = None
        self._count = 0.0

    def update_state(self, values, sample_weight=None):
        if not isinstance(values, _core.Tensor):
            values = _core.convert_to_tensor(values, dtype="float32")
        if values.ndim:
            count = float(math.prod(values.shape))
            values = _core.reduce_sum(values)
        else:
            count = 1.0
        if sample_weight is not None:
            weight = float(sample_weight)
            values, count = values * weight, count * weight
        self._total = values if self._total is None else self._total + values
        self._count += count

    def result(self):
        if self._total is None or self._count == 0:
            return _core.constant(0.0)
        return self._total / self._count


class _MetricResults(Mapping):
    """The metrics' current results, computed only for the names that are read."""

    def __init__(self, metrics):
        self._metrics = {}
        for metric in metrics:
            self._metrics.setdefault(metric.name, metric)

    def __getitem__(self, name):
        return self._metrics[name].result()

    def __iter__(self):
        return iter(self._metrics)

    def __len__(self):
        return len(self._metrics)


def _as_float(value):
    try:
        return float(value)
    except (TypeError, ValueError):
        return np.asarray(value)


def _float_logs(logs):
    return {name: _as_float(value) for name, value in (logs or {}).items()}


def _is_loss_object(fn):
    from . import losses

    loss_class = getattr(losses, "Loss", None)
    return isinstance(loss_class, type) and isinstance(fn, loss_class)


def _reduced_loss(fn, y_true, y_pred, sample_weight, is_loss_object):
    """A scalar loss: Loss objects reduce themselves; a loss function (a name given to compile,
    or the user's) is treated as Keras 3's compile treats it, as a ``LossFunctionWrapper``:
    ``y_true`` and ``y_pred`` brought to the same rank, the per-sample values weighted by
    ``sample_weight`` squeezed or expanded to their rank (so weights of shape ``(N, 1)`` weight
    per-sample values of shape ``(N,)`` instead of broadcasting to ``(N, N)``), then averaged
    ("sum_over_batch_size")."""
    from . import losses

    if is_loss_object:
        if sample_weight is None:
            return fn(y_true, y_pred)
        return fn(y_true, y_pred, sample_weight=sample_weight)
    y_true, y_pred = losses._tensor(y_true), losses._tensor(y_pred)
    y_true, y_pred = losses.squeeze_or_expand_to_same_rank(y_true, y_pred)
    values = losses._tensor(fn(y_true, y_pred))
    who = getattr(fn, "__name__", "loss")
    return losses.reduce_weighted_values(values, sample_weight=sample_weight, who=who)


class _CompiledLoss:
    """The loss given to ``compile``: one loss for one output, or a list/dict matching the
    outputs, each scaled by its ``loss_weights`` entry."""

    def __init__(self, loss, loss_weights):
        from . import losses

        self.structure = loss
        if isinstance(loss, dict):
            self.fns = {k: losses.get(v) for k, v in loss.items()}
        elif isinstance(loss, (list, tuple)):
            self.fns = [losses.get(v) for v in loss]
        else:
            self.fns = losses.get(loss)
        weights = list(loss_weights.values()) if isinstance(loss_weights, dict) else loss_weights
        if not isinstance(weights, (list, tuple)):
            weights = [weights]
        if not all(w is None or isinstance(w, (int, float, np.number)) for w in weights):
            raise ValueError(
                f"compile: loss_weights must be numbers (one per output), received "
                f"{loss_weights!r}. compile's third positional argument is loss_weights, as in "
                f"Keras 3: pass metrics by keyword (metrics=[...])."
            )
        self.loss_weights = loss_weights
        fns = (
            self.fns.values()
            if isinstance(self.fns, dict)
            else (self.fns if isinstance(self.fns, list) else [self.fns])
        )
        self._loss_objects = {id(fn): _is_loss_object(fn) for fn in fns}

    def _weight(self, key):
        if self.loss_weights is None:
            return None
        if isinstance(self.loss_weights, (dict, list, tuple)):
            return self.loss_weights[key]
        return self.loss_weights

    def __call__(self, y_true, y_pred, sample_weight=None):
        if isinstance(self.fns, dict):
            keys = list(self.fns)
            parts = [(k, y_true[k], y_pred[k]) for k in keys]
        elif isinstance(self.fns, list):
            if not isinstance(y_pred, (list, tuple)) or len(y_pred) != len(self.fns):
                raise ValueError(
                    f"compile: {len(self.fns)} losses were given but the model returned "
                    f"{len(y_pred) if isinstance(y_pred, (list, tuple)) else 1} output(s)"
                )
            parts = [(i, y_true[i], y_pred[i]) for i in range(len(self.fns))]
        elif isinstance(y_pred, (list, tuple)):
            # One loss for several outputs: applied to each (Keras 3).
            parts = [(i, y_true[i], y_pred[i]) for i in range(len(y_pred))]
        else:
            value = _reduced_loss(
                self.fns, y_true, y_pred, sample_weight, self._loss_objects[id(self.fns)]
            )
            weight = self.loss_weights
            if isinstance(weight, (list, tuple)):
                (weight,) = weight
            return value if weight is None else value * weight
        total = None
        for key, truth, prediction in parts:
            fn = self.fns[key] if isinstance(self.fns, (dict, list)) else self.fns
            value = _reduced_loss(fn, truth, prediction, sample_weight, self._loss_objects[id(fn)])
            weight = self._weight(key)
            if weight is not None:
                value = value * weight
            total = value if total is None else total + value
        return total


# ----------------------------------------------------------------------------- data adapters


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
        from .. import data

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
    from .. import data

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


class _EpochIterator:
    """Steps of one epoch; with ``steps_per_epoch`` the source is consumed across epochs."""

    def __init__(self, source, steps_per_epoch, who, name):
        steps_per_epoch = _steps_arg(who, name, steps_per_epoch)
        if steps_per_epoch is None and getattr(source, "cardinality", None) == -1:
            # Keras 3's EpochIterator would loop for ever here (keras/src/trainers/
            # epoch_iterator.py: no step count and no known number of batches means `while
            # True`), although its fit() docstring says the argument must be given; tf.keras
            # (data_adapter.py, DataHandler._infer_steps) raised this ValueError before
            # training, which we follow: an epoch that never ends is never what was meant.
            raise ValueError(
                f"{who}: when passing an infinitely repeating dataset, please specify a "
                f"`{name}` value so that the {'epoch' if who == 'fit' else 'loop'} ends. "
                f"Received: {name}=None"
            )
        if steps_per_epoch == -1:
            steps_per_epoch = None
        self.source = source
        self.steps_per_epoch = steps_per_epoch
        self.steps = steps_per_epoch if steps_per_epoch is not None else source.steps
        self._iterator = None
        self.exhausted = False

    def epoch(self):
        if self.steps_per_epoch is None:
            yield from enumerate(self.source.batches())
            return
        for step in range(self.steps_per_epoch):
            if self._iterator is None:
                self._iterator = iter(self.source.batches())
            try:
                batch = next(self._iterator)
            except StopIteration:
                self._iterator = None
                self.exhausted = True
                warnings.warn(
                    "Your input ran out of data; interrupting training. Make sure that your "
                    "dataset or generator can generate at least `steps_per_epoch * epochs` "
                    "batches. You may need to use the `.repeat()` function when building your "
                    "dataset.",
                    UserWarning,
                    stacklevel=4,
                )
                return
            yield step, batch


def _overrides(callback, *hooks):
    from . import callbacks

    base = getattr(callbacks, "Callback", None)
    return any(
        getattr(type(callback), hook, None) is not getattr(base, hook, None) for hook in hooks
    )


class _Progress:
    """Drives a ``utils.ProgressBar``, reading the metrics at most ten times a second."""

    _INTERVAL = 0.1

    def __init__(self, total, description, verbose):
        self.bar = None
        if verbose:
            from . import utils

            self.bar = utils.ProgressBar(total, description=description, verbose=verbose)
        self.per_batch = verbose == 1
        self.last = -math.inf

    def update(self, steps_done, logs, samples_seen, final=False):
        """Refreshes the bar when due; returns the float logs if it read them."""
        if self.bar is None or not (self.per_batch or final):
            return None
        now = time.perf_counter()
        if not final and now - self.last < self._INTERVAL:
            return None
        self.last = now
        values = _float_logs(logs)
        self.bar.update(steps_done, values, samples_seen)
        return values

    def close(self, logs):
        if self.bar is not None:
            self.bar.close(logs)


def _resolve_verbose(verbose):
    if verbose == "auto":
        return 1
    if verbose not in (0, 1, 2, True, False):
        raise ValueError(f"verbose must be 'auto', 0, 1 or 2, received {verbose!r}")
    return int(verbose)


# ----------------------------------------------------------------------------- Model


class Model(Layer):
    """A layer with training and saving: subclass it (layers in ``__init__``, the forward pass
    in ``call``) or build it from ``Input`` tensors: ``Model(inputs, outputs)``."""

    def __new__(cls, *args, **kwargs):
        functional = len(args) >= 2 or ("inputs" in kwargs and "outputs" in kwargs)
        if cls is Model and functional:
            return super().__new__(Functional)
        if functional and not issubclass(cls, Functional):
            # A subclass built as CustomModel(inputs, outputs) (for its train_step, say) is a
            # Functional underneath. Keras rewrites the class's bases in place; a cached
            # subclass placing Functional before Model in the MRO leaves the user's class alone.
            return super().__new__(_functional_variant(cls))
        return super().__new__(cls)

    def __init__(self, *args, **kwargs):
        if args or "inputs" in kwargs or "outputs" in kwargs:
            raise TypeError(
                f"{type(self).__name__}: positional arguments and inputs/outputs are only "
                f"accepted by Model(inputs, outputs); subclasses call super().__init__() with "
                f"keyword arguments (name=..., trainable=..., dtype=...)"
            )
        super().__init__(**kwargs)
        setattr_ = object.__setattr__
        setattr_(self, "optimizer", None)
        setattr_(self, "loss", None)
        setattr_(self, "compiled", False)
        setattr_(self, "stop_training", False)
        setattr_(self, "history", None)
        setattr_(self, "_compiled_loss", None)
        setattr_(self, "_compile_metrics", [])
        setattr_(self, "_loss_tracker", _MeanTracker("loss"))
        setattr_(self, "_compile_config", None)
        setattr_(self, "_warned_no_trainable", False)

    # ------------------------------------------------------------------ structure
    @property
    def layers(self):
        """The layers held directly by the model, in assignment order."""
        return list(self._flatten_layers(include_self=False, recursive=False))

    def get_layer(self, name=None, index=None):
        """A layer by name or by index in ``layers``."""
        if index is not None and name is not None:
            raise ValueError("get_layer: provide only one of `name` and `index`")
        layers = self.layers
        if index is not None:
            if not -len(layers) <= index < len(layers):
                raise ValueError(
                    f"get_layer: was asked to retrieve layer at index {index} but the model "
                    f"only has {len(layers)} layers"
                )
            return layers[index]
        if name is not None:
            for layer in layers:
                if layer.name == name:
                    return layer
            raise ValueError(
                f"get_layer: no such layer: {name}. Existing layers are: "
                f"{[layer.name for layer in layers]}"
            )
        raise ValueError("get_layer: provide either a layer name or a layer index")

    def _build_from_call(self, input_shape):
        # A model builds its sublayers by running; only a user-defined build is called here.
        if type(self).build is not Model.build:
            self.build(input_shape)

    def build(self, input_shape=None):
        """Builds the model by running it once on zeros of ``input_shape`` (batch dim
        included, ``None`` allowed), in inference mode."""
        if input_shape is None:
            raise ValueError(
                f"{type(self).__name__}.build: expected an input shape such as (None, 784)"
            )
        input_shape = _plain_shape(input_shape)
        dummy = _zeros_for(input_shape, self.compute_dtype)
        previous = _CONTEXT.symbolic_batch
        _CONTEXT.symbolic_batch = True
        try:
            self(dummy, training=False)
        finally:
            _CONTEXT.symbolic_batch = previous
        object.__setattr__(self, "_build_input_shape", input_shape)

    # ------------------------------------------------------------------ compile
    def compile(
        self,
        optimizer="rmsprop",
        loss=None,
        loss_weights=None,
        metrics=None,
        weighted_metrics=None,
        run_eagerly=False,
        steps_per_execution=1,
        jit_compile="auto",
        auto_scale_loss=True,
    ):
        """Configures training: the optimizer (name or instance), the loss (name, function or
        Loss; a list/dict for several outputs) and the metrics to report."""
        del run_eagerly, steps_per_execution, jit_compile, auto_scale_loss
        from . import metrics as metrics_module
        from . import optimizers

        object.__setattr__(self, "optimizer", optimizers.get(optimizer))
        object.__setattr__(self, "loss", loss)
        object.__setattr__(
            self, "_compiled_loss", None if loss is None else _CompiledLoss(loss, loss_weights)
        )
        requested = []
        for group in (metrics, weighted_metrics):
            if group is None:
                continue
            if isinstance(group, dict):
                group = list(group.values())
            if not isinstance(group, (list, tuple)):
                group = [group]
            requested.extend(nest.flatten(list(group)))
        compile_metrics = [metrics_module.get(m, loss=loss) for m in requested if m is not None]
        object.__setattr__(self, "_compile_metrics", compile_metrics)
        object.__setattr__(self, "_loss_tracker", _MeanTracker("loss"))
        object.__setattr__(self, "compiled", True)
        object.__setattr__(
            self,
            "_compile_config",
            {"optimizer": optimizer, "loss": loss, "metrics": metrics},
        )

    def _assert_compiled(self, who):
        if not self.compiled:
            raise RuntimeError(
                f"{who}: you must call `compile()` before using the model for training or "
                f"evaluation"
            )

    @property
    def metrics(self):
        """The loss tracker ("loss") and the compiled metrics."""
        if not self.compiled:
            return []
        return [self._loss_tracker, *self._compile_metrics]

    @property
    def metrics_names(self):
        return [m.name for m in self.metrics]

    def reset_metrics(self):
        for metric in self.metrics:
            metric.reset_state()

    # ------------------------------------------------------------------ steps
    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        """The compiled loss (averaged over the batch) plus the model's ``losses``."""
        del x, training
        total = None
        if self._compiled_loss is not None:
            if y is None:
                raise ValueError(
                    "compute_loss: the model was compiled with a loss, which needs targets, but "
                    "no `y` was given (pass y=..., or (x, y) batches from a dataset)"
                )
            total = self._compiled_loss(y, y_pred, sample_weight)
        extra = self.losses
        if extra:
            extra_total = extra[0] if len(extra) == 1 else _core.add_n(list(extra))
            total = extra_total if total is None else total + extra_total
        if total is None:
            raise ValueError("No loss to compute. Provide a `loss` argument in `compile()`.")
        return total

    def compute_metrics(self, x, y, y_pred, sample_weight=None):
        """Updates the compiled metrics with this batch; returns the metric results."""
        del x
        for metric in self._compile_metrics:
            if sample_weight is None:
                metric.update_state(y, y_pred)
            else:
                metric.update_state(y, y_pred, sample_weight=sample_weight)
        return self.get_metrics_result()

    def get_metrics_result(self):
        """The current results of ``metrics`` by name (computed when read)."""
        return _MetricResults(self.metrics)

    def train_step(self, data):
        """One optimization step on a batch: forward under a tape, loss, gradients, update.

        Returns the metric results (the running means over the epoch so far).
        """
        x, y, sample_weight = unpack_x_y_sample_weight(data)
        with GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = self.compute_loss(x=x, y=y, y_pred=y_pred, sample_weight=sample_weight)
        self._loss_tracker.update_state(loss, sample_weight=_batch_size(x))
        variables = self.trainable_variables
        if variables:
            gradients = tape.gradient(loss, variables)
            self.optimizer.apply_gradients(zip(gradients, variables, strict=True))
            self._apply_constraints()
        elif not self._warned_no_trainable:
            object.__setattr__(self, "_warned_no_trainable", True)
            warnings.warn(
                "The model does not have any trainable weights.", UserWarning, stacklevel=2
            )
        return self.compute_metrics(x, y, y_pred, sample_weight)

    def _apply_constraints(self):
        def collect():
            return [pair for layer in self._flatten_layers() for pair in layer._constraints]

        for variable, constraint in self._cached_walk("constraints", collect):
            variable.assign(constraint(variable))

    def test_step(self, data):
        """Loss and metrics of a batch in inference mode."""
        x, y, sample_weight = unpack_x_y_sample_weight(data)
        y_pred = self(x, training=False)
        loss = self.compute_loss(x=x, y=y, y_pred=y_pred, sample_weight=sample_weight)
        self._loss_tracker.update_state(loss, sample_weight=_batch_size(x))
        return self.compute_metrics(x, y, y_pred, sample_weight)

    def predict_step(self, data):
        x, _, _ = unpack_x_y_sample_weight(data)
        return self(x, training=False)

    # ------------------------------------------------------------------ fit
    def fit(
        self,
        x=None,
        y=None,
        batch_size=None,
        epochs=1,
        verbose="auto",
        callbacks=None,
        validation_split=0.0,
        validation_data=None,
        shuffle=True,
        class_weight=None,
        sample_weight=None,
        initial_epoch=0,
        steps_per_epoch=None,
        validation_steps=None,
        validation_batch_size=None,
        validation_freq=1,
    ):
        """Trains for ``epochs`` passes over ``x``/``y`` (arrays or tensors, sliced into batches
        of ``batch_size``, default 32, reshuffled each epoch) or over a dataset of (x, y)
        batches. Returns the ``History`` callback: ``history.history["loss"]`` etc."""
        self._assert_compiled("fit")
        verbose = _resolve_verbose(verbose)
        for name, value in (("epochs", epochs), ("initial_epoch", initial_epoch)):
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
                raise ValueError(
                    f"fit: `{name}` must be a non-negative int. "
                    f"Received: {name}={reprlib.repr(value)}"
                )
        if validation_split and validation_data is None:
            x, y, sample_weight, validation_data = _split_validation(
                x, y, sample_weight, validation_split
            )
        train = _EpochIterator(
            _make_batches(x, y, sample_weight, batch_size, shuffle, "fit", class_weight),
            steps_per_epoch,
            "fit",
            "steps_per_epoch",
        )
        validation = None
        if validation_data is not None:
            val_x, val_y, val_sw = _unpack_validation(validation_data)
            validation = _EpochIterator(
                _make_batches(
                    val_x, val_y, val_sw, validation_batch_size or batch_size, False, "fit"
                ),
                validation_steps,
                "fit",
                "validation_steps",
            )
        callback_list, history = self._callback_list(
            callbacks, verbose, epochs, train.steps, add_history=True
        )
        object.__setattr__(self, "stop_training", False)
        callback_list.on_train_begin()
        epoch_logs = {}
        for epoch in range(initial_epoch, epochs):
            epoch_logs = self._fit_epoch(train, callback_list, epoch, epochs, verbose)
            if validation is not None and _should_validate(epoch, validation_freq):
                val_logs = self._test_loop(validation, callback_list, verbose=0)
                epoch_logs.update({f"val_{k}": v for k, v in val_logs.items()})
            self._progress.close(epoch_logs)
            callback_list.on_epoch_end(epoch, epoch_logs)
            if self.stop_training or train.exhausted:
                break
        callback_list.on_train_end(logs=epoch_logs)
        return history

    def _callback_list(self, callbacks, verbose, epochs, steps, add_history=False):
        """The user's callbacks (plus a new ``History`` for ``fit``) in a ``CallbackList``, and
        which batch hooks any of them implements (the others are not called per batch)."""
        from . import callbacks as callbacks_module

        if isinstance(callbacks, callbacks_module.CallbackList):
            user = list(getattr(callbacks, "callbacks", []))
        else:
            user = callbacks_module._flatten_callbacks(callbacks)  # one callback, or lists
        if any(isinstance(cb, callbacks_module.ProgbarLogger) for cb in user):
            verbose_bar = 0  # the user's ProgbarLogger draws the bar
        else:
            verbose_bar = verbose
        object.__setattr__(self, "_bar_verbose", verbose_bar)
        history = callbacks_module.History() if add_history else None
        all_callbacks = [*user, history] if add_history else user
        callback_list = callbacks_module.CallbackList(
            all_callbacks, model=self, verbose=verbose, epochs=epochs, steps=steps
        )
        if add_history:
            object.__setattr__(self, "history", history)
        batch_hooks = {
            kind: any(
                _overrides(cb, f"on_{kind}_batch_begin", f"on_{kind}_batch_end")
                or (kind == "train" and _overrides(cb, "on_batch_begin", "on_batch_end"))
                for cb in all_callbacks
            )
            for kind in ("train", "test", "predict")
        }
        object.__setattr__(self, "_batch_hooks", batch_hooks)
        return callback_list, history

    def _fit_epoch(self, train, callback_list, epoch, epochs, verbose):
        """One epoch of train steps; returns the epoch's logs as floats."""
        self.reset_metrics()
        callback_list.on_epoch_begin(epoch)
        object.__setattr__(
            self,
            "_progress",
            _Progress(train.steps, f"Epoch {epoch + 1}/{epochs}", self._bar_verbose),
        )
        batch_hooks = self._batch_hooks["train"]
        logs, samples, steps = None, 0, 0
        for step, batch in train.epoch():
            if batch_hooks:
                callback_list.on_train_batch_begin(step)
            logs = self.train_step(batch)
            samples += _batch_size(batch[0] if isinstance(batch, tuple) else batch)
            steps = step + 1
            self._progress.update(steps, logs, samples)
            if batch_hooks:
                callback_list.on_train_batch_end(step, _float_logs(logs))
            if self.stop_training:
                break
        if logs is None:
            raise ValueError(
                "fit: the training data produced no batches (an empty dataset or array, or a "
                "generator that was already consumed)"
            )
        self._progress.update(steps, logs, samples, final=True)
        return _float_logs(logs)

    # ------------------------------------------------------------------ evaluate and predict
    def _test_loop(self, iterator, callback_list, verbose):
        self.reset_metrics()
        callback_list.on_test_begin()
        progress = _Progress(iterator.steps, "", verbose and self._bar_verbose)
        batch_hooks = self._batch_hooks["test"]
        logs, samples, steps = None, 0, 0
        for step, batch in iterator.epoch():
            if batch_hooks:
                callback_list.on_test_batch_begin(step)
            logs = self.test_step(batch)
            samples += _batch_size(batch[0])
            steps = step + 1
            progress.update(steps, logs, samples)
            if batch_hooks:
                callback_list.on_test_batch_end(step, _float_logs(logs))
        if logs is None:
            raise ValueError("evaluate: the data produced no batches")
        result = _float_logs(logs)
        progress.update(steps, logs, samples, final=True)
        progress.close(result)
        callback_list.on_test_end(result)
        return result

    def _flatten_metrics_in_order(self, logs):
        names = [n for n in self.metrics_names if n in logs]
        values = [logs[n] for n in names] + [logs[k] for k in sorted(logs) if k not in names]
        return values[0] if len(values) == 1 else values

    def evaluate(
        self,
        x=None,
        y=None,
        batch_size=None,
        verbose="auto",
        sample_weight=None,
        steps=None,
        callbacks=None,
        return_dict=False,
        **kwargs,
    ):
        """The loss (and metrics) over the data in inference mode: the loss alone when there
        are no metrics, else ``[loss, *metrics]``, or a dict with ``return_dict=True``."""
        if kwargs:
            raise TypeError(f"evaluate: unexpected arguments {sorted(kwargs)}")
        self._assert_compiled("evaluate")
        verbose = _resolve_verbose(verbose)
        iterator = _EpochIterator(
            _make_batches(x, y, sample_weight, batch_size, False, "evaluate"),
            steps,
            "evaluate",
            "steps",
        )
        callback_list, _ = self._callback_list(callbacks, verbose, 1, iterator.steps)
        logs = self._test_loop(iterator, callback_list, verbose)
        return logs if return_dict else self._flatten_metrics_in_order(logs)

    def predict(self, x, batch_size=None, verbose="auto", steps=None, callbacks=None):
        """The model's outputs for ``x`` (inference mode), as numpy arrays joined over
        batches."""
        verbose = _resolve_verbose(verbose)
        iterator = _EpochIterator(
            _make_batches(x, None, None, batch_size, False, "predict"), steps, "predict", "steps"
        )
        callback_list, _ = self._callback_list(callbacks, verbose, 1, iterator.steps)
        callback_list.on_predict_begin()
        progress = _Progress(iterator.steps, "", verbose and self._bar_verbose)
        batch_hooks = self._batch_hooks["predict"]
        outputs, samples = [], 0
        for step, batch in iterator.epoch():
            if batch_hooks:
                callback_list.on_predict_batch_begin(step)
            batch_outputs = nest.map_structure(_to_numpy, self.predict_step(batch))
            outputs.append(batch_outputs)
            samples += _batch_size(batch[0])
            progress.update(step + 1, {}, samples)
            if batch_hooks:
                callback_list.on_predict_batch_end(step, {"outputs": batch_outputs})
        if not outputs:
            raise ValueError("predict: the data produced no batches")
        progress.update(len(outputs), {}, samples, final=True)
        progress.close({})
        callback_list.on_predict_end()
        flat = [
            np.concatenate(parts) for parts in zip(*(nest.flatten(o) for o in outputs), strict=True)
        ]
        return nest.pack_sequence_as(outputs[0], flat)

    def _batch_data(self, who, x, y=None, sample_weight=None):
        """One batch as tensors, converted like ``fit``'s (float64 to float32)."""

        def convert(value):
            if isinstance(value, (_core.Tensor, _core.Variable)):
                return value
            return _core.convert_to_tensor(_as_array(value))

        parts = [x] if y is None else [x, y] if sample_weight is None else [x, y, sample_weight]
        return tuple(nest.map_for(convert, (part,), nest.SEQUENCES, True, who) for part in parts)

    def train_on_batch(self, x, y=None, sample_weight=None, class_weight=None, return_dict=False):
        """One ``train_step`` on the given batch; returns the loss (and metrics)."""
        self._assert_compiled("train_on_batch")
        if class_weight is not None and y is not None:
            sample_weight = _class_sample_weights(y, class_weight, sample_weight, "train_on_batch")
        logs = _float_logs(self.train_step(self._batch_data("train_on_batch", x, y, sample_weight)))
        return logs if return_dict else self._flatten_metrics_in_order(logs)

    def test_on_batch(self, x, y=None, sample_weight=None, return_dict=False):
        """One ``test_step`` on the given batch; returns the loss (and metrics)."""
        self._assert_compiled("test_on_batch")
        logs = _float_logs(self.test_step(self._batch_data("test_on_batch", x, y, sample_weight)))
        return logs if return_dict else self._flatten_metrics_in_order(logs)

    def predict_on_batch(self, x):
        """The model's outputs for one batch, as numpy."""
        return nest.map_structure(
            _to_numpy, self.predict_step(self._batch_data("predict_on_batch", x))
        )

    # ------------------------------------------------------------------ weight files
    def save_weights(self, filepath, overwrite=True, max_shard_size=None):
        """Writes the weights to a safetensors file, keyed ``"0003/conv2d_1/kernel"``
        (position, layer, weight) so the order survives."""
        import os

        from .. import __version__
        from . import saving

        del max_shard_size
        filepath = os.fspath(filepath)
        if not overwrite and os.path.exists(filepath):
            raise FileExistsError(f"save_weights: {filepath} exists and overwrite=False was given")
        named = {
            f"{index:04d}/{layer.name}/{weight_name}": variable.numpy()
            for index, (layer, weight_name, variable) in enumerate(self._weights_with_owners())
        }
        metadata = {
            "format": "ferrotape.keras.weights",
            "format_version": "1",
            "ferrotape_version": str(__version__),
            "model_name": self.name,
        }
        saving.save_weights_file(filepath, named, metadata)

    def load_weights(self, filepath, skip_mismatch=False):
        """Loads weights written by ``save_weights``: matched by position, with the count and
        every shape checked (a ValueError names the first mismatching weight)."""
        import os

        from . import saving

        filepath = os.fspath(filepath)
        stored = saving.load_weights_file(filepath)
        keys = sorted(stored)
        owned = self._weights_with_owners()
        if not owned and keys:
            raise ValueError(
                f"load_weights: model '{self.name}' has no weights yet; build it first (call it "
                f"on a batch, or give it an input shape) and then load {filepath}"
            )
        if len(keys) != len(owned) and not skip_mismatch:
            raise ValueError(
                f"load_weights: {filepath} holds {len(keys)} weights but model '{self.name}' "
                f"has {len(owned)}"
            )
        assignments = []
        for key, (layer, weight_name, variable) in zip(keys, owned, strict=False):
            value = stored[key]
            expected = tuple(variable.shape)
            if tuple(value.shape) != expected:
                if skip_mismatch:
                    continue
                raise ValueError(
                    f"load_weights: weight {key!r} in {filepath} has shape {tuple(value.shape)} "
                    f"but the model's weight '{layer.name}/{weight_name}' has shape {expected}"
                )
            assignments.append((variable, value))
        for variable, value in assignments:
            variable.assign(np.asarray(value, dtype=variable.dtype.name))

    def save(self, filepath, overwrite=True, **kwargs):
        raise NotImplementedError(
            "Model.save: whole-model files are not supported by ferrotape; use "
            "save_weights/load_weights"
        )

    # ------------------------------------------------------------------ summary
    def summary(
        self,
        line_length=None,
        positions=None,
        print_fn=None,
        expand_nested=False,
        show_trainable=False,
        layer_range=None,
    ):
        """Prints Keras's table of layers (name and type, output shape, parameter count) and
        the parameter totals."""
        text = _summary_text(
            self, line_length, positions, expand_nested, show_trainable, layer_range
        )
        (print_fn or print)(text)

    def get_config(self):
        return {"name": self.name, "trainable": self.trainable}


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


# ----------------------------------------------------------------------------- Sequential


class Sequential(Model):
    """A model that applies its layers one after the other.

    >>> import ferrotape as ft
    >>> model = ft.keras.Sequential([ft.keras.Input(shape=(4,)), ft.keras.layers.Dense(2)])
    >>> model.output_shape
    (None, 2)
    """

    def __init__(self, layers=None, trainable=True, name=None):
        super().__init__(trainable=trainable, name=name)
        object.__setattr__(self, "_input_layer", None)
        self._layers = []
        for layer in layers or []:
            self.add(layer, rebuild=False)
        self._maybe_rebuild()

    @property
    def layers(self):
        return list(self._layers)

    def add(self, layer, rebuild=True):
        """Appends a layer (or an ``Input`` as the first element)."""
        if isinstance(layer, KerasTensor):
            origin = layer._node.layer if layer._node is not None else None
            if not isinstance(origin, InputLayer):
                raise ValueError(
                    "Sequential.add: a KerasTensor can only be added if it comes from "
                    "keras.Input; received the output of a layer"
                )
            layer = origin
        if isinstance(layer, InputLayer):
            if self._layers or self._input_layer is not None:
                raise ValueError(
                    "Sequential.add: an Input can only be the first element of a Sequential model"
                )
            object.__setattr__(self, "_input_layer", layer)
            return
        if not isinstance(layer, Layer):
            raise ValueError(
                f"Only instances of `keras.Layer` can be added to a Sequential model. Received: "
                f"{layer!r} (of type {type(layer).__name__})"
            )
        if any(existing.name == layer.name for existing in self._layers):
            raise ValueError(
                f"All layers added to a Sequential model should have unique names. Name "
                f"'{layer.name}' is already the name of a layer in this model. Update the "
                f"`name` argument to pass a unique name."
            )
        if self._input_layer is None and not self._layers and layer._input_batch_shape:
            object.__setattr__(
                self, "_input_layer", InputLayer(batch_shape=layer._input_batch_shape)
            )
        self._layers.append(layer)
        if rebuild:
            self._maybe_rebuild()

    def pop(self, rebuild=True):
        """Removes and returns the last layer."""
        if not self._layers:
            raise TypeError("There are no layers in the model.")
        layer = self._layers.pop()
        if rebuild:
            self._maybe_rebuild()
        return layer

    def _maybe_rebuild(self):
        object.__setattr__(self, "built", False)
        input_shape = self.input_shape
        if self._layers and input_shape is not None:
            self.build(input_shape)

    @property
    def input_shape(self):
        if self._input_layer is not None:
            return self._input_layer.batch_shape
        return self._build_input_shape

    @property
    def output_shape(self):
        if not self._layers:
            return self.input_shape
        return self._layers[-1]._output_shape

    def _build_from_call(self, input_shape):
        pass  # the layers build as the first batch runs through them

    def build(self, input_shape=None):
        """Builds every layer by running zeros of ``input_shape`` (batch dim included) through
        the model, recording each layer's output shape with the batch dim as given."""
        if input_shape is None:
            input_shape = self.input_shape
        if input_shape is None:
            raise ValueError(
                "Sequential.build: the input shape is unknown; pass it, e.g. "
                "model.build((None, 784)), or start the model with keras.Input(shape=...)"
            )
        input_shape = _plain_shape(input_shape)
        dtype = self._input_layer.dtype if self._input_layer is not None else "float32"
        x = _zeros_for(input_shape, dtype)
        batch_unknown = _is_single_shape(input_shape) and input_shape[0] is None
        previous = _CONTEXT.symbolic_batch
        _CONTEXT.symbolic_batch = batch_unknown
        try:
            for layer in self._layers:
                x = layer(x, training=False)
                shape = _shape_of(x)
                object.__setattr__(
                    layer, "_output_shape", _batch_as_none(shape) if batch_unknown else shape
                )
        finally:
            _CONTEXT.symbolic_batch = previous
        object.__setattr__(self, "built", True)
        object.__setattr__(self, "_build_input_shape", input_shape)
        object.__setattr__(self, "_output_shape", self.output_shape)
        _structure_changed()

    def call(self, inputs, training=None, mask=None):
        del mask
        outputs = inputs
        for layer in self._layers:
            outputs = layer(outputs)
        return outputs

    def get_config(self):
        layers = []
        if self._input_layer is not None:
            layers.append(
                {
                    "class_name": "InputLayer",
                    "config": {
                        "batch_shape": self._input_layer.batch_shape,
                        "dtype": self._input_layer.dtype,
                        "name": self._input_layer.name,
                    },
                }
            )
        for layer in self._layers:
            layers.append({"class_name": type(layer).__name__, "config": layer.get_config()})
        return {"name": self.name, "trainable": self.trainable, "layers": layers}


# ----------------------------------------------------------------------------- Functional


class Functional(Model):
    """A model defined by ``Input`` tensors and the outputs of layers called on them."""

    def __init__(self, inputs, outputs, name=None, trainable=True, **kwargs):
        Model.__init__(self, name=name, trainable=trainable, **kwargs)
        flat_inputs = nest.flatten_for(inputs, (list, tuple), "Model(inputs, outputs)")
        flat_outputs = nest.flatten_for(outputs, (list, tuple), "Model(inputs, outputs)")
        for tensor in flat_inputs + flat_outputs:
            if not isinstance(tensor, KerasTensor):
                raise ValueError(
                    f"Model(inputs, outputs): expected KerasTensors (from keras.Input and "
                    f"layer calls), received {type(tensor).__name__}"
                )
        object.__setattr__(self, "_inputs_struct", inputs)
        object.__setattr__(self, "_outputs_struct", outputs)
        nodes = _ordered_nodes(flat_outputs, flat_inputs)
        object.__setattr__(self, "_nodes", nodes)
        layers = []
        for node in nodes:
            if all(node.layer is not seen for seen in layers):
                layers.append(node.layer)
        self._functional_layers = layers
        object.__setattr__(self, "built", True)
        object.__setattr__(self, "_build_input_shape", _shape_of(inputs))
        object.__setattr__(self, "_output_shape", _shape_of(outputs))

    @property
    def inputs(self):
        return nest.flatten(self._inputs_struct)

    @property
    def outputs(self):
        return nest.flatten(self._outputs_struct)

    @property
    def input(self):
        """The model's input KerasTensor(s), as given to ``Model(inputs, ...)``."""
        return self._inputs_struct

    @property
    def output(self):
        return self._outputs_struct

    @property
    def input_shape(self):
        return self._build_input_shape

    @property
    def output_shape(self):
        return self._output_shape

    def _build_from_call(self, input_shape):
        pass

    def call(self, inputs, training=None, mask=None):
        del mask
        values = {}
        flat_inputs = nest.flatten(self._inputs_struct)
        given = nest.flatten(inputs) if len(flat_inputs) > 1 else [inputs]
        if len(given) != len(flat_inputs):
            raise ValueError(
                f"Model '{self.name}' expects {len(flat_inputs)} input(s), received {len(given)}"
            )
        for tensor, value in zip(flat_inputs, given, strict=True):
            values[id(tensor)] = self._converted_inputs(value)
        for node in self._nodes:
            if isinstance(node.layer, InputLayer):
                continue
            args = nest.map_structure(
                lambda v: values[id(v)] if isinstance(v, KerasTensor) else v, node.inputs
            )
            out = node.layer(args, *node.rest, **node.kwargs)
            for tensor, value in zip(node.outputs, nest.flatten(out), strict=True):
                values[id(tensor)] = value
        flat = [values[id(t)] for t in nest.flatten(self._outputs_struct)]
        return nest.pack_sequence_as(self._outputs_struct, flat)


_FUNCTIONAL_VARIANTS = {}


def _functional_variant(cls):
    """``cls`` with ``Functional`` mixed in (cached): same name, module and methods, so
    ``isinstance(m, cls)`` holds and the subclass's overrides win over Functional's."""
    variant = _FUNCTIONAL_VARIANTS.get(cls)
    if variant is None:
        variant = type(cls.__name__, (cls, Functional), {"__module__": cls.__module__})
        variant.__qualname__ = cls.__qualname__
        _FUNCTIONAL_VARIANTS[cls] = variant
    return variant


def _ordered_nodes(flat_outputs, flat_inputs):
    """The layer calls needed for the outputs, each after the calls it depends on."""
    order, visited = [], set()
    input_ids = {id(t) for t in flat_inputs}

    def visit(tensor):
        node = tensor._node
        if node is None:
            raise ValueError(f"Model(inputs, outputs): {tensor!r} was not made by a layer call")
        if id(node) in visited:
            return
        visited.add(id(node))
        if isinstance(node.layer, InputLayer):
            if id(tensor) not in input_ids:
                raise ValueError(
                    f"Model(inputs, outputs): the outputs depend on input '{tensor.name}', which "
                    f"is not in `inputs`"
                )
        for parent in node.input_tensors():
            visit(parent)
        order.append(node)

    for tensor in flat_outputs:
        visit(tensor)
    return order


# ----------------------------------------------------------------------------- summary


def _memory(variables):
    return sum(math.prod(v.shape) * v.dtype.size for v in variables)


def _readable_size(size):
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if size / 1024 < 1:
            return f"{size:.2f} {unit}"
        size /= 1024
    return f"{size:.2f} PB"


def _layer_rows(layer, prefix, expand_nested, show_trainable):
    if not layer.built:
        params = "0 (unbuilt)"
    else:
        params = f"{layer.count_params():,}"
    row = [f"{prefix}{layer.name} ({type(layer).__name__})", _format_shape(layer._output_shape)]
    row.append(params)
    if show_trainable:
        row.append(("Y" if layer.trainable else "N") if layer.weights else "-")
    rows = [row]
    if expand_nested and isinstance(layer, Model):
        indent = "   " * (prefix.count("└") + 1) + "└ "
        for sub in layer.layers:
            rows.extend(_layer_rows(sub, indent, expand_nested, show_trainable))
    return rows


def _layer_index_range(layers, layer_range):
    if layer_range is None:
        return 0, len(layers)
    if len(layer_range) != 2 or not all(isinstance(s, str) for s in layer_range):
        raise ValueError(
            f"summary: layer_range must be a list or tuple of 2 strings, received {layer_range}"
        )
    lower = [i for i, layer in enumerate(layers) if re.match(layer_range[0], layer.name)]
    upper = [i for i, layer in enumerate(layers) if re.match(layer_range[1], layer.name)]
    if not lower or not upper:
        raise ValueError(
            f"summary: the layer_range names do not match the model's layers: {layer_range}"
        )
    return min(lower), max(upper) + 1


def _table(header, rows, widths, alignment):
    """A table drawn with box characters, as Keras 3's (rich) summary."""

    def cell_lines(text, width):
        return textwrap.wrap(text, width, break_long_words=True, replace_whitespace=False) or [""]

    def line(cells, sep):
        wrapped = [cell_lines(c, w) for c, w in zip(cells, widths, strict=True)]
        height = max(len(lines) for lines in wrapped)
        out = []
        for i in range(height):
            parts = []
            for lines, width, align in zip(wrapped, widths, alignment, strict=True):
                text = lines[i] if i < len(lines) else ""
                parts.append(" " + (text.rjust(width) if align == "right" else text.ljust(width)))
            out.append(sep + (" " + sep).join(parts) + " " + sep)
        return out

    def rule(left, mid, right, fill):
        return left + mid.join(fill * (w + 2) for w in widths) + right

    lines = [rule("┏", "┳", "┓", "━"), *line(header, "┃"), rule("┡", "╇", "┩", "━")]
    for i, row in enumerate(rows):
        if i:
            lines.append(rule("├", "┼", "┤", "─"))
        lines.extend(line(row, "│"))
    lines.append(rule("└", "┴", "┘", "─"))
    return lines


def _summary_text(model, line_length, positions, expand_nested, show_trainable, layer_range):
    header = ["Layer (type)", "Output Shape", "Param #"]
    alignment = ["left", "left", "right"]
    default_length = 88
    positions = list(positions or [0.45, 0.80, 1.0])
    if show_trainable:
        default_length += 12
        positions = [p * 0.90 for p in positions] + [1.0]
        header.append("Trainable")
        alignment.append("left")
    line_length = line_length or min(default_length, shutil.get_terminal_size().columns - 4)
    if positions[-1] <= 1:
        positions = [int(p * line_length) for p in positions]
    edges = [0, *positions]
    widths = [b - a for a, b in zip(edges, edges[1:], strict=False)]
    if any(w < 4 for w in widths):
        raise ValueError("Insufficient console width to print summary.")
    # Borders and padding take 3 characters per column plus one: the contents get the rest.
    contents = [w - 3 for w in widths]
    contents[0] -= 1
    # A header never wraps: narrow columns borrow from the widest one.
    for i, title in enumerate(header):
        deficit = len(title) - contents[i]
        widest = max(range(len(contents)), key=contents.__getitem__)
        if deficit > 0 and contents[widest] - deficit >= len(header[widest]):
            contents[i] += deficit
            contents[widest] -= deficit
    if any(w < 1 for w in contents):
        raise ValueError("Insufficient console width to print summary.")

    layers = model.layers
    start, stop = _layer_index_range(layers, layer_range)
    rows = []
    for layer in layers[start:stop]:
        rows.extend(_layer_rows(layer, "", expand_nested, show_trainable))

    trainable = model.trainable_weights
    non_trainable = model.non_trainable_weights
    trainable_count = sum(math.prod(v.shape) for v in trainable)
    non_trainable_count = sum(math.prod(v.shape) for v in non_trainable)
    optimizer_variables = []
    optimizer = getattr(model, "optimizer", None)
    if getattr(model, "compiled", False) and optimizer is not None:
        if getattr(optimizer, "built", False):
            optimizer_variables = list(getattr(optimizer, "variables", []))
    optimizer_count = sum(math.prod(v.shape) for v in optimizer_variables)
    total = trainable_count + non_trainable_count + optimizer_count
    total_memory = _memory(trainable) + _memory(non_trainable) + _memory(optimizer_variables)

    lines = [f'Model: "{model.name}"', *_table(header, rows, contents, alignment)]
    lines.append(f" Total params: {total:,} ({_readable_size(total_memory)})")
    lines.append(f" Trainable params: {trainable_count:,} ({_readable_size(_memory(trainable))})")
    lines.append(
        f" Non-trainable params: {non_trainable_count:,} ({_readable_size(_memory(non_trainable))})"
    )
    if optimizer_variables:
        lines.append(
            f" Optimizer params: {optimizer_count:,} "
            f"({_readable_size(_memory(optimizer_variables))})"
        )
    return "\n".join(lines)


def clone_model(model, input_tensors=None, clone_function=None):
    """A new Sequential model with the same layers rebuilt from their configs (fresh weights,
    as Keras); ``clone_function(layer)`` may build each new layer instead."""
    if input_tensors is not None:
        raise ValueError("clone_model: input_tensors is not supported by ferrotape")
    if not isinstance(model, Sequential):
        raise ValueError(
            f"clone_model: only Sequential models can be cloned by ferrotape, received "
            f"{type(model).__name__}"
        )

    def rebuild(layer):
        return layer.__class__.from_config(layer.get_config())

    clone = clone_function or rebuild
    cloned = Sequential(name=model.name + "_clone")
    if model._input_layer is not None:
        cloned.add(InputLayer(batch_shape=model._input_layer.batch_shape))
    for layer in model.layers:
        cloned.add(clone(layer), rebuild=False)
    cloned._maybe_rebuild()
    return cloned


__all__ = ["Functional", "Model", "Sequential", "clone_model", "unpack_x_y_sample_weight"]
