"""Lion."""

import ferrotape as ft

from .optimizer import Optimizer


class Lion(Optimizer):
    """Lion (Chen et al., "Symbolic Discovery of Optimization Algorithms"), Keras 3's rule::

        w -= learning_rate * sign(beta_1 * m + (1 - beta_1) * g)
        m = beta_2 * m + (1 - beta_2) * g

    Args:
        learning_rate: float, schedule or callable; defaults to 0.001.
        beta_1: interpolation for the update direction, in (0, 1]; defaults to 0.9.
        beta_2: decay rate of the momentum; defaults to 0.99.

    The other arguments (clipping, weight decay, EMA, ``name``) are ``Optimizer``'s.

    >>> import ferrotape as ft
    >>> w = ft.Variable([1.0, 1.0])
    >>> opt = ft.keras.optimizers.Lion(learning_rate=0.1)
    >>> _ = opt.apply_gradients([(ft.constant([2.0, -0.5]), w)])
    >>> [round(float(x), 5) for x in w.numpy()]  # every coordinate moves by the learning rate
    [0.9, 1.1]
    """

    def __init__(
        self,
        learning_rate=0.001,
        beta_1=0.9,
        beta_2=0.99,
        weight_decay=None,
        clipnorm=None,
        clipvalue=None,
        global_clipnorm=None,
        use_ema=False,
        ema_momentum=0.99,
        ema_overwrite_frequency=None,
        loss_scale_factor=None,
        gradient_accumulation_steps=None,
        name="lion",
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
        self.beta_1 = beta_1
        self.beta_2 = beta_2
        if not 0 < beta_1 <= 1:
            raise ValueError(
                "Lion: argument `beta_1` must be in the [0, 1] range. Otherwise, the optimizer "
                f"degenerates to SignSGD. Received: beta_1={beta_1}."
            )

    def _create_slots(self, variable):
        return (self.add_variable_from_reference(variable, "momentum"),)

    def _step_coefficients(self, learning_rate, local_step):
        del local_step
        return learning_rate, float(self.beta_1), float(self.beta_2)

    def update_step(self, gradient, variable, learning_rate):
        lr, beta_1, beta_2 = self._coefficients(learning_rate)
        (m,) = self._slots_of(variable)
        variable.assign_sub(ft.sign(m * beta_1 + gradient * (1.0 - beta_1)) * lr)
        m.assign(m * beta_2 + gradient * (1.0 - beta_2))

    def get_config(self):
        config = super().get_config()
        config.update({"beta_1": self.beta_1, "beta_2": self.beta_2})
        return config
