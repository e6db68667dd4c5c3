"""Adafactor."""

import ferrotape as ft

from .optimizer import Optimizer


def _rms(x):
    return ft.sqrt(ft.reduce_mean(ft.square(x)))


class Adafactor(Optimizer):
    """Adafactor (Shazeer & Stern, "Adaptive Learning Rates with Sublinear Memory Cost"), Keras
    3's rule. For a variable of rank 2 or more, the second moment is kept factored as row and
    column means (``r``, ``c``), so its memory grows with rows + columns, not their product.
    With ``t`` the step counted from 1::

        rho = min(learning_rate, 1 / sqrt(t))      # relative_step: also caps the learning rate
        alpha = max(epsilon_2, rms(w)) * rho
        g2 = g * g + epsilon_1
        beta = 1 - t ** beta_2_decay
        rank >= 2:  r = beta * r + (1 - beta) * mean(g2, -1)
                    c = beta * c + (1 - beta) * mean(g2, -2)
                    v = (r / mean(r, -1))[..., None] * c[..., None, :]
        rank < 2:   v = beta * v + (1 - beta) * g2
        u = g / sqrt(v)
        w -= alpha * u / max(1, rms(u) / clip_threshold)

    Args:
        learning_rate: float, schedule or callable; defaults to 0.001.
        beta_2_decay: the decay exponent of the second moment; defaults to -0.8.
        epsilon_1: added to the squared gradient; defaults to 1e-30.
        epsilon_2: the smallest scale of a step; defaults to 1e-3.
        clip_threshold: the update's RMS above which it is scaled down; defaults to 1.0.
        relative_step: whether a constant learning rate is also capped by ``1 / sqrt(t)``;
            defaults to True.

    The other arguments (clipping, weight decay, EMA, ``name``) are ``Optimizer``'s.

    >>> import ferrotape as ft
    >>> w = ft.Variable([[1.0, 2.0], [3.0, 4.0]])
    >>> opt = ft.keras.optimizers.Adafactor(learning_rate=0.1)
    >>> _ = opt.apply_gradients([(ft.ones([2, 2]), w)])
    >>> [v.name for v in opt.variables][2:]  # the factored second moment: a row and a column
    ['adafactor/Variable:0', 'adafactor/Variable:0', 'adafactor/Variable_velocity:0']
    """

    def __init__(
        self,
        learning_rate=0.001,
        beta_2_decay=-0.8,
        epsilon_1=1e-30,
        epsilon_2=1e-3,
        clip_threshold=1.0,
        relative_step=True,
        weight_decay=None,
        clipnorm=None,
        clipvalue=None,
        global_clipnorm=None,
        use_ema=False,
        ema_momentum=0.99,
        ema_overwrite_frequency=None,
        loss_scale_factor=None,
        gradient_accumulation_steps=None,
        name="adafactor",
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
        self.beta_2_decay = beta_2_decay
        self.epsilon_1 = epsilon_1
        self.epsilon_2 = epsilon_2
        self.clip_threshold = clip_threshold
        self.relative_step = relative_step

    def _create_slots(self, variable):
        shape = tuple(variable.shape)
        # Keras names the factors after the variable itself; a variable of rank < 2 is not
        # factored, but Keras still makes (unused) scalar factors, kept here for its layout.
        base = str(variable.name).removesuffix(":0")
        rows, columns = (shape[:-1], shape[:-2] + shape[-1:]) if len(shape) >= 2 else ((), ())
        return (
            self.add_variable(rows, dtype=variable.dtype, name=base),
            self.add_variable(columns, dtype=variable.dtype, name=base),
            self.add_variable_from_reference(variable, "velocity"),
        )

    def _step_coefficients(self, learning_rate, local_step):
        capped = min(learning_rate, local_step**-0.5)
        if self.relative_step and not callable(self._learning_rate):
            learning_rate = capped
        return (
            min(learning_rate, local_step**-0.5),
            1.0 - local_step ** float(self.beta_2_decay),
            float(self.epsilon_1),
            float(self.epsilon_2),
            float(self.clip_threshold),
        )

    def update_step(self, gradient, variable, learning_rate):
        rho, beta, epsilon_1, epsilon_2, clip_threshold = self._coefficients(learning_rate)
        r, c, v = self._slots_of(variable)
        alpha = ft.maximum(epsilon_2, _rms(variable)) * rho
        squared = ft.square(gradient) + epsilon_1
        if len(variable.shape) >= 2:
            r.assign(r * beta + ft.reduce_mean(squared, axis=-1) * (1.0 - beta))
            c.assign(c * beta + ft.reduce_mean(squared, axis=-2) * (1.0 - beta))
            row_share = r / ft.reduce_mean(r, axis=-1, keepdims=True)
            v.assign(ft.expand_dims(row_share, -1) * ft.expand_dims(c, -2))
        else:
            v.assign(v * beta + squared * (1.0 - beta))
        u = gradient / ft.sqrt(v)
        u = u / ft.maximum(1.0, _rms(u) / clip_threshold)
        variable.assign_sub(alpha * u)

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "beta_2_decay": self.beta_2_decay,
                "epsilon_1": self.epsilon_1,
                "epsilon_2": self.epsilon_2,
                "clip_threshold": self.clip_threshold,
                "relative_step": self.relative_step,
            }
        )
        return config
