"""``ft.keras.utils``, laid out as Keras 3's ``keras.src.utils``: ``numerical_utils``
(``to_categorical``, ``normalize``), ``progbar``, ``rng_utils``, ``summary_utils``; the
serialization registry is re-exported from ``keras.object_registration``.

>>> to_categorical([0, 2, 1], num_classes=3)
array([[1., 0., 0.],
       [0., 0., 1.],
       [0., 1., 0.]], dtype=float32)
>>> format_logs({"loss": 0.123456, "accuracy": 0.9, "lr": 1e-4})
'loss: 0.1235 - accuracy: 0.9000 - lr: 1.0000e-04'
"""

from ..object_registration import (
    CustomObjectScope,
    custom_object_scope,
    deserialize_keras_object,
    get_custom_objects,
    get_registered_name,
    get_registered_object,
    register_keras_serializable,
    serialize_keras_object,
)
from .numerical_utils import normalize, to_categorical
from .progbar import ProgressBar, format_logs
from .rng_utils import set_random_seed

__all__ = [
    "CustomObjectScope",
    "custom_object_scope",
    "deserialize_keras_object",
    "get_custom_objects",
    "get_registered_name",
    "get_registered_object",
    "register_keras_serializable",
    "serialize_keras_object",
    "ProgressBar",
    "format_logs",
    "normalize",
    "set_random_seed",
    "to_categorical",
]
