"""What the ``ft.image`` functions share: checking an image's rank, batching a single image."""

import operator
import reprlib

import numpy as np

from .. import _core


def image_tensor(op, image, ranks=(3, 4)):
    """``image`` as a tensor, checked to be 3-D ``[height, width, channels]`` or 4-D (batched)."""
    x = _core.convert_to_tensor(image)
    if x.ndim not in ranks:
        names = {3: "3-D [height, width, channels]", 4: "4-D [batch, height, width, channels]"}
        wanted = " or ".join(names.get(r, f"{r}-D") for r in ranks)
        raise ValueError(f"{op}: image must be {wanted}, received shape {list(x.shape)}")
    return x


def batched(op, image):
    """``(images, was_batched)``: a 3-D image gets a batch axis of 1, ``unbatch`` removes it."""
    x = image_tensor(op, image)
    return (x, True) if x.ndim == 4 else (_core.expand_dims(x, 0), False)


def unbatch(x, was_batched):
    return x if was_batched else x[0]


def is_float(x):
    return _core.convert_to_tensor(x).dtype.is_floating


def as_int(op, name, value, minimum=None):
    """A Python int from an int, numpy int or scalar int tensor, optionally at least ``minimum``."""
    if hasattr(value, "numpy"):
        value = value.numpy()
    try:
        result = operator.index(np.asarray(value).item() if np.ndim(value) == 0 else value)
    except TypeError:
        result = None
    if result is None or (minimum is not None and result < minimum):
        bound = "" if minimum is None else f" >= {minimum}"
        raise ValueError(f"{op}: {name} must be an int{bound}, received {reprlib.repr(value)}")
    return result


def as_float(value):
    """A Python float from a number or scalar tensor."""
    return float(value.numpy() if hasattr(value, "numpy") else value)


def scalar(value, dtype):
    """``value`` ready to combine with a tensor of ``dtype``: a tensor is cast; a Python number
    is left as it is, so the op takes it in ``dtype`` (casting it would round it to float32)."""
    if isinstance(value, _core.Tensor | _core.Variable):
        return _core.cast(value, dtype)
    return value
