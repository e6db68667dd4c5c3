"""The training loop of ``Model``: ``compile``, ``fit``, ``evaluate``, ``predict`` and the
``*_on_batch`` methods (Keras 3's ``keras.src.trainers.trainer``). ``Trainer`` never imports the
models: it reaches the model only through ``self``.

As Keras 3 on TensorFlow, the loops run their step through ``ft.function``: ``train_function``,
``test_function`` and ``predict_function`` (made by ``make_*_function`` once per ``compile``)
trace ``train_step``, ``test_step`` and ``predict_step`` once per shape of batch (so a smaller
last batch traces once more) and then replay them from Rust, the metrics' updates and the
optimizer step included; the metric results come back as tensors and are read after the call.
Python side effects in an overridden step (``print``, a counter) therefore run once per trace,
not once per batch. ``compile(run_eagerly=True)`` (or ``model.run_eagerly = True`` before the
loop first runs) or ``tf.config.run_functions_eagerly(True)`` runs every step eagerly instead.
A step that cannot be traced (a host read such as ``.numpy()`` or ``int(t)`` in it, an op that
records nothing) runs eagerly with one warning saying why, and gives the same results. Unlike
Keras's, these functions take one batch, not an iterator.
"""

import reprlib
import warnings

import numpy as np

from ... import GradientTape, _core, _public_api, nest, polymorphic_function
from .compile_utils import (
    _CompiledLoss,
    _float_logs,
    _for_output,
    _MeanTracker,
    _MetricResults,
    _requested_metrics,
)
from .data_adapters import (
    _as_array,
    _batch_size,
    _class_sample_weights,
    _make_batches,
    _should_validate,
    _split_validation,
    _to_numpy,
    _unpack_validation,
    unpack_x_y_sample_weight,
)
from .epoch_iterator import _EpochIterator, _overrides, _Progress, _resolve_verbose


