"""``LossScaleOptimizer``: dynamic loss scaling around another optimizer (Keras 3's
``keras.optimizers.LossScaleOptimizer``, also ``keras.mixed_precision.LossScaleOptimizer``)."""

import ferrotape as ft

from .optimizer import Optimizer

# The base optimizer's arguments with their defaults: a LossScaleOptimizer takes none of them
# (they belong on the inner optimizer), as in Keras.
_INNER_ONLY_ARGUMENTS = {
    "weight_decay": None,
    "clipnorm": None,
    "global_clipnorm": None,
    "clipvalue": None,
    "use_ema": False,
    "ema_momentum": 0.99,
    "ema_overwrite_frequency": None,
    "loss_scale_factor": None,
    "gradient_accumulation_steps": None,
}


class LossScaleOptimizer(Optimizer):
    """An optimizer that scales the loss dynamically, so that float16 gradients do not underflow.

    The loss is multiplied by a scale (``scale_loss``) before differentiation, which scales the
    gradients by the same factor; ``apply`` divides them by it again before the inner
    optimizer's update. The scale adapts: a step whose gradients hold an infinity or a NaN is
    skipped and halves the scale; after ``dynamic_growth_steps`` steps in a row with finite
    gradients, the scale doubles. ``Model.fit`` scales the loss itself when the optimizer is
    one of these.

    Args:
        inner_optimizer: the ``keras.optimizers.Optimizer`` whose updates are applied.
        initial_scale: float, the first loss scale (a large one, since a scale that is too
            high falls much faster than one that is too low rises).
        dynamic_growth_steps: int, the finite steps in a row after which the scale doubles.
        name: the optimizer's name.

    Raises:
        ValueError: for ``dynamic=False`` or any of the base optimizer's arguments (clipping,
            weight decay, ...), which belong on ``inner_optimizer``.

    >>> import ferrotape as ft
    >>> w = ft.Variable([1.0, 2.0])
    >>> opt = ft.keras.optimizers.LossScaleOptimizer(ft.keras.optimizers.SGD(0.1), 8.0)
    >>> with ft.GradientTape() as tape:
    ...     loss = opt.scale_loss(ft.reduce_sum(w * w))  # 8 * loss
    >>> opt.apply(tape.gradient(loss, [w]), [w])  # the gradients are divided by 8
    >>> w.numpy()
    array([0.8, 1.6], dtype=float32)
    """

    def __init__(
        self,
        inner_optimizer,
        initial_scale=2.0**15,
        dynamic_growth_steps=2000,
        name=None,
        **kwargs,
    ):
        if not kwargs.pop("dynamic", True):
            raise ValueError(
                "LossScaleOptimizer no longer supports `dynamic=False`. Instead, simply set "
                "`loss_scale_factor` directly on the `inner_optimizer`."
            )
        for argument, default in _INNER_ONLY_ARGUMENTS.items():
            if argument in kwargs and kwargs.pop(argument) != default:
                raise ValueError(
                    f"LossScaleOptimizer does not support `{argument}`. Instead, set "
                    f"`{argument}` on the `inner_optimizer`."
                )
        if kwargs:
            raise ValueError(
                f"LossScaleOptimizer does not support arguments: `{'`, `'.join(kwargs)}`."
            )
        if not isinstance(inner_optimizer, Optimizer):
            raise TypeError(
                "LossScaleOptimizer: `inner_optimizer` must be a keras.optimizers.Optimizer. "
                f"Received: {inner_optimizer!r}"
            )
        super().__init__(learning_rate=0.0, name=name)
        self.inner_optimizer = inner_optimizer
        self.initial_scale = float(initial_scale)
        self.dynamic_growth_steps = int(dynamic_growth_steps)
        self.inner_optimizer.loss_scale_factor = None

    def build(self, var_list):
        """Creates the step counter and the scale, and builds the inner optimizer."""
        self.step_counter = self.add_variable((), "zeros", ft.int64, name="step_counter")
        self.dynamic_scale = self.add_variable(
            (), self.initial_scale, ft.float32, name="dynamic_scale"
        )
        self.inner_optimizer.build(var_list)
        super().build(var_list)

    @property
    def variables(self):
        """Its own variables (``iteration``, ``learning_rate``, ``step_counter``,
        ``dynamic_scale``), then the inner optimizer's."""
        return self._variables[:] + self.inner_optimizer.variables

    @property
    def iterations(self):
        """The inner optimizer's step count (skipped steps do not count)."""
        return self.inner_optimizer.iterations

    @property
    def learning_rate(self):
        """The inner optimizer's learning rate (assigning sets it there)."""
        return self.inner_optimizer.learning_rate

    @learning_rate.setter
    def learning_rate(self, learning_rate):
        self.inner_optimizer.learning_rate = learning_rate

    def scale_loss(self, loss):
        """``loss`` times the current scale (``initial_scale`` before the first step)."""
        scale = self.dynamic_scale if self.built else self.initial_scale
        return ft.multiply(loss, ft.cast(scale, ft.convert_to_tensor(loss).dtype))

    def check_finite(self, grads):
        """Whether every element of every gradient (None skipped) is finite: a bool tensor."""
        finite = [ft.reduce_all(ft.math.is_finite(g)) for g in grads if g is not None]
        return ft.reduce_all(ft.stack(finite)) if finite else ft.constant(True)

    def apply(self, grads, trainable_variables=None):
        """Applies the unscaled ``grads`` with the inner optimizer when they are all finite
        (the scale doubles after ``dynamic_growth_steps`` such steps in a row); otherwise
        skips the step and halves the scale."""
        grads = list(grads)
        if not self.built:
            variables = trainable_variables
            if variables is None:
                raise ValueError(
                    "LossScaleOptimizer: when passing `grads` without `variables`, the "
                    "optimizer must already be built on a list of variables. Call "
                    "`optimizer.build(trainable_variables)` first."
                )
            self.build(list(variables))
        if not bool(self.check_finite(grads)):
            self.step_counter.assign(0)
            self.dynamic_scale.assign(self.dynamic_scale * 0.5)
            return
        scale = ft.convert_to_tensor(self.dynamic_scale)
        unscaled = [None if g is None else g / ft.cast(scale, g.dtype) for g in grads]
        self.inner_optimizer.apply(unscaled, trainable_variables)
        if int(self.step_counter.numpy()) == self.dynamic_growth_steps - 1:
            self.step_counter.assign(0)
            self.dynamic_scale.assign(self.dynamic_scale * 2.0)
        else:
            self.step_counter.assign_add(1)

    def finalize_variable_values(self, var_list):
        """The inner optimizer's (its moving averages, with ``use_ema``)."""
        self.inner_optimizer.finalize_variable_values(var_list)

    def get_config(self):
        """``name``, the serialized inner optimizer, ``initial_scale`` and
        ``dynamic_growth_steps``."""
        from . import serialize

        return {
            "name": self.name,
            "inner_optimizer": serialize(self.inner_optimizer),
            "initial_scale": self.initial_scale,
            "dynamic_growth_steps": self.dynamic_growth_steps,
        }

    @classmethod
    def from_config(cls, config, custom_objects=None):
        """A LossScaleOptimizer from ``get_config()``'s dict."""
        from . import deserialize

        config = dict(config)
        inner = config.pop("inner_optimizer")
        if isinstance(inner, dict):
            inner = deserialize(inner, custom_objects=custom_objects)
        return cls(inner, **config)
