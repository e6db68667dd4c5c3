"""``RandomCrop`` (Keras 3's
``keras.src.layers.preprocessing.image_preprocessing.random_crop``).

>>> import ferrotape as ft
>>> ft.keras.layers.RandomCrop(4, 4, seed=1)(ft.ones([2, 6, 8, 3]), training=True).shape
TensorShape([2, 4, 4, 3])
"""

from ..... import _core
from .... import random as keras_random
from ...layer import Layer
from ...layer_helpers import _channels_last
from .resizing import _aspect_crop, _batched, _check_size, _resize


class RandomCrop(Layer):
    """Crops images to ``height x width`` in training (Keras's default for this layer's call):
    at a random offset (one for the whole batch, as Keras draws it) when the images are larger
    than that, otherwise from the start of the centred window of the target's aspect ratio,
    resized (bilinear) to the target size. With ``training=False`` the images pass unchanged."""

    def __init__(self, height, width, seed=None, data_format=None, name=None, **kwargs):
        super().__init__(name=name, **kwargs)
        self.height, self.width = _check_size(self, height, width)
        _channels_last(self, data_format)
        self.seed = seed
        self.seed_generator = keras_random.SeedGenerator(seed)
        self.data_format = "channels_last"

    def call(self, inputs, training=True):
        if not training:
            return inputs  # Keras crops in training only (its default call trains)
        images, single = _batched(self, inputs)
        images = _core.cast(images, self.compute_dtype)
        _, h, w, _ = images.shape
        if h > self.height and w > self.width:
            top = keras_random.randint([], 0, h - self.height + 1, seed=self.seed_generator)
            left = keras_random.randint([], 0, w - self.width + 1, seed=self.seed_generator)
            # The window's rows and columns as gathers from tensor offsets, not a slice at
            # Python ints: inside ft.function the offsets are drawn again on every call.
            rows = top + _core.range(self.height)
            columns = left + _core.range(self.width)
            out = _core.gather(_core.gather(images, rows, axis=1), columns, axis=2)
        else:
            # Keras starts where the centred window of the target's aspect ratio would, but
            # cuts the target's size from there (less where the image ends), then resizes.
            top, left, _, _ = _aspect_crop(h, w, self.height, self.width)
            out = images[:, top : top + self.height, left : left + self.width]
            out = _resize(
                out, self.height, self.width, "bilinear", self.compute_dtype, "RandomCrop"
            )
        return out[0] if single else out

    def get_config(self):
        return {
            **super().get_config(),
            "data_format": self.data_format,
            "height": self.height,
            "width": self.width,
            "seed": self.seed,
        }
