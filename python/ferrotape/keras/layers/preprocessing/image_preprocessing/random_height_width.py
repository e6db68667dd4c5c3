"""``RandomHeight`` and ``RandomWidth``: TF-Keras's layers, which Keras 3 keeps (deprecated)
in ``keras.src.legacy.layers`` and ``tf.keras.layers`` still exports.

>>> import ferrotape as ft
>>> ft.keras.layers.RandomHeight((0.5, 0.5))(ft.ones([2, 4, 6, 3])).shape
TensorShape([2, 6, 6, 3])
"""

from ..... import _core
from .....image import resizing
from .... import random as keras_random
from ...layer import Layer
from .resizing import _batched


class _RandomSize(Layer):
    """Resizes one axis of the images (``_AXIS``: 1 rows, 2 columns) by a factor drawn once
    per call (for the whole batch) in ``[1 + lower, 1 + upper]``; the new size is the old one
    times it, truncated, as TF-Keras computes it in float32."""

    _AXIS = 1

    def __init__(self, factor, interpolation="bilinear", seed=None, **kwargs):
        super().__init__(**kwargs)
        name = type(self).__name__
        if isinstance(factor, (tuple, list)) and len(factor) == 2:
            lower, upper = factor
        elif isinstance(factor, (int, float)) and not isinstance(factor, bool):
            lower, upper = -factor, factor
        else:
            raise ValueError(f"{name}: factor must be a number or a pair. Received: {factor!r}")
        if upper < lower:
            raise ValueError(
                "`factor` argument cannot have an upper bound lesser than the lower bound. "
                f"Received: factor={factor}"
            )
        if lower < -1.0 or upper < -1.0:
            raise ValueError(
                f"`factor` argument must have values larger than -1. Received: factor={factor}"
            )
        if interpolation not in ("bilinear", "nearest", "bicubic"):
            raise ValueError(
                f"{name}: interpolation must be 'bilinear', 'nearest' or 'bicubic'. "
                f"Received: interpolation={interpolation!r}"
            )
        self.factor = factor
        self.lower, self.upper = float(lower), float(upper)
        self.interpolation = interpolation
        self.seed = seed
        self.seed_generator = keras_random.SeedGenerator(seed)
        self._autocast = False  # integer pixels are welcome; the call casts

    def call(self, inputs, training=True):
        images, single = _batched(self, inputs)
        images = _core.cast(images, self.compute_dtype)
        if training:
            scale = keras_random.uniform(
                [], 1.0 + self.lower, 1.0 + self.upper, seed=self.seed_generator
            )
            size = list(images.shape[1:3])
            # The new size is data-dependent (as in TF-Keras), so it is read into Python.
            size[self._AXIS - 1] = int((scale * float(size[self._AXIS - 1])).numpy())
            images = _core.cast(resizing.resize(images, size, self.interpolation), images.dtype)
        return images[0] if single else images

    def get_config(self):
        return {
            **super().get_config(),
            "factor": self.factor,
            "interpolation": self.interpolation,
            "seed": self.seed,
        }


class RandomHeight(_RandomSize):
    """In training, resizes the images to a random height: ``int(h * f)`` rows, ``f`` drawn
    once per call in ``[1 + lower, 1 + upper]`` (``factor=0.2``: ``[0.8, 1.2]``); the width
    is kept. With ``training=False`` the images pass unchanged (cast to the layer's dtype).

    Args:
        factor: A number ``f`` (the range ``[-f, f]``) or a pair ``(lower, upper)``, each
            at least -1.
        interpolation: ``"bilinear"`` (the default), ``"nearest"`` or ``"bicubic"``.
        seed: An int (reproducible draws) or None.

    Input shape: ``[batch, height, width, channels]`` or ``[height, width, channels]``.
    Output shape: the same but for the height.
    """

    _AXIS = 1


class RandomWidth(_RandomSize):
    """In training, resizes the images to a random width: ``int(w * f)`` columns, ``f`` drawn
    once per call in ``[1 + lower, 1 + upper]``; the height is kept. With ``training=False``
    the images pass unchanged (cast to the layer's dtype).

    Args:
        factor: A number ``f`` (the range ``[-f, f]``) or a pair ``(lower, upper)``, each
            at least -1.
        interpolation: ``"bilinear"`` (the default), ``"nearest"`` or ``"bicubic"``.
        seed: An int (reproducible draws) or None.

    Input shape: ``[batch, height, width, channels]`` or ``[height, width, channels]``.
    Output shape: the same but for the width.
    """

    _AXIS = 2
