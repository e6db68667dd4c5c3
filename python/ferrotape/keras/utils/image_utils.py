"""Images as arrays and files (Keras 3's ``keras.src.utils.image_utils``): ``array_to_img``,
``img_to_array``, ``load_img``, ``save_img``. The files are read and written by Pillow, an
optional dependency imported on first use, as Keras does.

>>> import numpy as np
>>> img_to_array(np.zeros((2, 3), np.uint8)).shape  # a grayscale image gains a channel axis
(2, 3, 1)
"""

import io
import pathlib
import warnings

import numpy as np

from ..backend_config import floatx, image_data_format

_INTERPOLATIONS = ("nearest", "bilinear", "bicubic", "hamming", "box", "lanczos")


def _pil_image(who):
    try:
        from PIL import Image
    except ImportError:
        raise ImportError(f"Could not import PIL.Image. The use of `{who}` requires PIL.") from None
    return Image


def _data_format(data_format):
    data_format = data_format or image_data_format()
    if data_format not in ("channels_first", "channels_last"):
        raise ValueError(
            "The `data_format` argument must be one of {'channels_first', 'channels_last'}. "
            f"Received: data_format={data_format}"
        )
    return data_format


def img_to_array(img, data_format=None, dtype=None):
    """A PIL image (or anything ``np.asarray`` reads) as a 3D array: ``(height, width,
    channels)``, or ``(channels, height, width)`` with ``data_format="channels_first"``.

    Args:
        img: the image.
        data_format: "channels_last" (default) or "channels_first".
        dtype: the array's dtype (``floatx()`` by default).

    Returns:
        A numpy array.
    """
    data_format = _data_format(data_format)
    x = np.asarray(img, dtype=dtype or floatx())
    if x.ndim == 3:
        return x.transpose(2, 0, 1) if data_format == "channels_first" else x
    if x.ndim == 2:
        shape = (1, *x.shape) if data_format == "channels_first" else (*x.shape, 1)
        return x.reshape(shape)
    raise ValueError(f"Unsupported image shape: {x.shape}")


def array_to_img(x, data_format=None, scale=True, dtype=None):
    """A 3D array as a PIL image: 4 channels give RGBA, 3 RGB, 1 grayscale ("L", or "I" for
    values above 255).

    Args:
        x: the array, ``(height, width, channels)`` (or channels first).
        data_format: "channels_last" (default) or "channels_first".
        scale: rescale the values to [0, 255] (min to 0, max to 255) first.
        dtype: the dtype ``x`` is read as (``floatx()`` by default).

    Returns:
        A ``PIL.Image.Image``.
    """
    image = _pil_image("array_to_img")
    data_format = _data_format(data_format)
    x = np.array(x, dtype=dtype or floatx())
    if x.ndim != 3:
        raise ValueError(
            f"Expected image array to have rank 3 (single image). Got array with shape: {x.shape}"
        )
    if data_format == "channels_first":
        x = x.transpose(1, 2, 0)
    if scale:
        x = x - np.min(x)
        peak = np.max(x)
        if peak != 0:
            x /= peak
        x *= 255
    channels = x.shape[2]
    if channels == 4:
        return image.fromarray(x.astype("uint8"), "RGBA")
    if channels == 3:
        return image.fromarray(x.astype("uint8"), "RGB")
    if channels == 1:
        if np.max(x) > 255:
            return image.fromarray(x[:, :, 0].astype("int32"), "I")
        return image.fromarray(x[:, :, 0].astype("uint8"), "L")
    raise ValueError(f"Unsupported channel number: {channels}")


def save_img(path, x, data_format=None, file_format=None, scale=True, **kwargs):
    """Writes an array as an image file (the format from ``file_format`` or the path's
    suffix; RGBA is converted to RGB for JPEG, with a warning).

    Args:
        path: a path or a file object.
        x: the array, as ``array_to_img`` takes it.
        data_format: "channels_last" (default) or "channels_first".
        file_format: the format name ("png", "jpeg", ...).
        scale: rescale the values to [0, 255] first.
        **kwargs: passed to ``PIL.Image.Image.save``.
    """
    if file_format is None and isinstance(path, str | pathlib.Path):
        file_format = pathlib.Path(path).suffix[1:].lower()
    if file_format and file_format.lower() == "jpg":
        file_format = "jpeg"
    img = array_to_img(x, data_format=data_format, scale=scale)
    if img.mode == "RGBA" and file_format == "jpeg":
        warnings.warn(
            "The JPEG format does not support RGBA images, converting to RGB.", stacklevel=2
        )
        img = img.convert("RGB")
    img.save(path, format=file_format, **kwargs)


def load_img(
    path, color_mode="rgb", target_size=None, interpolation="nearest", keep_aspect_ratio=False
):
    """Reads an image file into a PIL image.

    Args:
        path: a path or an ``io.BytesIO``.
        color_mode: "grayscale", "rgb" or "rgba".
        target_size: ``(height, width)`` to resize to, or None.
        interpolation: the resampling filter: "nearest", "bilinear", "bicubic", "hamming",
            "box" or "lanczos".
        keep_aspect_ratio: crop the centre to the target's aspect ratio before resizing.

    Returns:
        A ``PIL.Image.Image``.
    """
    image = _pil_image("load_img")
    if isinstance(path, io.BytesIO):
        img = image.open(path)
    elif isinstance(path, pathlib.Path | bytes | str):
        with open(path, "rb") as f:
            img = image.open(io.BytesIO(f.read()))
    else:
        raise TypeError(f"path should be path-like or io.BytesIO, not {type(path)}")
    modes = {
        "grayscale": ("L", ("L", "I;16", "I")),
        "rgba": ("RGBA", ("RGBA",)),
        "rgb": ("RGB", ("RGB",)),
    }
    if color_mode not in modes:
        raise ValueError('color_mode must be "grayscale", "rgb", or "rgba"')
    target_mode, accepted = modes[color_mode]
    if img.mode not in accepted:
        img = img.convert(target_mode)
    if target_size is None:
        return img
    size = (target_size[1], target_size[0])
    if img.size == size:
        return img
    if interpolation not in _INTERPOLATIONS:
        raise ValueError(
            f"Invalid interpolation method {interpolation} specified. Supported methods are "
            f"{', '.join(_INTERPOLATIONS)}"
        )
    resample = getattr(image.Resampling, interpolation.upper())
    if not keep_aspect_ratio:
        return img.resize(size, resample)
    width, height = img.size
    crop_height = min(height, (width * size[1]) // size[0])
    crop_width = min(width, (height * size[0]) // size[1])
    top, left = (height - crop_height) // 2, (width - crop_width) // 2
    return img.resize(size, resample, box=[left, top, left + crop_width, top + crop_height])
