"""What the colour augmentation layers share: the grayscale of RGB images, and RGB <-> HSV
for images whose values lie in any range (hue and saturation do not depend on the scale)."""

from ..... import _core
from .....image import color


def grayscale(images):
    """Keras's ``rgb_to_grayscale``: ``0.2989 R + 0.5870 G + 0.1140 B`` as one channel; a
    single-channel image is already grey."""
    channels = images.shape[-1]
    if channels == 1:
        return images
    if channels != 3:
        raise ValueError(
            "Invalid channel size: expected 3 (RGB) or 1 (Grayscale). "
            f"Received input with shape: images.shape={tuple(images.shape)}"
        )
    return color.rgb_to_grayscale(images)


def map_hsv(images, fn):
    """``images`` (RGB) with ``fn(h, s, v) -> (h, s, v)`` applied in HSV space."""
    hsv = color.rgb_to_hsv(images)
    h, s, v = fn(hsv[..., 0], hsv[..., 1], hsv[..., 2])
    return color.hsv_to_rgb(_core.stack([h, s, v], axis=-1))
