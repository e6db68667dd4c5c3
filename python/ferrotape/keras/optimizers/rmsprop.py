"""RMSprop."""

import ferrotape as ft

from .base import Optimizer


class RMSprop(Optimizer):
    """RMSprop (Hinton), Keras 3's rule::

        velocity = rho * velocity + (1 - rho) * g * g
        average = rho * average + (1 - rho) * g                  # centered=True
        denominator = velocity - average ** 2 + epsilon          # centered=True
        denominator = velocity + epsilon                         # centered=False
        increment = learning_rate * g / sqrt(denominator)
        momentum_slot = momentum * momentum_slot + increment     # momentum > 0
        w -= momentum_slot                                       # momentum > 0
        w -= increment                                           # momentum == 0

    Args:
        learning_rate: float, schedule or callable; defaults to 0.001.
        rho: discount of the running average of squared gradients; defaults to 0.9.
        momentum: defaults to 0.0 (no momentum slot).
        epsilon: added under the square root; defaults to 1e-7.
        centered: normalise by the estimated variance instead of the second moment.
        Other arguments: see ``Optimizer``.

    >>> import ferrotape as ft
    >>> w = ft.Variable(10.0)
    >>> opt = ft.keras.optimizers.RMSprop(learning_rate=0.1)
    >>> _ = opt.apply_gradients([(w.read_value(), w)])  # the gradient of w**2 / 2
    >>> round(float(w.numpy()), 5)  # 10 - 0.1 * 10 / sqrt(0.1 * 100)
    9.68377
    """

    def __init__(
        self,
        learning_rate=0.001,
        rho=0.9,
        momentum=0.0,
        epsilon=1e-7,
        centered=False,
        weight_decay=None,
        clipnorm=None,
        clipvalue=None,
        global_clipnorm=None,
        use_ema=False,
        ema_momentum=0.99,
        ema_overwrite_frequency=None,
        loss_scale_factor=None,
        gradient_accumulation_steps=None,
        name="rmsprop",
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
        self.momentum = momentum
        self.epsilon = epsilon
        self.centered = centered

    def _create_slots(self, variable):
        velocity = self.add_variable_from_reference(variable, "velocity")
        momentum = None
        if self.momentum > 0:
            momentum = self.add_variable_from_reference(variable, "momentum")
        average_gradient = None
        if self.centered:
            average_gradient = self.add_variable_from_reference(variable, "average_gradient")
        return velocity, momentum, average_gradient

    def _step_coefficients(self, learning_rate, local_step):
        rho = float(self.rho)
        return learning_rate, rho, 1.0 - rho, float(self.momentum), float(self.epsilon)

    def _fused_update(self, grads, variables, slots, coefficients):
        if self.centered or not self._natively_updatable(variables):
            return False
        momenta = [s[1] for s in slots] if self.momentum > 0 else None
        ft._core.optimizers.rmsprop_update(
            variables, grads, [s[0] for s in slots], momenta, *coefficients
        )
        return True

    def _update_step(self, gradient, variable, slots, coefficients):
        learning_rate, rho, one_minus_rho, momentum, epsilon = coefficients
        velocity, momentum_slot, average_gradient = slots
        velocity.assign(velocity * rho + ft.square(gradient) * one_minus_rho)
        if average_gradient is not None:
            average_gradient.assign(average_gradient * rho + gradient * one_minus_rho)
            denominator = velocity - ft.square(average_gradient) + epsilon
        else:
            denominator = velocity + epsilon
        increment = gradient * learning_rate / ft.sqrt(denominator)
        if momentum_slot is not None:
            momentum_slot.assign(momentum_slot * momentum + increment)
            variable.assign_sub(momentum_slot)
        else:
            variable.assign_sub(increment)

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "rho": self.rho,
                "momentum": self.momentum,
                "epsilon": self.epsilon,
                "centered": self.centered,
            }
        )
        return config
