"""``to_categorical`` and ``normalize`` (Keras 3's ``keras.src.utils.numerical_utils``)."""

import numpy as np

from ... import _core


def to_categorical(x, num_classes=None, dtype="float32"):
    """Converts integer class labels to one-hot rows: a numpy array with the class axis last.

    As in Keras, a trailing axis of size 1 is dropped first, so labels shaped ``(n,)`` and
    ``(n, 1)`` both give ``(n, num_classes)``; ``num_classes`` defaults to ``max(x) + 1``.
    Keras 3 returns float64; ferrotape returns ``dtype`` (float32 by default, the dtype of
    tf.keras 2 and of ferrotape's models).

    >>> to_categorical([[1], [0]]).shape
    (2, 2)
    """
    try:
        labels = np.array(x.numpy() if hasattr(x, "numpy") else x, dtype="int64")
    except (TypeError, ValueError) as error:
        raise ValueError(f"to_categorical: expected integer class labels ({error})") from None
    input_shape = labels.shape
    if len(input_shape) > 1 and input_shape[-1] == 1:
        input_shape = input_shape[:-1]
    labels = labels.reshape(-1)
    if not num_classes:
        if labels.size == 0:
            raise ValueError("to_categorical: num_classes is required when there are no labels")
        num_classes = int(labels.max()) + 1
    if labels.size and (labels.min() < 0 or labels.max() >= num_classes):
        raise ValueError(
            f"to_categorical: labels must be in [0, {num_classes}), "
            f"found values from {labels.min()} to {labels.max()}"
        )
    categorical = np.zeros((labels.size, num_classes), dtype=dtype)
    categorical[np.arange(labels.size), labels] = 1
    return categorical.reshape(input_shape + (num_classes,))


def normalize(x, axis=-1, order=2):
    """Scales ``x`` to unit ``order``-norm along ``axis`` (zero vectors stay zero).

    A numpy array gives a numpy array, divided by its norm (a zero norm counts as 1), as in
    Keras; a tensor gives a tensor, divided by ``max(norm, 1e-7)``.

    >>> normalize(np.array([[3.0, 4.0], [0.0, 0.0]]))
    array([[0.6, 0.8],
           [0. , 0. ]])
    """
    ndim = np.ndim(x)
    if axis is not None and (
        isinstance(axis, bool)
        or not isinstance(axis, (int, np.integer))
        or not -ndim <= axis < max(ndim, 1)
    ):
        raise ValueError(
            f"normalize: axis must be None or an int in [-{ndim}, {ndim}) for an input of rank "
            f"{ndim}. Received: axis={axis!r}"
        )
    if isinstance(x, np.ndarray):
        # Keras writes `axis or -1` here, which divides by the wrong norms for axis=0.
        if axis is None:
            norm = np.linalg.norm(x.reshape(-1), order)
            return x / (norm if norm else 1)
        norm = np.linalg.norm(x, order, axis, keepdims=True)
        norm[norm == 0] = 1
        return x / norm
    x = _core.convert_to_tensor(x)
    powered = _core.reduce_sum(_core.abs(x) ** order, axis=axis, keepdims=True)
    norm = powered ** (1.0 / order)
    return x / _core.maximum(norm, 1e-7)


# ---------------------------------------------------------------- progress display
