"""``ft.experimental``: TensorFlow's ``tf.experimental`` names that ferrotape has (``dlpack``)."""

from . import dlpack

__all__ = ["dlpack"]
