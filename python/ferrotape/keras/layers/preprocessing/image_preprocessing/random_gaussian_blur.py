"""``RandomGaussianBlur`` (Keras 3's
``keras.src.layers.preprocessing.image_preprocessing.random_gaussian_blur``).

>>> import ferrotape as ft
>>> ft.keras.layers.RandomGaussianBlur(seed=1)(ft.ones([2, 4, 4, 3])).shape
TensorShape([2, 4, 4, 3])
"""

import numpy as np

from ..... import _core
from .base_image_preprocessing_layer import BaseImagePreprocessingLayer, _is_number, base_factor
from .random_sharpness import smooth


def gaussian_kernel(size, sigma):
    """Keras's ``gaussian_blur`` kernel: ``outer(g(size[1], sigma[1]), g(size[0], sigma[0]))``
    (rows use the second size and sigma), each 1-D Gaussian normalised to sum 1."""

    def one(n, s):
        x = np.arange(n, dtype=np.float32) - (n - 1) / 2
        g = np.exp(-0.5 * (x / np.float32(s)) ** 2)
        return g / g.sum()

    kernel = np.tensordot(one(size[1], sigma[1]), one(size[0], sigma[0]), axes=0)
    # Keras reshapes (not transposes) this [rows, columns] grid to (size[0], size[1]); the
    # two agree for square kernels.
    return kernel.reshape(size[0], size[1])


class RandomGaussianBlur(BaseImagePreprocessingLayer):
    """In training, blurs images with a Gaussian kernel: for each image a probability ``p``
    is drawn from ``factor``'s range and the image is blurred with probability ``p``; the two
    standard deviations (columns, rows) are drawn once per call from ``sigma``'s range (plus
    1e-6). The result is clipped to ``value_range``.

    Args:
        factor: A number ``f`` in ``[0, 1]`` (``p`` in ``[0, f]``; default 1.0) or a pair.
        kernel_size: An odd int, or a pair of odd ints ``(columns, rows)`` (default 3).
        sigma: A number ``s`` in ``[0, 1]`` (the range ``[0, s]``; default 1.0) or a pair.
        value_range: The images' ``(low, high)`` (default ``(0, 255)``).
        data_format: ``"channels_last"`` (the default) or ``"channels_first"``.
        seed: An int (reproducible draws) or None.

    Input shape: ``[batch, height, width, channels]`` or a single image. Output shape: the
    same.
    """

    _COMPUTED_ON_HOST_IN_TRACES = True  # it reads its draws into Python (see the base)

    def __init__(
        self,
        factor=1.0,
        kernel_size=3,
        sigma=1.0,
        value_range=(0, 255),
        data_format=None,
        seed=None,
        **kwargs,
    ):
        super().__init__(seed=seed, data_format=data_format, **kwargs)
        self.factor = base_factor(self, factor, 0.0, 1.0)
        self.kernel_size = _kernel_size(kernel_size)
        self.sigma = base_factor(self, sigma, 0.0, 1.0, name="sigma")
        self.value_range = tuple(value_range)

    def get_random_transformation(self, images):
        n = images.shape[0]
        apply = self.happens(n, self.uniform([n], *self.factor))
        sigma = self.uniform([2], *self.sigma, dtype=self.compute_dtype) + 1e-6
        return apply, sigma.numpy()  # the kernel is built from the two numbers

    def transform_images(self, images, transformation):
        apply, sigma = transformation
        blurred = smooth(images, gaussian_kernel(self.kernel_size, sigma))
        images = _core.select(apply, blurred, images)
        return _core.clip_by_value(images, *self.value_range)

    def get_config(self):
        return {
            **super().get_config(),
            "factor": self.factor,
            "kernel_size": self.kernel_size,
            "sigma": self.sigma,
            "value_range": self.value_range,
        }


def _kernel_size(size):
    pair = size if isinstance(size, (tuple, list)) else (size, size)
    if len(pair) != 2 or not all(_is_number(v) and int(v) == v and v % 2 == 1 for v in pair):
        raise ValueError(f"kernel_size must be an odd number. Received: kernel_size={size!r}")
    return int(pair[0]), int(pair[1])
