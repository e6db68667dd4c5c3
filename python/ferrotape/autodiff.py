"""``ft.autodiff``: TensorFlow's ``tf.autodiff`` namespace, reverse mode (``GradientTape``) and
forward mode (``ForwardAccumulator``)."""

from .forwardprop import ForwardAccumulator
from .tape import GradientTape

__all__ = ["ForwardAccumulator", "GradientTape"]
