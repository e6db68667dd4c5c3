"""Lamb."""

import ferrotape as ft

from .optimizer import Optimizer


class Lamb(Optimizer):
    """Lamb (You et al., "Large Batch Optimization for Deep Learning"), Keras 3's rule: Adam's
    step scaled per variable by the trust ratio ``||w|| / ||update||``, with ``t`` the step
    counted from 1::

        m += (g - m) * (1 - beta_1)
        v += (g * g - v) * (1 - beta_2)
        update = (m / (1 - beta_1 ** t)) / (sqrt(v / (1 - beta_2 ** t)) + epsilon)
        ratio = ||w|| / ||update||   (1 when either norm is 0)
        w -= ratio * learning_rate * update

    Args:
        learning_rate: float, schedule or callable; defaults to 0.001.
        beta_1: decay rate of the first-moment estimate; defaults to 0.9.
        beta_2: decay rate of the second-moment estimate; defaults to 0.999.
        epsilon: added to the denominator; defaults to 1e-7.

    The other arguments (clipping, weight decay, EMA, ``name``) are ``Optimizer``'s.

    >>> import ferrotape as ft
    >>> w = ft.Variable([3.0, 4.0])
    >>> opt = ft.keras.optimizers.Lamb(learning_rate=0.1)
    >>> _ = opt.apply_gradients([(ft.constant([1.0, 1.0]), w)])
    >>> [round(float(x), 4) for x in w.numpy()]  # the step's length is 0.1 * ||w|| = 0.5
    [2.6464, 3.6464]
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
        name="lamb",
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
            self.add_variable_from_reference(variable, "velocity"),
        )

    def _step_coefficients(self, learning_rate, local_step):
        beta_1, beta_2 = float(self.beta_1), float(self.beta_2)
        return (
            learning_rate,
            beta_1,
            beta_2,
            1.0 - beta_1**local_step,
            1.0 - beta_2**local_step,
            float(self.epsilon),
        )

    def update_step(self, gradient, variable, learning_rate):
        lr, beta_1, beta_2, correction_1, correction_2, epsilon = self._coefficients(learning_rate)
        m, v = self._slots_of(variable)
        m.assign_add((gradient - m) * (1.0 - beta_1))
        v.assign_add((ft.square(gradient) - v) * (1.0 - beta_2))
        update = (m / correction_1) / (ft.sqrt(v / correction_2) + epsilon)
        w_norm = ft.sqrt(ft.reduce_sum(ft.square(variable)))
        update_norm = ft.sqrt(ft.reduce_sum(ft.square(update)))
        trusted = (w_norm > 0) & (update_norm > 0)
        ratio = ft.where(trusted, w_norm / ft.where(trusted, update_norm, 1.0), 1.0)
        variable.assign_sub(ratio * lr * update)

    def get_config(self):
        config = super().get_config()
        config.update({"beta_1": self.beta_1, "beta_2": self.beta_2, "epsilon": self.epsilon})
        return config
