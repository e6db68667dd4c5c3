"""``ft.keras.config``: Keras 3's global settings in one namespace: the default float type,
the fuzz factor, the image layout (kept in ``backend_config.py``), the dtype policy
(``mixed_precision``) and traceback filtering (shared with ``ft.debugging``: one switch).

>>> import ferrotape as ft
>>> ft.keras.config.floatx(), ft.keras.config.backend()
('float32', 'tensorflow')
>>> ft.keras.config.is_traceback_filtering_enabled()
True
"""

from .. import _public_api
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


def enable_traceback_filtering():
    """Filters tracebacks (the default): an error from a layer, a model's ``fit`` or an op shows
    the caller's frames and the line that raised, not every library frame in between.

    >>> import ferrotape as ft
    >>> ft.keras.config.enable_traceback_filtering()
    """
    _public_api.set_traceback_filtering(True)


def disable_traceback_filtering():
    """Shows every frame of tracebacks, and layer errors without the list of call arguments.

    >>> import ferrotape as ft
    >>> ft.keras.config.disable_traceback_filtering()
    >>> ft.keras.config.is_traceback_filtering_enabled()
    False
    >>> ft.keras.config.enable_traceback_filtering()
    """
    _public_api.set_traceback_filtering(False)


def is_traceback_filtering_enabled():
    """Whether tracebacks are filtered (``True`` at start).

    Returns:
        A bool.
    """
    return _public_api.is_traceback_filtering_enabled()


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
