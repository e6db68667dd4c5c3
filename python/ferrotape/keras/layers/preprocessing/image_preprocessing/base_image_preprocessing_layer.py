"""``BaseImagePreprocessingLayer`` (Keras 3's
``keras.src.layers.preprocessing.image_preprocessing.base_image_preprocessing_layer``): what
the augmentation layers share. A subclass says how to draw one call's random parameters
(``get_random_transformation``) and how to apply them to a batch of NHWC images
(``transform_images``) and, for the layers that mix images, to their labels; the base
handles single images, dicts of images and labels, ``channels_first``, the cast to the
layer's dtype and ``training=False`` (which only casts).

>>> import ferrotape as ft
>>> ft.keras.layers.RandomRotation(0.1)(ft.ones([4, 4, 3]), training=False).shape
TensorShape([4, 4, 3])
"""

import numbers

from ..... import _core
from .....polymorphic_function import host_computed
from .... import random as keras_random
from ...layer import Layer
from .affine import FILL_MODES, INTERPOLATIONS, affine_transform
from .resizing import _batched


def _is_number(value):
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def factor_pair(layer, factor, name, low, high, low_open=False, lower_bound=None):
    """Keras's ``factor`` rules: a number ``f`` gives ``(-|f|, |f|)`` (the lower end raised to
    ``lower_bound`` if given), a pair is sorted; every number must lie in ``[low, high]``
    (``(low, high]`` with ``low_open``)."""

    def bad():
        interval = f"{'(' if low_open else '['}{low}, {high}]"
        return ValueError(
            f"{type(layer).__name__}: the `{name}` argument should be a number (or a list of "
            f"two numbers) in the range {interval}. Received: {name}={factor!r}"
        )

    def inside(v):
        return _is_number(v) and (low < v if low_open else low <= v) and v <= high

    if isinstance(factor, (tuple, list)):
        if len(factor) != 2 or not all(inside(v) for v in factor):
            raise bad()
        lower, upper = sorted(float(v) for v in factor)
        return lower, upper
    if not inside(factor):
        raise bad()
    f = abs(float(factor))
    return (-f if lower_bound is None else max(-f, lower_bound)), f


def base_factor(layer, factor, low=-1.0, high=1.0, name="factor"):
    """Keras's base-layer ``factor`` rule: a pair must overlap ``[low, high]`` (it is sorted,
    not clipped); a number ``f`` in ``[low, high]`` gives ``(max(-|f|, low), |f|)``."""
    pair = isinstance(factor, (tuple, list)) and len(factor) == 2
    if pair and all(_is_number(v) for v in factor) and factor[0] <= high and factor[1] >= low:
        lower, upper = sorted(float(v) for v in factor)
        return lower, upper
    return factor_pair(layer, factor, name, low, high, lower_bound=low)


def value_range_pair(layer, value_range):
    """``value_range`` as a sorted pair of floats (Keras sorts it too)."""
    if not isinstance(value_range, (tuple, list)) or len(value_range) != 2:
        raise ValueError(
            f"{type(layer).__name__}: the `value_range` argument should be a list of two "
            f"numbers. Received: value_range={value_range!r}"
        )
    if not all(_is_number(v) for v in value_range):
        raise ValueError(
            f"{type(layer).__name__}: value_range must hold numbers. "
            f"Received: value_range={value_range!r}"
        )
    low, high = sorted(float(v) for v in value_range)
    return low, high


def transform_value_range(images, original, target):
    """Maps ``images`` linearly from the range ``original`` to ``target`` (Keras's
    ``_transform_value_range``; the identity when they are equal)."""
    if tuple(original) == tuple(target):
        return images
    unit = (images - original[0]) / (original[1] - original[0])
    return unit * (target[1] - target[0]) + target[0]


def check_sampling(layer, fill_mode, interpolation):
    """Keras's checks of ``fill_mode`` and ``interpolation`` (it raises NotImplementedError)."""
    if fill_mode is not None and fill_mode not in FILL_MODES:
        raise NotImplementedError(
            f"{type(layer).__name__}: unknown `fill_mode` {fill_mode!r}. Expected one of "
            f"{FILL_MODES}."
        )
    if interpolation not in INTERPOLATIONS:
        raise NotImplementedError(
            f"{type(layer).__name__}: unknown `interpolation` {interpolation!r}. Expected one "
            f"of {INTERPOLATIONS}."
        )