class Trainer:
    """The training half of :class:`~ferrotape.keras.Model` (mixed in before ``Layer``)."""

    # Until compile (predict needs none) and the first loop: traced, and no step made yet.
    _run_eagerly = False
    train_function = None
    test_function = None
    predict_function = None

    # ------------------------------------------------------------------ compile
    @_public_api.filter_traceback
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
        # Kept as Keras's compile_config records them (saved in .keras files).
        compile_config = {
            "optimizer": optimizer,
            "loss": loss,
            "loss_weights": loss_weights,
            "metrics": metrics,
            "weighted_metrics": weighted_metrics,
            "run_eagerly": run_eagerly,
            "steps_per_execution": steps_per_execution,
            "jit_compile": jit_compile if isinstance(jit_compile, bool) else False,
        }
        from .. import metrics as metrics_module
        from .. import optimizers

        optimizer = optimizers.get(optimizer)
        if (
            auto_scale_loss
            and self.dtype_policy.name == "mixed_float16"
            and not isinstance(optimizer, optimizers.LossScaleOptimizer)
        ):
            # Keras 3's rule: float16 gradients underflow without loss scaling.
            optimizer = optimizers.LossScaleOptimizer(optimizer, name="loss_scale_optimizer")
        object.__setattr__(self, "optimizer", optimizer)
        object.__setattr__(self, "loss", loss)
        output_names = getattr(self, "output_names", None)
        object.__setattr__(
            self,
            "_compiled_loss",
            None if loss is None else _CompiledLoss(loss, loss_weights, output_names),
        )
        compile_metrics, metric_outputs = [], []
        for group in (metrics, weighted_metrics):
            for output, identifier in _requested_metrics(group):
                output_loss = loss.get(output) if isinstance(loss, dict) else loss
                metric = metrics_module.get(identifier, loss=output_loss)
                if output is not None and output_names and len(output_names) > 1:
                    # Keras 3 names a metric of one output after it: "department_accuracy".
                    metric.name = f"{output}_{metric.name}"
                compile_metrics.append(metric)
                metric_outputs.append(output)
        object.__setattr__(self, "_metric_outputs", metric_outputs)
        object.__setattr__(self, "_compile_metrics", compile_metrics)
        object.__setattr__(self, "_loss_tracker", _MeanTracker("loss"))
        object.__setattr__(self, "compiled", True)
        object.__setattr__(self, "_compile_config", compile_config)
        self.run_eagerly = run_eagerly
        # The steps are traced anew after each compile (its loss, metrics and optimizer).
        for name in ("train_function", "test_function", "predict_function"):
            object.__setattr__(self, name, None)

    @property
    def run_eagerly(self):
        """Whether the loops call their steps eagerly rather than through ``ft.function``
        (``compile``'s argument; settable, read when the loop next makes its function)."""
        return self._run_eagerly

    @run_eagerly.setter
    def run_eagerly(self, value):
        object.__setattr__(self, "_run_eagerly", value)

    def _assert_compiled(self):
        if not self.compiled:
            # Keras 3's type and words.
            raise ValueError("You must call `compile()` before using the model.")

    @property
    def metrics(self):
        """The loss tracker ("loss") and the compiled metrics."""
        if not self.compiled:
            return []
        per_output = [] if self._compiled_loss is None else self._compiled_loss.output_trackers
        return [self._loss_tracker, *per_output, *self._compile_metrics]

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
        names = getattr(self, "output_names", None)
        outputs = getattr(self, "_metric_outputs", [None] * len(self._compile_metrics))
        for metric, output in zip(self._compile_metrics, outputs, strict=True):
            truth, prediction = y, y_pred
            if output is not None:
                truth, prediction = (
                    _for_output(y, output, names),
                    _for_output(y_pred, output, names),
                )
            if sample_weight is None:
                metric.update_state(truth, prediction)
            else:
                metric.update_state(truth, prediction, sample_weight=sample_weight)
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
            # The optimizer's loss scale (LossScaleOptimizer, loss_scale_factor), which its
            # update divides out of the gradients again. Built first, as Keras builds it before
            # the first step: an unbuilt LossScaleOptimizer scales by its initial value, a
            # constant that a traced step would keep for every later call.
            if not self.optimizer.built and self.trainable_variables:
                self.optimizer.build(self.trainable_variables)
            scaled_loss = self.optimizer.scale_loss(loss)
        self._loss_tracker.update_state(loss, sample_weight=_batch_size(x))
        variables = self.trainable_variables
        if variables:
            gradients = tape.gradient(scaled_loss, variables)
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

    # ------------------------------------------------------------------ step functions
    def __getstate__(self):
        # The traced steps are caches over this model's own methods (and hold native traces,
        # which do not pickle): a copy makes its own when its loops next run.
        state = super().__getstate__()
        for name in ("train_function", "test_function", "predict_function"):
            if name in state:
                state[name] = None
        return state

    def _make_function(self, step):
        """``step`` (one batch in, logs or outputs out), traced by ``ft.function`` unless the
        model runs eagerly. The traced step returns the metric results themselves (tensors),
        computed inside it, rather than the lazy mapping an eager ``train_step`` returns."""
        if self.run_eagerly:
            return step

        def one_step_on_data(data):
            result = step(data)
            if isinstance(result, _MetricResults):
                result = {name: result[name] for name in result}
            return result

        return polymorphic_function.function(
            one_step_on_data, name=f"{type(self).__name__}.{step.__name__}"
        )

    def make_train_function(self, force=False):
        """``train_function``: one ``train_step`` on a batch (see the module documentation);
        made once per ``compile`` unless ``force``."""
        if self.train_function is None or force:
            object.__setattr__(self, "train_function", self._make_function(self.train_step))
        return self.train_function

    def make_test_function(self, force=False):
        """``test_function``: one ``test_step`` on a batch; made once per ``compile``."""
        if self.test_function is None or force:
            object.__setattr__(self, "test_function", self._make_function(self.test_step))
        return self.test_function

    def make_predict_function(self, force=False):
        """``predict_function``: one ``predict_step`` on a batch; made once per ``compile``."""
        if self.predict_function is None or force:
            object.__setattr__(self, "predict_function", self._make_function(self.predict_step))
        return self.predict_function

    # ------------------------------------------------------------------ fit
    @_public_api.filter_traceback
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
        self._assert_compiled()
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
        # BackupAndRestore, resuming an interrupted fit, says where to start.
        initial_epoch = self.__dict__.pop("_initial_epoch", None) or initial_epoch
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
        from .. import callbacks as callbacks_module
        from ..callbacks.callback_list import _flatten_callbacks

        if isinstance(callbacks, callbacks_module.CallbackList):
            user = list(getattr(callbacks, "callbacks", []))
        else:
            user = _flatten_callbacks(callbacks)  # one callback, or lists
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
        train_function = self.make_train_function()
        logs, samples, steps = None, 0, 0
        for step, batch in train.epoch():
            if batch_hooks:
                callback_list.on_train_batch_begin(step)
            logs = train_function(batch)
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
        test_function = self.make_test_function()
        logs, samples, steps = None, 0, 0
        for step, batch in iterator.epoch():
            if batch_hooks:
                callback_list.on_test_batch_begin(step)
            logs = test_function(batch)
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

    @_public_api.filter_traceback
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
        self._assert_compiled()
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

    @_public_api.filter_traceback
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
        predict_function = self.make_predict_function()
        outputs, samples = [], 0
        for step, batch in iterator.epoch():
            if batch_hooks:
                callback_list.on_predict_batch_begin(step)
            batch_outputs = nest.map_structure(_to_numpy, predict_function(batch))
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

    @_public_api.filter_traceback
    def train_on_batch(self, x, y=None, sample_weight=None, class_weight=None, return_dict=False):
        """One ``train_step`` on the given batch; returns the loss (and metrics)."""
        self._assert_compiled()
        if class_weight is not None and y is not None:
            sample_weight = _class_sample_weights(y, class_weight, sample_weight, "train_on_batch")
        data = self._batch_data("train_on_batch", x, y, sample_weight)
        logs = _float_logs(self.make_train_function()(data))
        return logs if return_dict else self._flatten_metrics_in_order(logs)

    @_public_api.filter_traceback
    def test_on_batch(self, x, y=None, sample_weight=None, return_dict=False):
        """One ``test_step`` on the given batch; returns the loss (and metrics)."""
        self._assert_compiled()
        data = self._batch_data("test_on_batch", x, y, sample_weight)
        logs = _float_logs(self.make_test_function()(data))
        return logs if return_dict else self._flatten_metrics_in_order(logs)

    @_public_api.filter_traceback
    def predict_on_batch(self, x):
        """The model's outputs for one batch, as numpy."""
        data = self._batch_data("predict_on_batch", x)
        return nest.map_structure(_to_numpy, self.make_predict_function()(data))
