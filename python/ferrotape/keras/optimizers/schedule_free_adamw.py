"""ScheduleFreeAdamW."""

import ferrotape as ft

from .optimizer import Optimizer


class ScheduleFreeAdamW(Optimizer):
    """Schedule-Free AdamW (Defazio et al., 2024), Keras 3's rule: no learning-rate schedule is
    needed, the iterate is an interpolation of a gradient sequence ``z`` (the ``momentum``
    slot, starting at the variable's value) and its running average ``x``. With
    ``t = iterations + 1`` and ``lr`` warmed up linearly over ``warmup_steps``::

        v = beta_2 * v + (1 - beta_2) * g ** 2
        z_new = z - lr * g / (sqrt(v / (1 - beta_2 ** t)) + epsilon)
        x = (w - (1 - beta_1) * z_new) / beta_1         # the average, recovered from w
        x = (1 - 1 / t) * x + (1 / t) * z_new
        w = (1 - beta_1) * z_new + beta_1 * x

    Args:
        learning_rate: float, schedule or callable; defaults to 0.0025.
        beta_1: interpolation between ``z`` and the average; defaults to 0.9.
        beta_2: decay rate of the second moment; defaults to 0.999.
        epsilon: added to the denominator; defaults to 1e-8.
        warmup_steps: steps of linear learning-rate warmup; defaults to 0.

    The other arguments (clipping, weight decay, EMA, ``name``) are ``Optimizer``'s.

    >>> import ferrotape as ft
    >>> w = ft.Variable([1.0])
    >>> opt = ft.keras.optimizers.ScheduleFreeAdamW(learning_rate=0.1)
    >>> _ = opt.apply_gradients([(ft.constant([2.0]), w)])
    >>> round(float(w.numpy()[0]), 4)  # a first step moves w to z: lr * g / |g| away
    0.9
    """

    def __init__(
        self,
        learning_rate=0.0025,
        beta_1=0.9,
        beta_2=0.999,
        epsilon=1e-8,
        warmup_steps=0,
        weight_decay=None,
        clipnorm=None,
        clipvalue=None,
        global_clipnorm=None,
        use_ema=False,
        ema_momentum=0.99,
        ema_overwrite_frequency=None,
        loss_scale_factor=None,
        gradient_accumulation_steps=None,
        name="schedule_free_adam_w",
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
        self.warmup_steps = warmup_steps

    def _create_slots(self, variable):
        momentum = self.add_variable_from_reference(variable, "momentum")
        momentum.assign(variable)  # z starts where the variable is
        return momentum, self.add_variable_from_reference(variable, "velocity")

    def _step_coefficients(self, learning_rate, local_step):
        if self.warmup_steps > 0:
            learning_rate *= min(local_step / self.warmup_steps, 1.0)
        return learning_rate, 1.0 - float(self.beta_2) ** local_step, 1.0 / local_step

    def update_step(self, gradient, variable, learning_rate):
        lr, bias_correction_2, weight = self._coefficients(learning_rate)
        beta_1, beta_2 = float(self.beta_1), float(self.beta_2)
        z, v = self._slots_of(variable)
        v.assign_add((ft.square(gradient) - v) * (1.0 - beta_2))
        z.assign_sub(lr * gradient / (ft.sqrt(v / bias_correction_2) + self.epsilon))
        # Keras's rule means the old z here, but under TensorFlow (2.21) its `momentum.value`
        # is the variable itself, read after the update: the new z is what TF computes.
        x = (variable - (1.0 - beta_1) * z) / beta_1
        x = (1.0 - weight) * x + weight * z
        variable.assign((1.0 - beta_1) * z + beta_1 * x)

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "beta_1": self.beta_1,
                "beta_2": self.beta_2,
                "epsilon": self.epsilon,
                "warmup_steps": self.warmup_steps,
            }
        )
        return config
