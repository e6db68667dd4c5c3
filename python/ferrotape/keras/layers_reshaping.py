"""Former home of the 2-D reshaping layers, now ``layers/reshaping/spatial2d.py``; kept so
old imports still work."""

from .layers.reshaping.spatial2d import Cropping2D, UpSampling2D, ZeroPadding2D

__all__ = ["Cropping2D", "UpSampling2D", "ZeroPadding2D"]
