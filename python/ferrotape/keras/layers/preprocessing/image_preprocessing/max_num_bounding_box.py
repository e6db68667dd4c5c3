"""``MaxNumBoundingBoxes`` (Keras 3's
``keras.src.layers.preprocessing.image_preprocessing.max_num_bounding_box``).

>>> import numpy as np, ferrotape as ft
>>> layer = ft.keras.layers.MaxNumBoundingBoxes(max_number=3, bounding_box_format="xyxy")
>>> boxes = {"boxes": np.ones((1, 2, 4), "float32"), "labels": np.array([[7, 8]])}
>>> out = layer({"images": np.zeros((1, 4, 4, 3)), "bounding_boxes": boxes})
>>> out["bounding_boxes"]["labels"].numpy().tolist()
[[7, 8, -1]]
"""

import ferrotape as ft

from ...layer import Layer


class MaxNumBoundingBoxes(Layer):
    """Gives every image exactly ``max_number`` bounding boxes: extra boxes (and their
    labels) are dropped, missing ones are filled with ``fill_value``. Images, labels and
    segmentation masks pass through unchanged, in training and inference alike.

    Args:
        max_number: the number of boxes per image in the output.
        fill_value: the value of the padding boxes and labels; defaults to -1.
        bounding_box_format: the boxes' format (``"xyxy"``, ...); required, as in Keras,
            when the input has ``bounding_boxes`` (the boxes are not converted).
        data_format: ``"channels_last"`` or ``"channels_first"`` (images are not touched).

    Input: a dict with ``"images"`` and ``"bounding_boxes"`` (``{"boxes": [batch, n, 4],
    "labels": [batch, n]}``), optionally ``"labels"`` and ``"segmentation_masks"``; or images
    alone. Output: the same dict with ``[batch, max_number, 4]`` boxes and ``[batch,
    max_number]`` labels.
    """

    def __init__(
        self, max_number, fill_value=-1, bounding_box_format=None, data_format=None, **kwargs
    ):
        super().__init__(**kwargs)
        self.max_number = int(max_number)
        self.fill_value = int(fill_value)
        self.bounding_box_format = bounding_box_format
        self.data_format = data_format or "channels_last"
        self._autocast = False  # images keep their dtype

    def call(self, inputs, training=True):
        del training  # the same in training and inference
        if not isinstance(inputs, dict) or "bounding_boxes" not in inputs:
            return inputs
        if self.bounding_box_format is None:
            raise ValueError(
                "You passed an input with a 'bounding_boxes' key, but you didn't specify a "
                "bounding box format. Pass a `bounding_box_format` argument to your "
                "MaxNumBoundingBoxes layer, e.g. `bounding_box_format='xyxy'`."
            )
        boxes = dict(inputs["bounding_boxes"])
        extra = sorted(set(boxes) - {"boxes", "labels"})
        if extra:
            raise KeyError(
                f"There are unsupported keys in `bounding_boxes`: {extra}. Only `boxes` and "
                "`labels` are supported."
            )
        boxes["boxes"] = self._fitted(ft.convert_to_tensor(boxes["boxes"]))
        boxes["labels"] = self._fitted(ft.convert_to_tensor(boxes["labels"]))
        return {**inputs, "bounding_boxes": boxes}

    def _fitted(self, values):
        """``values`` cut or padded (with ``fill_value``) to ``max_number`` on axis 1."""
        values = values[:, : self.max_number]
        missing = self.max_number - values.shape[1]
        if missing <= 0:
            return values
        paddings = [[0, 0], [0, missing]] + [[0, 0]] * (len(values.shape) - 2)
        return ft.pad(values, paddings, constant_values=ft.cast(self.fill_value, values.dtype))

    def compute_output_shape(self, input_shape):
        if isinstance(input_shape, dict) and "bounding_boxes" in input_shape:
            shapes = dict(input_shape["bounding_boxes"])
            for key in ("boxes", "labels"):
                shape = list(shapes[key])
                shape[1] = self.max_number
                shapes[key] = tuple(shape)
            return {**input_shape, "bounding_boxes": shapes}
        return input_shape

    def get_config(self):
        return {
            **super().get_config(),
            "data_format": self.data_format,
            "bounding_box_format": self.bounding_box_format,
            "max_number": self.max_number,
            "fill_value": self.fill_value,
        }