class BaseImagePreprocessingLayer(Layer):
    """The base of the image augmentation layers: images are ``[height, width, channels]`` or
    a batch of them (channels first with ``data_format="channels_first"``), or a dict of
    ``"images"`` and ``"labels"`` (returned as a dict, the labels mixed by the layers that
    mix images); the images come back in the layer's float dtype. Like Keras's, the call
    trains unless told ``training=False``, which leaves the images as they are (cast to that
    dtype). A subclass defines ``get_random_transformation(images)`` (the random draws for a
    ``[batch, height, width, channels]`` batch), ``transform_images(images,
    transformation)`` and, if it changes labels, ``transform_labels``.

    Args:
        seed: An int (reproducible draws) or None.
        data_format: ``"channels_last"`` (the default) or ``"channels_first"``.
        **kwargs: The base ``Layer``'s arguments (``name``, ``dtype``, ...).
    """

    _TRAINING_ONLY = True  # False: the layer transforms with training=False too
    # True for a layer whose transformation reads its draws into Python (which augmentation to
    # apply, a kernel size): inside ft.function it is then a host computation of the trace,
    # run again on every replay, rather than a trace refused for reading a traced value.
    _COMPUTED_ON_HOST_IN_TRACES = False

    def __init__(self, seed=None, data_format=None, **kwargs):
        super().__init__(**kwargs)
        if data_format not in (None, "channels_last", "channels_first"):
            raise ValueError(
                f"{type(self).__name__}: data_format must be 'channels_last' or "
                f"'channels_first'. Received: data_format={data_format!r}"
            )
        self.data_format = data_format or "channels_last"
        self.seed = seed
        self.generator = keras_random.SeedGenerator(seed)
        self._autocast = False  # integer pixels are welcome; the call casts

    def get_random_transformation(self, images):
        return None

    def transform_images(self, images, transformation):
        raise NotImplementedError(f"{type(self).__name__} must define transform_images")

    def transform_labels(self, labels, transformation):
        """The labels of the transformed images (unchanged unless the layer mixes images)."""
        return labels

    def call(self, inputs, training=True):
        data = inputs if isinstance(inputs, dict) else {"images": inputs}
        unknown = sorted(set(data) - {"images", "labels"})
        if unknown or "images" not in data:
            raise ValueError(
                f"{type(self).__name__}: a dict input holds 'images' and optionally 'labels' "
                f"(bounding boxes and segmentation masks are not supported). Received keys: "
                f"{sorted(data)}"
            )
        images, single = _batched(self, data["images"])
        images = _core.cast(images, self.compute_dtype)
        labels = data.get("labels")
        if labels is not None:
            labels = _core.convert_to_tensor(labels)
            labels = _core.expand_dims(labels, 0) if single else labels
        if training or not self._TRAINING_ONLY:
            if self._COMPUTED_ON_HOST_IN_TRACES and _core.is_tracing():
                tensors = [images] if labels is None else [images, labels]
                images, *rest = host_computed(
                    lambda *values: [t for t in self._transformed(*values) if t is not None],
                    tensors,
                )
                labels = rest[0] if rest else None
            else:
                images, labels = self._transformed(images, labels)
        if not isinstance(inputs, dict):
            return images[0] if single else images
        out = {**inputs, "images": images[0] if single else images}
        if labels is not None:
            out["labels"] = labels[0] if single else labels
        return out

    def _transformed(self, images, labels=None):
        """One random transformation of a batch (and its labels, if any)."""
        first = self.data_format == "channels_first"
        if first:
            images = _core.transpose(images, [0, 2, 3, 1])
        transformation = self.get_random_transformation(images)
        images = self.transform_images(images, transformation)
        if first:
            images = _core.transpose(images, [0, 3, 1, 2])
        if labels is not None:
            labels = self.transform_labels(labels, transformation)
        return images, labels

    def uniform(self, shape, low=0.0, high=1.0, dtype="float32"):
        """Draws uniform in ``[low, high)`` from the layer's seed generator."""
        return keras_random.uniform(shape, low, high, dtype=dtype, seed=self.generator)

    def happens(self, n, probability):
        """``[n, 1, 1, 1]`` bools, each true with ``probability`` (a number or ``[n]``)."""
        return _core.reshape(self.uniform([n]) < probability, [n, 1, 1, 1])

    def get_config(self):
        return {**super().get_config(), "seed": self.seed, "data_format": self.data_format}


class AffineLayer(BaseImagePreprocessingLayer):
    """The base of the geometric layers (rotation, zoom, translation, shear): each draws one
    transform per image and samples it with ``affine_transform``.

    Args:
        fill_mode: How points outside the image are filled: ``"reflect"``, ``"wrap"``,
            ``"constant"`` (with ``fill_value``) or ``"nearest"``.
        interpolation: ``"bilinear"`` or ``"nearest"``.
        fill_value: The value outside the image with ``fill_mode="constant"``.
        seed, data_format, **kwargs: As ``BaseImagePreprocessingLayer``'s.
    """

    def __init__(
        self,
        fill_mode="reflect",
        interpolation="bilinear",
        seed=None,
        fill_value=0.0,
        data_format=None,
        **kwargs,
    ):
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        check_sampling(self, fill_mode, interpolation)
        if not _is_number(fill_value):
            raise ValueError(
                f"{type(self).__name__}: fill_value must be a number. "
                f"Received: fill_value={fill_value!r}"
            )
        self.fill_mode = fill_mode
        self.interpolation = interpolation
        self.fill_value = float(fill_value)

    def transform_images(self, images, transformation):
        return affine_transform(
            images, transformation, self.interpolation, self.fill_mode, self.fill_value
        )

    def get_config(self):
        return {
            **super().get_config(),
            "fill_mode": self.fill_mode,
            "interpolation": self.interpolation,
            "fill_value": self.fill_value,
        }
