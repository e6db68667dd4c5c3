"""``CenterCrop`` (Keras 3's
``keras.src.layers.preprocessing.image_preprocessing.center_crop``).

>>> import ferrotape as ft
>>> ft.keras.layers.CenterCrop(2, 3)(ft.ones([4, 6, 8, 3])).shape
TensorShape([4, 2, 3, 3])
"""

from ...layer import Layer
from ...layer_helpers import _channels_last, _is_int


class CenterCrop(Layer):
    """The central ``height x width`` window of each image (batched NHWC or a single HWC
    image): rows from ``(h - height) // 2``, columns from ``(w - width) // 2``. Keras resizes
    images smaller than the target first; ferrotape raises a ValueError for them instead."""

    def __init__(self, height, width, data_format=None, **kwargs):
        super().__init__(**kwargs)
        _channels_last(self, data_format)
        for what, value in (("height", height), ("width", width)):
            if not _is_int(value) or value < 1:
                raise ValueError(
                    f"CenterCrop: {what} must be a positive int. Received: {what}={value!r}"
                )
        self.height, self.width = int(height), int(width)
        self.data_format = "channels_last"

    def call(self, inputs):
        rank = len(inputs.shape)
        if rank not in (3, 4):
            raise ValueError(
                f"CenterCrop: expected an image (rank 3) or a batch of images (rank 4), "
                f"received shape {tuple(inputs.shape)}"
            )
        h, w = inputs.shape[rank - 3], inputs.shape[rank - 2]
        if h < self.height or w < self.width:
            raise ValueError(
                f"CenterCrop: the images ({h} x {w}) are smaller than the crop "
                f"({self.height} x {self.width}); resizing them first is not supported"
            )
        top, left = (h - self.height) // 2, (w - self.width) // 2
        rows, cols = slice(top, top + self.height), slice(left, left + self.width)
        return inputs[rows, cols] if rank == 3 else inputs[:, rows, cols]

    def get_config(self):
        return {
            **super().get_config(),
            "height": self.height,
            "width": self.width,
            "data_format": self.data_format,
        }
