"""Stochastic gradient descent, with optional (Nesterov) momentum."""

from .optimizer import Optimizer


class SGD(Optimizer):
    """Gradient descent (with momentum), Keras 3's rule (run natively, one fused pass per
    variable).

    Without momentum: ``w -= learning_rate * g``. With momentum::

        velocity = momentum * velocity - learning_rate * g
        w += velocity                                        # nesterov=False
        w += momentum * velocity - learning_rate * g         # nesterov=True

    Args:
        learning_rate: float, schedule or callable; defaults to 0.01.
        momentum: float in [0, 1]; 0 (the default) keeps no velocity.
        nesterov: whether to apply Nesterov momentum.

    The other arguments (clipping, weight decay, EMA, ``name``) are ``Optimizer``'s.

    >>> import ferrotape as ft
    >>> w = ft.Variable(1.0)
    >>> opt = ft.keras.optimizers.SGD(learning_rate=0.1)
    >>> _ = opt.apply_gradients([(ft.constant(2.0), w)])
    >>> round(float(w.numpy()), 6)  # 1 - 0.1 * 2
    0.8
    """

    _native_rule = "sgd"

    def __init__(
        self,
        learning_rate=0.01,
        momentum=0.0,
        nesterov=False,
        weight_decay=None,
        clipnorm=None,
        clipvalue=None,
        global_clipnorm=None,
        use_ema=False,
        ema_momentum=0.99,
        ema_overwrite_frequency=None,
        loss_scale_factor=None,
        gradient_accumulation_steps=None,
        name="SGD",
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
        if isinstance(momentum, bool) or not isinstance(momentum, int | float):
            raise ValueError(
                f"SGD: `momentum` must be a float between [0, 1]. Received: {momentum!r}"
            )
        if not 0 <= momentum <= 1:
            raise ValueError(
                f"SGD: `momentum` must be a float between [0, 1]. Received: {momentum}"
            )
        self.momentum = momentum
        self.nesterov = nesterov

    def _create_slots(self, variable):
        if self.momentum != 0:
            return (self.add_variable_from_reference(variable, "momentum"),)
        return ()

    def _native_hyperparameters(self):
        return {"momentum": float(self.momentum), "nesterov": bool(self.nesterov)}

    def get_config(self):
        config = super().get_config()
        config.update({"momentum": self.momentum, "nesterov": self.nesterov})
        return config
