"""``Optimizer``: Keras 3's ``apply_gradients`` step on ferrotape variables (the state it
updates is ``BaseOptimizer``'s, in ``base_optimizer.py``).

One step (``apply``) runs, in Keras 3's order: drop pairs whose gradient is ``None``, unscale by
``loss_scale_factor``, clip (``clipnorm`` per tensor, or ``global_clipnorm``, or
``clipvalue``), decay the weights (``weight_decay``: ``var -= var * weight_decay * lr``, inside
the native rule's call for the optimizers that have one), update each variable with the
optimizer's rule, update the moving averages (``use_ema``, one native call), then
``iterations += 1``. The learning rate is read once per step, from the ``learning_rate``
variable or a schedule evaluated at ``iterations`` (the count *before* this step).

Each rule exists once. SGD, Adam (AdamW), RMSprop and Adagrad name a native rule
(``_native_rule``, the fused kernels of ``ferrotape-core``'s ``kernels/optim.rs``) and its
hyperparameters; every other optimizer (Nadam, Adamax, Adadelta, Lion, custom optimizers written
the Keras 3 way) is its ``update_step(gradient, variable, learning_rate)``. ``_update_path``
chooses between updating every variable in one native call and ``update_step`` per variable.

Updates are never recorded by a tape: the optimizer's own slots are non-trainable variables
(never watched), and assignments are not differentiable operations.
"""

import ferrotape as ft

from ... import _core
from ...polymorphic_function import host_computed
from . import schedules as _schedules
from .base_optimizer import BaseOptimizer, _warn_at_caller


