"""Where ``Layer``, ``Model``, ``Input`` lived before the Keras 3 layout; kept so
``ft.keras.engine.X`` still works. New code imports from ``layers`` and ``models``.
"""

from .layers.core.input_layer import Input, InputLayer
from .layers.keras_tensor import KerasTensor
from .layers.layer import Layer
from .layers.layer_utils import DTypePolicy, clear_session
from .models import Functional, Model, Sequential

__all__ = [
    "DTypePolicy",
    "Functional",
    "Input",
    "InputLayer",
    "KerasTensor",
    "Layer",
    "Model",
    "Sequential",
    "clear_session",
]
