"""Keras's global settings: the default float type, the fuzz factor and the image layout
(Keras 3 keeps them in ``keras.src.backend.config``). ``ft.keras.backend`` re-exports them; the
legacy backend functions read them from here.

>>> floatx(), epsilon(), image_data_format()
('float32', 1e-07, 'channels_last')
"""

_FLOAT_TYPES = ("float16", "bfloat16", "float32", "float64")
_settings = {"floatx": "float32", "epsilon": 1e-7}


def backend():
    """The name of the backend Keras computes with: ferrotape stands in for TensorFlow."""
    return "tensorflow"


def floatx():
    """The default float type of new layers' weights and of ``Input`` ("float32")."""
    return _settings["floatx"]


def set_floatx(value):
    """Sets the default float type ("float16", "bfloat16", "float32" or "float64")."""
    if value not in _FLOAT_TYPES:
        raise ValueError(
            f"set_floatx: unknown floatx type {value!r}; expected one of {_FLOAT_TYPES}"
        )
    _settings["floatx"] = str(value)


def epsilon():
    """The fuzz factor added to denominators (1e-7)."""
    return _settings["epsilon"]


def set_epsilon(value):
    _settings["epsilon"] = float(value)


def image_data_format():
    """ferrotape's images are ``channels_last`` (NHWC)."""
    return "channels_last"


def set_image_data_format(data_format):
    if data_format != "channels_last":
        raise ValueError(
            "set_image_data_format: ferrotape supports only 'channels_last' (NHWC). "
            f"Received: {data_format!r}"
        )
