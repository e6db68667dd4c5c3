"""Keras's activation layers with arguments: ``ReLU`` (``max_value``, ``negative_slope``,
``threshold``), ``LeakyReLU``, ``ELU`` and ``PReLU`` (a learned slope). Each is written in
ferrotape ops, so its gradient (to any order) is theirs.

>>> import ferrotape as ft
>>> x = ft.constant([[-2.0, 0.5, 8.0]])
>>> ft.keras.layers.LeakyReLU(negative_slope=0.5)(x).numpy().tolist()
[[-1.0, 0.5, 8.0]]
>>> ft.keras.layers.ReLU(max_value=6.0)(x).numpy().tolist()
[[0.0, 0.5, 6.0]]

Keras 3 keeps these in ``keras.src.layers.activations`` (``relu``, ``leaky_relu``, ``elu``,
``prelu``).
"""

import warnings

from .... import _core, nn
from ... import initializers, regularizers
from ..layer import Layer


def _non_negative(layer, what, value, allow_none=False):
    if value is None and allow_none:
        return None
    if value is None or isinstance(value, bool) or not isinstance(value, (int, float)):
        ok = False
    else:
        ok = float(value) >= 0.0
    if not ok:
        raise ValueError(
            f"{type(layer).__name__}: {what} must be a non-negative number. "
            f"Received: {what}={value!r}"
        )
    return float(value)


class ReLU(Layer):
    """``max_value`` where ``x >= max_value``, ``x`` where ``threshold <= x < max_value``,
    ``negative_slope * (x - threshold)`` below ``threshold`` (plain ``max(x, 0)`` by default)."""

    _supports_masking = True  # as Keras 3: the input's mask passes through

    def __init__(self, max_value=None, negative_slope=0.0, threshold=0.0, **kwargs):
        super().__init__(**kwargs)
        self.max_value = _non_negative(self, "max_value", max_value, allow_none=True)
        self.negative_slope = _non_negative(self, "negative_slope", negative_slope)
        self.threshold = _non_negative(self, "threshold", threshold)

    def call(self, inputs):
        if self.negative_slope == 0.0 and self.threshold == 0.0:
            out = nn.relu(inputs)
        else:
            below = (inputs - self.threshold) * self.negative_slope
            out = _core.select(inputs >= self.threshold, inputs, below)
        if self.max_value is not None:
            out = _core.minimum(out, self.max_value)
        return out

    def get_config(self):
        return {
            **super().get_config(),
            "max_value": self.max_value,
            "negative_slope": self.negative_slope,
            "threshold": self.threshold,
        }


class LeakyReLU(Layer):
    """``x`` for ``x >= 0``, ``negative_slope * x`` below (Keras's default slope is 0.3)."""

    _supports_masking = True  # as Keras 3: the input's mask passes through

    def __init__(self, negative_slope=0.3, **kwargs):
        if "alpha" in kwargs:
            # Keras 2's name for the slope, which Keras 3 still accepts with this warning.
            negative_slope = kwargs.pop("alpha")
            warnings.warn(
                "Argument `alpha` is deprecated. Use `negative_slope` instead.", stacklevel=2
            )
        super().__init__(**kwargs)
        self.negative_slope = _non_negative(self, "negative_slope", negative_slope)

    def call(self, inputs):
        return nn.leaky_relu(inputs, alpha=self.negative_slope)

    def get_config(self):
        return {**super().get_config(), "negative_slope": self.negative_slope}


class ELU(Layer):
    """``x`` for ``x > 0``, ``alpha * (exp(x) - 1)`` otherwise."""

    _supports_masking = True  # as Keras 3: the input's mask passes through

    def __init__(self, alpha=1.0, **kwargs):
        super().__init__(**kwargs)
        if isinstance(alpha, bool) or not isinstance(alpha, (int, float)):
            raise ValueError(f"ELU: alpha must be a number. Received: alpha={alpha!r}")
        self.alpha = float(alpha)

    def call(self, inputs):
        if self.alpha == 1.0:
            return nn.elu(inputs)
        # elu(x) stays finite where exp(x) - 1 would overflow, so the branch select discards
        # cannot send inf * 0 = NaN into the gradient.
        return _core.select(inputs > 0, inputs, nn.elu(inputs) * self.alpha)

    def get_config(self):
        return {**super().get_config(), "alpha": self.alpha}


class PReLU(Layer):
    """``max(x, 0) - alpha * max(-x, 0)`` with a learned ``alpha`` per input element (shared
    along ``shared_axes``, e.g. ``[1, 2]`` for one slope per image channel)."""

    _supports_masking = True  # as Keras 3: the input's mask passes through

    def __init__(
        self,
        alpha_initializer="Zeros",
        alpha_regularizer=None,
        alpha_constraint=None,
        shared_axes=None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.alpha_initializer = initializers.get(alpha_initializer)
        self.alpha_regularizer = regularizers.get(alpha_regularizer)
        self.alpha_constraint = alpha_constraint
        if shared_axes is None:
            self.shared_axes = None
        elif isinstance(shared_axes, int):
            self.shared_axes = [shared_axes]
        else:
            self.shared_axes = [int(a) for a in shared_axes]

    def build(self, input_shape):
        param_shape = list(input_shape[1:])
        for axis in self.shared_axes or []:
            if not 1 <= axis < len(input_shape):
                raise ValueError(
                    f"PReLU: shared_axes must name axes 1..{len(input_shape) - 1} of the input. "
                    f"Received: shared_axes={self.shared_axes}"
                )
            param_shape[axis - 1] = 1
        if any(d is None for d in param_shape):
            raise ValueError(
                f"PReLU: every non-shared axis of the input must be known, received input "
                f"shape {tuple(input_shape)}"
            )
        self.alpha = self.add_weight(
            shape=param_shape,
            name="alpha",
            initializer=self.alpha_initializer,
            regularizer=self.alpha_regularizer,
            constraint=self.alpha_constraint,
        )

    def call(self, inputs):
        return nn.relu(inputs) - self.alpha * nn.relu(-inputs)

    def get_config(self):
        return {
            **super().get_config(),
            "alpha_initializer": initializers.serialize(self.alpha_initializer),
            "shared_axes": self.shared_axes,
        }
