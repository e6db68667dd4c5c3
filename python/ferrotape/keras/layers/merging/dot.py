"""``Dot`` and ``dot`` (Keras 3's ``keras.src.layers.merging.dot``).

>>> import ferrotape as ft
>>> a, b = ft.constant([[1.0, 2.0]]), ft.constant([[3.0, 4.0]])
>>> ft.keras.layers.Dot(axes=1)([a, b]).numpy().tolist()
[[11.0]]
"""

import numpy as np

from .... import _core, linalg
from ..layer_helpers import _is_int
from .merge import _Merge


def _l2_normalize(x, axis):
    # Keras's l2_normalize: x / sqrt(max(sum(x^2), 1e-12)).
    squares = _core.reduce_sum(_core.square(x), [axis], keepdims=True)
    return x * _core.rsqrt(_core.maximum(squares, 1e-12))


def _batch_dot(x, y, axes):
    """Per sample ``b``, the contraction of ``x[b]`` and ``y[b]`` over ``axes``: the other
    axes of ``x`` then those of ``y``; a result with no axis besides the batch gets one of
    size 1 (Keras's ``batch_dot``)."""
    ax, ay = axes
    x = _core.transpose(x, [a for a in range(len(x.shape)) if a != ax] + [ax])
    y = _core.transpose(y, [0, ay] + [a for a in range(1, len(y.shape)) if a != ay])
    batch, size = x.shape[0], x.shape[-1]
    x_rest, y_rest = list(x.shape[1:-1]), list(y.shape[2:])
    products = linalg.matmul(
        _core.reshape(x, [batch, int(np.prod(x_rest, dtype=np.int64)), size]),
        _core.reshape(y, [batch, size, int(np.prod(y_rest, dtype=np.int64))]),
    )
    return _core.reshape(products, [batch, *x_rest, *y_rest] if x_rest or y_rest else [batch, 1])


class Dot(_Merge):
    """The dot product of two samples along ``axes`` (an int for both, or one per input),
    after l2-normalising them along those axes when ``normalize`` (so it is their cosine
    similarity): ``[b, d] . [b, d] -> [b, 1]``, ``[b, m, d] . [b, n, d]`` (axes 2) ->
    ``[b, m, n]``."""

    def compute_mask(self, inputs, mask=None):
        """None (Keras 3): the dotted axes are gone.

        Args:
            inputs: The pair of inputs.
            mask: Their masks.

        Returns:
            None.
        """
        del inputs, mask
        return None

    def __init__(self, axes, normalize=False, **kwargs):
        super().__init__(**kwargs)
        ok = _is_int(axes) or (
            isinstance(axes, (tuple, list)) and len(axes) == 2 and all(map(_is_int, axes))
        )
        if not ok:
            raise ValueError(
                "Dot: invalid format for argument `axes`: expected an integer or a list of 2 "
                f"integers. Received: axes={axes!r}"
            )
        self.axes = int(axes) if _is_int(axes) else tuple(int(a) for a in axes)
        self.normalize = bool(normalize)

    def _merge(self, inputs):
        if len(inputs) != 2:
            raise ValueError(f"Dot: expected exactly 2 inputs, received {len(inputs)}")
        x, y = inputs
        pair = (self.axes, self.axes) if _is_int(self.axes) else self.axes
        axes = [a % len(t.shape) for a, t in zip(pair, inputs, strict=True)]
        if 0 in axes:
            raise ValueError(f"Dot: cannot contract the batch axis. Received: axes={self.axes}")
        if x.shape[axes[0]] != y.shape[axes[1]]:
            raise ValueError(
                f"Dot: incompatible input shapes {tuple(x.shape)} and {tuple(y.shape)}: axis "
                f"{axes[0]} of the first has size {x.shape[axes[0]]}, axis {axes[1]} of the "
                f"second {y.shape[axes[1]]}"
            )
        if self.normalize:
            x, y = _l2_normalize(x, axes[0]), _l2_normalize(y, axes[1])
        return _batch_dot(x, y, axes)

    def get_config(self):
        return {**super().get_config(), "axes": self.axes, "normalize": self.normalize}


def dot(inputs, axes=-1, **kwargs):
    """``Dot(axes, **kwargs)(inputs)``: the per-sample dot product of two tensors."""
    return Dot(axes=axes, **kwargs)(inputs)
