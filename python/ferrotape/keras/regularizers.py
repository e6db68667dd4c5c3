"""``ft.keras.regularizers``: weight penalties added to the training loss (Keras 3 formulas).

A regularizer is called on a weight and returns a scalar tensor; ``Layer.add_weight(...,
regularizer=...)`` makes the layer's ``losses`` include it.

>>> import ferrotape as ft
>>> float(ft.keras.regularizers.L2(0.5)(ft.constant([1.0, -2.0])))
2.5
"""

import math

from .. import _core


def _penalty_factor(value, name, who):
    """A non-negative, finite float (Keras's check for l1/l2)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(
            f"{who}: invalid value for argument {name}: expected a non-negative float, "
            f"received: {name}={value!r}"
        )
    if value < 0 or math.isinf(value) or math.isnan(value):
        raise ValueError(
            f"{who}: invalid value for argument {name}: expected a non-negative float, "
            f"received: {name}={value}"
        )
    return float(value)


class Regularizer:
    """Base class: ``__call__(x)`` returns the penalty for weight ``x`` (zero here)."""

    def __call__(self, x):
        return _core.constant(0.0)

    def get_config(self):
        return {}

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_config().items())
        return f"{type(self).__name__}({args})"


class L1(Regularizer):
    """``l1 * reduce_sum(abs(x))``."""

    def __init__(self, l1=0.01):
        self.l1 = _penalty_factor(0.01 if l1 is None else l1, "l1", "L1")

    def __call__(self, x):
        return self.l1 * _core.reduce_sum(_core.abs(x))

    def get_config(self):
        return {"l1": self.l1}


class L2(Regularizer):
    """``l2 * reduce_sum(square(x))`` (no factor 1/2, as Keras)."""

    def __init__(self, l2=0.01):
        self.l2 = _penalty_factor(0.01 if l2 is None else l2, "l2", "L2")

    def __call__(self, x):
        return self.l2 * _core.reduce_sum(_core.square(x))

    def get_config(self):
        return {"l2": self.l2}


class L1L2(Regularizer):
    """``l1 * reduce_sum(abs(x)) + l2 * reduce_sum(square(x))``."""

    def __init__(self, l1=0.0, l2=0.0):
        self.l1 = _penalty_factor(0.0 if l1 is None else l1, "l1", "L1L2")
        self.l2 = _penalty_factor(0.0 if l2 is None else l2, "l2", "L1L2")

    def __call__(self, x):
        penalty = _core.constant(0.0, dtype=x.dtype)
        if self.l1:
            penalty = penalty + self.l1 * _core.reduce_sum(_core.abs(x))
        if self.l2:
            penalty = penalty + self.l2 * _core.reduce_sum(_core.square(x))
        return penalty

    def get_config(self):
        return {"l1": self.l1, "l2": self.l2}


# Keras's lower-case aliases.
l1 = L1
l2 = L2
l1_l2 = L1L2

_BY_NAME = {
    "Regularizer": Regularizer,
    "L1": L1,
    "L2": L2,
    "L1L2": L1L2,
    "l1": L1,
    "l2": L2,
    "l1_l2": L1L2,
}


def serialize(regularizer):
    """``{"class_name": ..., "config": ...}`` for a regularizer instance."""
    if not isinstance(regularizer, Regularizer):
        raise ValueError(
            f"regularizers.serialize: expected a Regularizer, received {regularizer!r}"
        )
    return {"class_name": type(regularizer).__name__, "config": regularizer.get_config()}


def deserialize(config):
    """The regularizer described by a ``serialize`` dict or a name."""
    if isinstance(config, str):
        return get(config)
    if not isinstance(config, dict) or config.get("class_name") not in _BY_NAME:
        raise ValueError(f"regularizers.deserialize: cannot interpret {config!r}")
    return _BY_NAME[config["class_name"]].from_config(config.get("config") or {})


def get(identifier):
    """A regularizer from a name ("l1", "l2", "l1_l2", "L2"), a ``serialize`` dict, an instance
    or a callable ``fn(weight) -> scalar``; ``None`` gives ``None``."""
    if identifier is None:
        return None
    if isinstance(identifier, dict):
        return deserialize(identifier)
    if isinstance(identifier, str):
        cls = _BY_NAME.get(identifier)
        if cls is None:
            raise ValueError(f"Could not interpret regularizer identifier: {identifier!r}")
        return cls()
    if callable(identifier):
        return identifier
    raise ValueError(f"Could not interpret regularizer identifier: {identifier!r}")


__all__ = [
    "L1",
    "L1L2",
    "L2",
    "Regularizer",
    "deserialize",
    "get",
    "l1",
    "l1_l2",
    "l2",
    "serialize",
]
