"""Adadelta."""

import ferrotape as ft

from .optimizer import Optimizer


class Adadelta(Optimizer):
    """Adadelta (Zeiler), Keras 3's rule (the learning rate still scales the step)::

        a_g = rho * a_g + (1 - rho) * g * g
        delta = -sqrt(a_d + epsilon) * g / sqrt(a_g + epsilon)
        a_d = rho * a_d + (1 - rho) * delta * delta
        w += learning_rate * delta

    Args:
        learning_rate: float, schedule or callable; defaults to 0.001 (Keras's default; the
            paper's rule is learning_rate=1.0).
        rho: decay rate of the accumulators; defaults to 0.95.
        epsilon: added under the square roots; defaults to 1e-7.

    The other arguments (clipping, weight decay, EMA, ``name``) are ``Optimizer``'s.

    >>> import ferrotape as ft
    >>> w = ft.Variable(1.0)
    >>> opt = ft.keras.optimizers.Adadelta(learning_rate=1.0, rho=0.0, epsilon=0.0)
    >>> _ = opt.apply_gradients([(ft.constant(2.0), w)])
    >>> float(w.numpy())  # delta = -sqrt(0) * 2 / 2: the first step is zero without epsilon
    1.0
    """

    def __init__(
        self,
        learning_rate=0.001,
        rho=0.95,
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
        name="adadelta",
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
        self.rho = rho
        self.epsilon = epsilon

    def _create_slots(self, variable):
        return (
            self.add_variable_from_reference(variable, "accumulated_grad"),
            self.add_variable_from_reference(variable, "accumulated_delta_var"),
        )

    def _step_coefficients(self, learning_rate, local_step):
        del local_step
        return learning_rate, float(self.rho), float(self.epsilon)

    def update_step(self, gradient, variable, learning_rate):
        lr, rho, epsilon = self._coefficients(learning_rate)
        accumulated_grad, accumulated_delta = self._slots_of(variable)
        accumulated_grad.assign(accumulated_grad * rho + ft.square(gradient) * (1.0 - rho))
        delta = -(
            ft.sqrt(accumulated_delta + epsilon) * gradient / ft.sqrt(accumulated_grad + epsilon)
        )
        accumulated_delta.assign(accumulated_delta * rho + ft.square(delta) * (1.0 - rho))
        variable.assign_add(delta * lr)

    def get_config(self):
        config = super().get_config()
        config.update({"rho": self.rho, "epsilon": self.epsilon})
        return config
