"""RMSprop."""

from .optimizer import Optimizer


class RMSprop(Optimizer):
    """RMSprop (Hinton), Keras 3's rule (run natively, one fused pass per variable)::

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

    The other arguments (clipping, weight decay, EMA, ``name``) are ``Optimizer``'s.

    >>> import ferrotape as ft
    >>> w = ft.Variable(10.0)
    >>> opt = ft.keras.optimizers.RMSprop(learning_rate=0.1)
    >>> _ = opt.apply_gradients([(w.read_value(), w)])  # the gradient of w**2 / 2
    >>> round(float(w.numpy()), 5)  # 10 - 0.1 * 10 / sqrt(0.1 * 100)
    9.68377
    """

    _native_rule = "rmsprop"

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

    # Keras 3 makes the velocities, then the momentums, then the average gradients.
    _slot_groups = ((0,), (1,), (2,))

    def _create_slots(self, variable):
        # The native rule's order: velocity, then momentum, then the average gradient.
        slots = (self.add_variable_from_reference(variable, "velocity"),)
        if self.momentum > 0:
            slots += (self.add_variable_from_reference(variable, "momentum"),)
        if self.centered:
            slots += (self.add_variable_from_reference(variable, "average_gradient"),)
        return slots

    def _native_hyperparameters(self):
        return {
            "rho": float(self.rho),
            "momentum": float(self.momentum),
            "epsilon": float(self.epsilon),
            "centered": bool(self.centered),
        }

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
