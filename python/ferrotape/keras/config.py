"""``ft.keras.config``: Keras 3's global settings in one namespace: the default float type,
the fuzz factor, the image layout (kept in ``backend_config.py``), the dtype policy
(``mixed_precision``) and traceback filtering (shared with ``ft.debugging``: one switch).

>>> import ferrotape as ft
>>> ft.keras.config.floatx(), ft.keras.config.backend()
('float32', 'tensorflow')
>>> ft.keras.config.is_traceback_filtering_enabled()
True
"""

# One switch for both namespaces, as Keras on TensorFlow reads TensorFlow's.
from .._debugging_types import (
    disable_traceback_filtering,
    enable_traceback_filtering,
    is_traceback_filtering_enabled,
)
from .backend_config import (
    backend,
    epsilon,
    floatx,
    image_data_format,
    set_epsilon,
    set_floatx,
    set_image_data_format,
)
from .mixed_precision import dtype_policy, set_dtype_policy


def set_backend(backend):
    """Keras 3 switches between backends; ferrotape is the one backend here and stands in for
    TensorFlow, so only ``"tensorflow"`` is accepted (and changes nothing).

    Args:
        backend: The backend's name.

    Raises:
        ValueError: For any other backend.
    """
    if backend != "tensorflow":
        raise ValueError(
            "set_backend: ferrotape runs Keras as its 'tensorflow' backend; there is no other. "
            f"Received: backend={backend!r}"
        )


__all__ = [
    "backend",
    "disable_traceback_filtering",
    "dtype_policy",
    "enable_traceback_filtering",
    "epsilon",
    "floatx",
    "image_data_format",
    "is_traceback_filtering_enabled",
    "set_backend",
    "set_dtype_policy",
    "set_epsilon",
    "set_floatx",
    "set_image_data_format",
]
