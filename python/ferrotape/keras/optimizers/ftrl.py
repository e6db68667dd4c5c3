"""Ftrl."""

import ferrotape as ft

from .optimizer import Optimizer


class Ftrl(Optimizer):
    """FTRL-Proximal (McMahan et al., "Ad Click Prediction: a View from the Trenches"), Keras 3's
    rule, with ``n`` the accumulator and ``z`` the linear slot::

        g' = g + 2 * l2_shrinkage * w
        n_new = n + g * g
        z += g' - (n_new ** -p - n ** -p) / learning_rate * w       # p = learning_rate_power
        q = n_new ** -p / learning_rate + 2 * (l2 + beta / (2 * learning_rate))
        w = (clip(z, -l1, l1) - z) / q
        n = n_new

    Args:
        learning_rate: float, schedule or callable; defaults to 0.001.
        learning_rate_power: how the step shrinks as the accumulator grows; <= 0; defaults
            to -0.5.
        initial_accumulator_value: the accumulator's start; >= 0; defaults to 0.1.
        l1_regularization_strength: non-negative; defaults to 0.
        l2_regularization_strength: non-negative; defaults to 0.
        l2_shrinkage_regularization_strength: an L2 penalty on the weights added to the
            gradient (not to the stabilising term); >= 0; defaults to 0.
        beta: added to the L2 term as ``beta / (2 * learning_rate)``; defaults to 0.

    The other arguments (clipping, weight decay, EMA, ``name``) are ``Optimizer``'s.

    >>> import ferrotape as ft
    >>> w = ft.Variable([1.0])
    >>> opt = ft.keras.optimizers.Ftrl(learning_rate=0.1, l1_regularization_strength=10.0)
    >>> _ = opt.apply_gradients([(ft.constant([1.0]), w)])
    >>> w.numpy().tolist()  # a strong L1 penalty sets the weight to exactly 0
    [0.0]
    """

    def __init__(
        self,
        learning_rate=0.001,
        learning_rate_power=-0.5,
        initial_accumulator_value=0.1,
        l1_regularization_strength=0.0,
        l2_regularization_strength=0.0,
        l2_shrinkage_regularization_strength=0.0,
        beta=0.0,
        weight_decay=None,
        clipnorm=None,
        clipvalue=None,
        global_clipnorm=None,
        use_ema=False,
        ema_momentum=0.99,
        ema_overwrite_frequency=None,
        loss_scale_factor=None,
        gradient_accumulation_steps=None,
        name="ftrl",
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
        for argument, value, sign in (
            ("initial_accumulator_value", initial_accumulator_value, "positive or zero"),
            ("learning_rate_power", -learning_rate_power, "negative or zero"),
            ("l1_regularization_strength", l1_regularization_strength, "positive or zero"),
            ("l2_regularization_strength", l2_regularization_strength, "positive or zero"),
            (
                "l2_shrinkage_regularization_strength",
                l2_shrinkage_regularization_strength,
                "positive or zero",
            ),
        ):
            if value < 0.0:
                shown = -value if argument == "learning_rate_power" else value
                raise ValueError(
                    f"Ftrl: `{argument}` needs to be {sign}. Received: {argument}={shown}."
                )
        self.learning_rate_power = learning_rate_power
        self.initial_accumulator_value = initial_accumulator_value
        self.l1_regularization_strength = l1_regularization_strength
        self.l2_regularization_strength = l2_regularization_strength
        self.l2_shrinkage_regularization_strength = l2_shrinkage_regularization_strength
        self.beta = beta

    def _create_slots(self, variable):
        return (
            self.add_variable_from_reference(
                variable, "accumulator", initializer=float(self.initial_accumulator_value)
            ),
            self.add_variable_from_reference(variable, "linear"),
        )

    def _step_coefficients(self, learning_rate, local_step):
        del local_step
        l2 = float(self.l2_regularization_strength) + float(self.beta) / (2.0 * learning_rate)
        return (
            learning_rate,
            -float(self.learning_rate_power),
            float(self.l1_regularization_strength),
            2.0 * l2,
            2.0 * float(self.l2_shrinkage_regularization_strength),
        )

    def update_step(self, gradient, variable, learning_rate):
        lr, power, l1, twice_l2, twice_shrinkage = self._coefficients(learning_rate)
        accumulator, linear = self._slots_of(variable)
        shrunk = gradient + variable * twice_shrinkage
        new_accumulator = accumulator + ft.square(gradient)
        grown = ft.pow(new_accumulator, power)
        linear.assign_add(shrunk - (grown - ft.pow(accumulator, power)) / lr * variable)
        quadratic = grown / lr + twice_l2
        variable.assign((ft.clip_by_value(linear, -l1, l1) - linear) / quadratic)
        accumulator.assign(new_accumulator)

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "learning_rate_power": self.learning_rate_power,
                "initial_accumulator_value": self.initial_accumulator_value,
                "l1_regularization_strength": self.l1_regularization_strength,
                "l2_regularization_strength": self.l2_regularization_strength,
                "l2_shrinkage_regularization_strength": self.l2_shrinkage_regularization_strength,
                "beta": self.beta,
            }
        )
        return config
