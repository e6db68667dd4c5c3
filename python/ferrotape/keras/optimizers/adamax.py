"""Adamax."""

import ferrotape as ft

from .optimizer import Optimizer


class Adamax(Optimizer):
    """Adamax (Kingma & Ba, section 7.1): Adam with the infinity norm, Keras 3's rule::

        m += (g - m) * (1 - beta_1)
        u = max(beta_2 * u, |g|)
        w -= learning_rate * m / ((1 - beta_1 ** t) * (u + epsilon))

    Args:
        learning_rate: float, schedule or callable; defaults to 0.001.
        beta_1: decay rate of the first-moment estimate; defaults to 0.9.
        beta_2: decay rate of the infinity norm; defaults to 0.999.
        epsilon: added to the norm; defaults to 1e-7.

    The other arguments (clipping, weight decay, EMA, ``name``) are ``Optimizer``'s.

    >>> import ferrotape as ft
    >>> w = ft.Variable(1.0)
    >>> opt = ft.keras.optimizers.Adamax(learning_rate=0.1)
    >>> _ = opt.apply_gradients([(ft.constant(2.0), w)])
    >>> round(float(w.numpy()), 5)  # 1 - 0.1 * (0.1 * 2) / (0.1 * 2)
    0.9
    """

    def __init__(
        self,
        learning_rate=0.001,
        beta_1=0.9,
        beta_2=0.999,
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
        name="adamax",
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
        self.epsilon = epsilon

    def _create_slots(self, variable):
        return (
            self.add_variable_from_reference(variable, "momentum"),
            self.add_variable_from_reference(variable, "norm"),
        )

    def _step_coefficients(self, learning_rate, local_step):
        beta_1 = float(self.beta_1)
        return (
            learning_rate,
            1.0 - beta_1,
            float(self.beta_2),
            1.0 - beta_1**local_step,
            float(self.epsilon),
        )

    def update_step(self, gradient, variable, learning_rate):
        lr, one_minus_beta_1, beta_2, bias, epsilon = self._coefficients(learning_rate)
        m, u = self._slots_of(variable)
        m.assign_add((gradient - m) * one_minus_beta_1)
        u.assign(ft.maximum(u * beta_2, ft.abs(gradient)))
        variable.assign_sub(m * lr / ((u + epsilon) * bias))

    def get_config(self):
        config = super().get_config()
        config.update({"beta_1": self.beta_1, "beta_2": self.beta_2, "epsilon": self.epsilon})
        return config
