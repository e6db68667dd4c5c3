"""Adam and AdamW."""

from .optimizer import Optimizer


class Adam(Optimizer):
    """Adam (Kingma & Ba), Keras 3's rule (run natively, one fused pass per variable), with
    ``t`` the step counted from 1::

        alpha = learning_rate * sqrt(1 - beta_2 ** t) / (1 - beta_1 ** t)
        m += (g - m) * (1 - beta_1)
        v += (g * g - v) * (1 - beta_2)
        v_hat = max(v_hat, v)                       # amsgrad=True; v_hat replaces v below
        w -= alpha * m / (sqrt(v) + epsilon)

    Args:
        learning_rate: float, schedule or callable; defaults to 0.001.
        beta_1: decay rate of the first-moment estimate; defaults to 0.9.
        beta_2: decay rate of the second-moment estimate; defaults to 0.999.
        epsilon: added to the denominator ("epsilon hat" of the paper); defaults to 1e-7.
        amsgrad: whether to use the AMSGrad variant (the running maximum of ``v``).

    The other arguments (clipping, weight decay, EMA, ``name``) are ``Optimizer``'s.

    >>> import ferrotape as ft
    >>> w = ft.Variable(1.0)
    >>> opt = ft.keras.optimizers.Adam(learning_rate=0.1)
    >>> _ = opt.apply_gradients([(ft.constant(2.0), w)])
    >>> round(float(w.numpy()), 5)  # the first step moves by about the learning rate
    0.9
    """

    _native_rule = "adam"

    def __init__(
        self,
        learning_rate=0.001,
        beta_1=0.9,
        beta_2=0.999,
        epsilon=1e-7,
        amsgrad=False,
        weight_decay=None,
        clipnorm=None,
        clipvalue=None,
        global_clipnorm=None,
        use_ema=False,
        ema_momentum=0.99,
        ema_overwrite_frequency=None,
        loss_scale_factor=None,
        gradient_accumulation_steps=None,
        name="adam",
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
        self.amsgrad = amsgrad

    # Keras 3 makes the momentums and velocities together, then the velocity maxima.
    _slot_groups = ((0, 1), (2,))

    def _create_slots(self, variable):
        slots = (
            self.add_variable_from_reference(variable, "momentum"),
            self.add_variable_from_reference(variable, "velocity"),
        )
        if self.amsgrad:
            slots += (self.add_variable_from_reference(variable, "velocity_hat"),)
        return slots

    def _native_hyperparameters(self):
        return {
            "beta_1": float(self.beta_1),
            "beta_2": float(self.beta_2),
            "epsilon": float(self.epsilon),
            "amsgrad": bool(self.amsgrad),
        }

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "beta_1": self.beta_1,
                "beta_2": self.beta_2,
                "epsilon": self.epsilon,
                "amsgrad": self.amsgrad,
            }
        )
        return config


class AdamW(Adam):
    """Adam with decoupled weight decay (Loshchilov & Hutter): before each Adam update,
    ``w -= w * weight_decay * learning_rate``.

    Args:
        learning_rate: float, schedule or callable; defaults to 0.001.
        weight_decay: the decay rate; defaults to 0.004 and must not be None.
        beta_1: decay rate of the first-moment estimate; defaults to 0.9.
        beta_2: decay rate of the second-moment estimate; defaults to 0.999.
        epsilon: added to the denominator; defaults to 1e-7.
        amsgrad: whether to use the AMSGrad variant.

    The other arguments (clipping, weight decay, EMA, ``name``) are ``Optimizer``'s.
    """

    def __init__(
        self,
        learning_rate=0.001,
        weight_decay=0.004,
        beta_1=0.9,
        beta_2=0.999,
        epsilon=1e-7,
        amsgrad=False,
        clipnorm=None,
        clipvalue=None,
        global_clipnorm=None,
        use_ema=False,
        ema_momentum=0.99,
        ema_overwrite_frequency=None,
        loss_scale_factor=None,
        gradient_accumulation_steps=None,
        name="adamw",
        **kwargs,
    ):
        super().__init__(
            learning_rate=learning_rate,
            beta_1=beta_1,
            beta_2=beta_2,
            epsilon=epsilon,
            amsgrad=amsgrad,
            name=name,
            weight_decay=weight_decay,
            clipnorm=clipnorm,
            clipvalue=clipvalue,
            global_clipnorm=global_clipnorm,
            use_ema=use_ema,
            ema_momentum=ema_momentum,
            ema_overwrite_frequency=ema_overwrite_frequency,
            loss_scale_factor=loss_scale_factor,
            gradient_accumulation_steps=gradient_accumulation_steps,
            **kwargs,
        )
        if self.weight_decay is None:
            raise ValueError("AdamW: argument `weight_decay` must be a float. Received: None")
