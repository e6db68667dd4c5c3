"""Adagrad."""

from .optimizer import Optimizer


class Adagrad(Optimizer):
    """Adagrad (Duchi et al.), Keras 3's rule (run natively, one fused pass per variable)::

        accumulator += g * g
        w -= learning_rate * g / sqrt(accumulator + epsilon)

    Args:
        learning_rate: float, schedule or callable; defaults to 0.001.
        initial_accumulator_value: the accumulators' starting value; defaults to 0.1.
        epsilon: added under the square root; defaults to 1e-7.

    The other arguments (clipping, weight decay, EMA, ``name``) are ``Optimizer``'s.

    >>> import ferrotape as ft
    >>> w = ft.Variable(1.0)
    >>> opt = ft.keras.optimizers.Adagrad(learning_rate=0.1, initial_accumulator_value=0.0)
    >>> _ = opt.apply_gradients([(ft.constant(2.0), w)])
    >>> round(float(w.numpy()), 5)  # 1 - 0.1 * 2 / sqrt(4)
    0.9
    """

    _native_rule = "adagrad"

    def __init__(
        self,
        learning_rate=0.001,
        initial_accumulator_value=0.1,
        epsilon=1e-7,
        weight_decay=None,
        clipnorm=None,
        clipvalue=None,
        global_clipnorm=None,
        use_ema=False,
        ema_momentum=0.99,
        ema_overwrite_frequency=None,
        loss_scale_factor=None,
        gradient_accumulation_steps=None,
        name="adagrad",
        **kwargs,
    ):
        super().__init__(
            learning_rate=learning_rate,
            weight_decay=weight_decay,
            clipnorm=clipnorm,
            clipvalue=clipvalue,
            global_clipnorm=global_clipnorm,
            use_ema=use_ema,
            ema_momentum=ema_momentum,
            ema_overwrite_frequency=ema_overwrite_frequency,
            loss_scale_factor=loss_scale_factor,
            gradient_accumulation_steps=gradient_accumulation_steps,
            name=name,
            **kwargs,
        )
        self.initial_accumulator_value = initial_accumulator_value
        self.epsilon = epsilon

    def _create_slots(self, variable):
        accumulator = self.add_variable_from_reference(
            variable, "accumulator", initializer=float(self.initial_accumulator_value)
        )
        return (accumulator,)

    def _native_hyperparameters(self):
        return {"epsilon": float(self.epsilon)}

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "initial_accumulator_value": self.initial_accumulator_value,
                "epsilon": self.epsilon,
            }
        )
        return config