class Optimizer(BaseOptimizer):
    """Base class of the Keras optimizers (Keras 3's ``keras.optimizers.Optimizer``); the
    constructor's arguments are ``BaseOptimizer``'s. A subclass either names a native rule
    (``_native_rule``) or overrides ``update_step`` (and ``build`` to create its variables)."""

    # The name of the native rule (``ferrotape._core.optimizers.apply``) of a built-in
    # optimizer, whose hyperparameters ``_native_hyperparameters`` gives; None when the rule is
    # the optimizer's own ``update_step``.
    _native_rule = None
    # ``iterations`` before the step ``apply`` is running (None outside it), and the scalars
    # ``_coefficients`` computed for it.
    _step_in_progress = None
    _coefficients_cache = None
    # The variable the native rule reads a schedule's rate from (made on first use; not one of
    # the optimizer's saved variables).
    _schedule_value = None

    # ------------------------------------------------------------------ the step

    def apply_gradients(self, grads_and_vars):
        """Applies ``(gradient, variable)`` pairs, skipping pairs whose gradient is None;
        returns ``iterations``."""
        pairs = list(grads_and_vars)
        if not pairs:
            return self._iterations
        grads, trainable_variables = zip(*pairs, strict=True)
        self.apply(grads, trainable_variables)
        return self._iterations

    def apply(self, grads, trainable_variables=None):
        """Updates ``trainable_variables`` (default: the variables the optimizer was built
        with) from ``grads``, one gradient per variable."""
        grads = list(grads)
        if not grads:
            return
        if trainable_variables is None:
            if not self.built:
                raise ValueError(
                    f"{type(self).__name__}: when passing `grads` without `variables`, the "
                    "optimizer must already be built on a list of variables. Call "
                    "`optimizer.build(trainable_variables)` first."
                )
            if len(grads) != len(self._trainable_variables):
                raise ValueError(
                    f"{type(self).__name__}: received {len(grads)} gradients, but the "
                    f"optimizer is tracking {len(self._trainable_variables)} trainable variables."
                )
            variables = self._trainable_variables
        else:
            variables = list(trainable_variables)
            if len(variables) != len(grads):
                raise ValueError(
                    f"{type(self).__name__}: received {len(grads)} gradients for "
                    f"{len(variables)} variables; they must pair one to one."
                )
            if not self.built:
                self.build(variables)
                self.built = True
        indices = self._indices_of(variables)
        grads, variables, indices = self._filter_empty_gradients(grads, variables, indices)
        grads = self._checked_gradients(grads, variables, indices)
        if self.loss_scale_factor is not None:
            grads = [g / self.loss_scale_factor for g in grads]
        grads = self._clip_gradients(grads)
        if self._reads_step_natively():
            # The rule reads `iterations` and the learning-rate variable itself when it runs,
            # so that a step traced by ft.function replays with their current values.
            slots = [self._slots[index] for index in indices]
            learning_rate = self._learning_rate
            if isinstance(learning_rate, _schedules.LearningRateSchedule):
                learning_rate = self._scheduled_learning_rate()
            self._apply_native_rule(
                grads, variables, slots, learning_rate, self._iterations, decaying=indices
            )
            if self.use_ema:
                self._update_moving_averages()
            self._iterations.assign_add(1)
            return

        # The step reads its number and learning rate into Python: inside ft.function it is a
        # host computation (with no result), run again on every replay with that call's
        # gradients, in order with the step's other effects.
        def step_on_host(*gradients):
            self._python_step(list(gradients), variables, indices)
            return []

        host_computed(step_on_host, grads)

    def _python_step(self, grads, variables, indices):
        """A step whose number and learning rate are Python values: legacy decay, or a Python
        ``update_step`` (the native rule otherwise), with the weight decay and moving averages
        around it."""
        step = int(self._iterations.numpy())
        learning_rate = self._current_learning_rate(step)
        if self._decays_weights():
            self._apply_weight_decay(variables, indices, learning_rate)
        self._step_in_progress = step
        try:
            if self._update_path() == "one native call":
                slots = [self._slots[index] for index in indices]
                self._apply_native_rule(grads, variables, slots, learning_rate, step + 1)
            else:
                for gradient, variable in zip(grads, variables, strict=True):
                    self.update_step(gradient, variable, learning_rate)
        finally:
            self._step_in_progress = None
        if self.use_ema:
            self._update_moving_averages()
        self._iterations.assign_add(1)

    def _decays_weights(self):
        """Whether a step decays weights (Muon decays some with its own rate)."""
        return self.weight_decay is not None

    def _filter_empty_gradients(self, grads, variables, indices):
        if all(g is not None for g in grads):
            return grads, variables, indices
        kept = [k for k, g in enumerate(grads) if g is not None]
        if not kept:
            raise ValueError(f"{type(self).__name__}: no gradients provided for any variable.")
        missing = [str(v.name) for g, v in zip(grads, variables, strict=True) if g is None]
        _warn_at_caller(
            f"{type(self).__name__}: gradients do not exist for variables {missing} when "
            "minimizing the loss. If using `model.compile()`, did you forget to provide a "
            "`loss` argument?"
        )
        return [grads[k] for k in kept], [variables[k] for k in kept], [indices[k] for k in kept]

    def _checked_gradients(self, grads, variables, indices):
        """Tensors in each variable's dtype; a gradient whose shape is not its variable's is an
        error (broadcasting would silently apply a wrong update)."""
        shapes = self._variable_shapes
        dtypes = self._variable_dtypes
        checked = []
        for gradient, variable, index in zip(grads, variables, indices, strict=True):
            dtype = dtypes[index]
            if type(gradient) is not ft.Tensor:
                gradient = ft.convert_to_tensor(gradient)
            if gradient.dtype != dtype:
                gradient = ft.cast(gradient, dtype)
            if not tuple.__eq__(gradient.shape, shapes[index]):
                raise ValueError(
                    f"{type(self).__name__}: the gradient for variable {variable.name!r} has "
                    f"shape {tuple(gradient.shape)}, but the variable has shape "
                    f"{shapes[index]}; they must match."
                )
            checked.append(gradient)
        return checked

    def _clip_gradients(self, grads):
        if self.clipnorm and self.clipnorm > 0:
            clipnorm = self.clipnorm
            # g * c / max(||g||, c): unchanged when the norm is within c (including 0).
            return [
                g * clipnorm / ft.maximum(ft.sqrt(ft.reduce_sum(ft.square(g))), clipnorm)
                for g in grads
            ]
        if self.global_clipnorm and self.global_clipnorm > 0:
            return _clip_by_global_norm(grads, self.global_clipnorm)
        if self.clipvalue and self.clipvalue > 0:
            value = self.clipvalue
            return [ft.clip_by_value(g, -value, value) for g in grads]
        return grads

    def _update_path(self):
        """The one choice of how a step updates the variables: ``"one native call"`` for every
        variable when the optimizer's rule is native and its ``update_step`` is this class's (the
        same rule, without a Python round trip per variable); otherwise ``"update_step"`` per
        variable, so that an optimizer whose rule is its ``update_step`` (Nadam, a Keras-style
        custom optimizer, a subclass of Adam overriding it) gets it called, as Keras does."""
        if self._native_rule is not None and type(self).update_step is Optimizer.update_step:
            return "one native call"
        return "update_step"

    def _reads_step_natively(self):
        """Whether the whole step is the native rule with a learning-rate variable (or a
        schedule, see ``_scheduled_learning_rate``), weight decay included, and tensor
        arithmetic for the moving averages: no legacy decay computed in Python."""
        return (
            self._update_path() == "one native call"
            and isinstance(self._learning_rate, ft.Variable | _schedules.LearningRateSchedule)
            and not self._legacy_decay
        )

    def _scheduled_learning_rate(self):
        """A variable holding the schedule's rate at ``iterations``, for the native rule to read.

        The schedule is Python arithmetic on the step read from the host, which a trace cannot
        record; so inside ``ft.function`` the refresh is also recorded as a host effect, run
        again before the rule on every replay (it overwrites the value assigned while tracing,
        which the trace records as a constant)."""
        if self._schedule_value is None:
            self._schedule_value = ft.Variable(
                0.0, trainable=False, name=f"{self.name}/scheduled_learning_rate"
            )

        def refresh(*_):
            step = int(_core.host_value(self._iterations))
            self._schedule_value.assign(ft.cast(self._learning_rate(step), ft.float32))

        refresh()
        if _core.is_tracing():
            _core.trace_host_effect(refresh, [])
        return self._schedule_value

    def update_step(self, gradient, variable, learning_rate):
        """Keras 3's update of one variable from its gradient: here the optimizer's native rule
        (SGD, Adam, AdamW, RMSprop, Adagrad); other optimizers override it."""
        if self._native_rule is None:
            raise NotImplementedError(
                f"{type(self).__name__} must implement `update_step(gradient, variable, "
                "learning_rate)`."
            )
        slots = [self._slots_of(variable)]
        self._apply_native_rule(
            [gradient], [variable], slots, float(learning_rate), self._local_step()
        )

    def _apply_native_rule(self, grads, variables, slots, learning_rate, local_step, decaying=None):
        """The native rule on ``variables``; given ``decaying`` (the variables' indices), the
        rule first applies the weight decay to those whose flag says so."""
        decays = None
        if decaying is not None and self.weight_decay is not None:
            decays = [self._decay_flags[index] for index in decaying]
        _core.optimizers.apply(
            self._native_rule,
            learning_rate,
            local_step,
            self._native_hyperparameters(),
            variables,
            grads,
            slots,
            weight_decay=None if decays is None else float(self.weight_decay),
            decays=decays,
        )

    def _native_hyperparameters(self):
        """The native rule's hyperparameters by Keras's names (flags as bools)."""
        return {}

    def _local_step(self):
        """The step being applied, counted from 1 (``iterations + 1``)."""
        if self._step_in_progress is not None:
            return self._step_in_progress + 1
        return int(self._iterations.numpy()) + 1

    def _coefficients(self, learning_rate):
        """This step's scalars from ``_step_coefficients``, computed once per step (not once
        per variable) by the optimizers whose rule is their ``update_step``."""
        key = (self._local_step(), float(learning_rate))
        if self._coefficients_cache is None or self._coefficients_cache[0] != key:
            self._coefficients_cache = (key, self._step_coefficients(key[1], key[0]))
        return self._coefficients_cache[1]

    def _step_coefficients(self, learning_rate, local_step):
        """The per-step scalars shared by every variable's update (``local_step`` counts from
        1); the base class passes the learning rate on."""
        del local_step
        return learning_rate

    # ------------------------------------------- Keras helpers for custom optimizers

    def assign(self, variable, value):
        variable.assign(value)

    def assign_add(self, variable, value):
        variable.assign_add(value)

    def assign_sub(self, variable, value):
        variable.assign_sub(value)

    def scale_loss(self, loss):
        """``loss * loss_scale_factor`` (``loss`` unchanged without a factor)."""
        if self.loss_scale_factor is not None:
            return loss * self.loss_scale_factor
        return loss

    def minimize(self, loss, var_list, tape=None):
        """TF's ``minimize``: differentiates ``loss`` (a callable, or a tensor with the ``tape``
        that recorded it) with respect to ``var_list`` and applies the gradients."""
        if callable(var_list):
            var_list = var_list()
        var_list = list(var_list)
        if not callable(loss) and tape is None:
            raise ValueError(
                f"{type(self).__name__}.minimize: `tape` is required when a tensor loss is passed."
            )
        if callable(loss):
            with ft.GradientTape() as tape:
                for variable in var_list:
                    tape.watch(variable)
                loss = loss()
        grads = tape.gradient(loss, var_list)
        return self.apply_gradients(zip(grads, var_list, strict=True))


def _clip_by_global_norm(grads, clip_norm):
    """Keras's ``clip_by_global_norm``: every gradient times ``c / max(norm, c)``, where
    ``norm`` is the L2 norm of all of them together; a non-finite norm gives NaN gradients."""
    dtype = grads[0].dtype
    squares = [ft.reduce_sum(ft.square(g)) for g in grads]
    squares = [s if s.dtype == dtype else ft.cast(s, dtype) for s in squares]
    norm = ft.sqrt(ft.add_n(squares) if len(squares) > 1 else squares[0])
    # min(1/norm, 1/c) * c is 1 for a norm of 0 (1/0 = inf); (norm - norm) turns inf/NaN into NaN.
    scale = ft.minimum(1.0 / norm, 1.0 / clip_norm) * clip_norm + (norm - norm)
    return [g * (scale if g.dtype == dtype else ft.cast(scale, g.dtype)) for g in grads]
