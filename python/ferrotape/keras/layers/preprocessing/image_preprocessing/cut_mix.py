"""``CutMix`` (Keras 3's ``keras.src.layers.preprocessing.image_preprocessing.cut_mix``), and
the random boxes it shares with ``RandomErasing``.

>>> import ferrotape as ft
>>> data = {"images": ft.ones([4, 8, 8, 3]), "labels": ft.one_hot([0, 1, 2, 0], 3)}
>>> mixed = ft.keras.layers.CutMix(seed=1)(data)
>>> mixed["images"].shape, mixed["labels"].shape
(TensorShape([4, 8, 8, 3]), TensorShape([4, 3]))
"""

import numpy as np

from ..... import _core
from .... import random as keras_random
from .base_image_preprocessing_layer import BaseImagePreprocessingLayer, base_factor


def random_boxes(layer, h, w, ratio_x, ratio_y):
    """Keras's boxes: per image a box ``ratio * size`` long on each axis (``ratio``: ``[n]``),
    its start uniform in ``[0, size - length)``. Returns the ``[n, h, w, 1]`` mask of the pixels
    whose coordinates fall in ``[start, start + length)`` on both axes, and the box areas as
    fractions of the image."""
    n = ratio_x.shape[0]

    def bounds(ratio, size):
        length = ratio * float(size)
        start = layer.uniform([n], dtype=ratio.dtype) * (float(size) - length)
        return _core.reshape(start, [-1, 1, 1, 1]), _core.reshape(start + length, [-1, 1, 1, 1])

    x0, x1 = bounds(ratio_x, w)
    y0, y1 = bounds(ratio_y, h)
    xs = _core.constant(np.arange(w).reshape(1, 1, w, 1), dtype=ratio_x.dtype)
    ys = _core.constant(np.arange(h).reshape(1, h, 1, 1), dtype=ratio_x.dtype)
    mask = (xs >= x0) & (xs < x1) & (ys >= y0) & (ys < y1)
    return mask, _core.reshape((x1 - x0) * (y1 - y0), [-1]) / float(w * h)


class CutMix(BaseImagePreprocessingLayer):
    """In training, pastes into each image a box cut from another image of the batch (a
    random permutation pairs them). The box covers a fraction ``1 - w`` of the image, ``w``
    drawn per image from Beta(``a``, ``a``) with ``a`` drawn once per call from ``factor``'s
    range; its position is uniform. Given a dict ``{"images": ..., "labels": ...}``, each
    label becomes ``w' * own + (1 - w') * partner's``, ``w'`` the uncovered fraction.

    Args:
        factor: A number ``f`` in ``[0, 1]`` (``a`` in ``[0, f]``; default 1.0) or a pair.
        seed: An int (reproducible draws) or None.
        data_format: ``"channels_last"`` (the default) or ``"channels_first"``.

    Input shape: ``[batch, height, width, channels]`` (a single image is left as it is), or a
    dict of those images and ``[batch, ...]`` labels. Output: the same structure and shapes.
    """

    _COMPUTED_ON_HOST_IN_TRACES = True  # it reads its draws into Python (see the base)

    def __init__(self, factor=1.0, seed=None, data_format=None, **kwargs):
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        self.factor = base_factor(self, factor, 0.0, 1.0)

    def get_random_transformation(self, images):
        n, h, w, _ = images.shape
        alpha = float(self.uniform([], *self.factor).numpy()) + 1e-6
        weight = keras_random.beta([n], alpha, alpha, seed=self.generator)
        ratio = _core.sqrt(1.0 - weight)
        mask, area = random_boxes(self, h, w, ratio, ratio)
        order = keras_random.shuffle(_core.range(n), seed=self.generator)
        return order, mask, 1.0 - area

    def transform_images(self, images, transformation):
        order, mask, _ = transformation
        return _core.select(mask, _core.gather(images, order), images)

    def transform_labels(self, labels, transformation):
        order, _, weight = transformation
        labels = _core.cast(labels, "float32") if labels.dtype.is_integer else labels
        weight = _core.reshape(_core.cast(weight, labels.dtype), [-1] + [1] * (labels.ndim - 1))
        return weight * labels + (1.0 - weight) * _core.gather(labels, order)

    def call(self, inputs, training=True):
        images = inputs["images"] if isinstance(inputs, dict) else inputs
        if len(getattr(images, "shape", ())) == 3:
            training = False  # Keras leaves a single image as it is (it has no partner)
        return super().call(inputs, training=training)

    def get_config(self):
        return {**super().get_config(), "factor": self.factor}
