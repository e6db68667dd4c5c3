"""The base ``Loss``, its reductions and the shape checks every loss shares (Keras 3's
``keras.src.losses.loss``).
"""

import re

import numpy as np

import ferrotape as ft

from ... import _core
from ..backend_dtypes import as_dtype
from ..layers.layer_masking import get_keras_mask

EPSILON = 1e-7
_REDUCTIONS = ("sum_over_batch_size", "sum", "none", None, "mean", "mean_with_sample_weight")


def _tensor(x, dtype=None):
    """``x`` as a tensor (a variable is read), cast to ``dtype`` when given."""
    if not isinstance(x, ft.Tensor):
        x = ft.convert_to_tensor(x)
    if dtype is not None and x.dtype != dtype:
        x = ft.cast(x, dtype)
    return x


def _pred_and_true(y_true, y_pred):
    """``y_pred`` as a tensor and ``y_true`` as a tensor of the same dtype."""
    y_pred = _tensor(y_pred)
    if not y_pred.dtype.is_floating:
        y_pred = ft.cast(y_pred, ft.float32)
    return _tensor(y_true, y_pred.dtype), y_pred


def squeeze_or_expand_to_same_rank(x1, x2, expand_rank_1=True):
    """Makes ranks that differ by a trailing axis of size 1 equal: squeezes that axis, or,
    when the other tensor has rank 1 (and ``expand_rank_1``), expands it instead."""
    rank_1, rank_2 = x1.ndim, x2.ndim
    # Sizes compared with 1 only (see `_core.checked_shape`).
    if rank_1 == rank_2 + 1 and _core.checked_shape(x1)[-1] == 1:
        if rank_2 == 1 and expand_rank_1:
            x2 = ft.expand_dims(x2, -1)
        else:
            x1 = ft.squeeze(x1, -1)
    elif rank_2 == rank_1 + 1 and _core.checked_shape(x2)[-1] == 1:
        if rank_1 == 1 and expand_rank_1:
            x1 = ft.expand_dims(x1, -1)
        else:
            x2 = ft.squeeze(x2, -1)
    return x1, x2


def _same_rank(function, y_true, y_pred):
    """``squeeze_or_expand_to_same_rank``, then a check that the shapes broadcast, so that a
    mismatch names the loss rather than the subtraction inside it."""
    y_true, y_pred = squeeze_or_expand_to_same_rank(y_true, y_pred)
    true_shape, pred_shape = tuple(_core.checked_shape(y_true)), tuple(_core.checked_shape(y_pred))
    _check_broadcast(
        function,
        "`y_true` and `y_pred`",
        true_shape,
        pred_shape,
        f"y_true.shape={true_shape}, y_pred.shape={pred_shape}",
    )
    return y_true, y_pred


def _check_broadcast(function, what, shape_1, shape_2, received):
    """Raises unless the shapes broadcast (a check only: see `_core.checked_shape`)."""
    try:
        np.broadcast_shapes(shape_1, shape_2)
    except ValueError:
        raise ValueError(
            f"{function}: {what} have incompatible shapes. Received: {received}"
        ) from None


def _check_same_shape(function, y_true, y_pred):
    true_shape, pred_shape = tuple(_core.checked_shape(y_true)), tuple(_core.checked_shape(y_pred))
    if len(true_shape) != len(pred_shape):
        raise ValueError(
            f"{function}: arguments `y_true` and `y_pred` must have the same rank (ndim). "
            f"Received: y_true.shape={true_shape}, y_pred.shape={pred_shape}"
        )
    if true_shape != pred_shape:
        raise ValueError(
            f"{function}: arguments `y_true` and `y_pred` must have the same shape. "
            f"Received: y_true.shape={tuple(y_true.shape)}, y_pred.shape={tuple(y_pred.shape)}"
        )


def _check_axis(function, axis):
    if isinstance(axis, bool) or not isinstance(axis, int | np.integer):
        raise ValueError(f"{function}: `axis` must be an int. Received: axis={axis!r}")


# --------------------------------------------------------------- regression


# ---------------------------------------------------------------- reduction


def standardize_reduction(reduction):
    if reduction not in _REDUCTIONS:
        raise ValueError(
            f"Loss: invalid value for argument `reduction`. Expected one of {_REDUCTIONS}. "
            f"Received: reduction={reduction!r}"
        )
    return reduction


def _apply_mask(sample_weight, mask, dtype, reduction):
    """Merges a validity mask into the sample weights; for mean reductions the valid entries
    are reweighted by ``total / valid`` so the mean runs over the valid entries only."""
    if mask is None:
        return sample_weight
    mask = ft.cast(mask, dtype)
    if reduction in ("mean", "sum_over_batch_size"):
        total = ft.cast(ft.size(mask), dtype)
        mask = mask * (total / (ft.reduce_sum(mask) + EPSILON))
    if sample_weight is None:
        return mask
    mask, sample_weight = squeeze_or_expand_to_same_rank(mask, sample_weight)
    return sample_weight * mask


def reduce_weighted_values(
    values, sample_weight=None, mask=None, reduction="sum_over_batch_size", dtype=None, who="Loss"
):
    """Keras's reduction: weights (``sample_weight`` broadcast against ``values``, merged
    with ``mask``), then ``"sum"`` or ``"sum_over_batch_size"`` (the sum divided by the number
    of elements, 0 for none); ``"none"``/None returns the weighted values."""
    reduction = standardize_reduction(reduction)
    values = _tensor(values, dtype)
    if sample_weight is not None:
        sample_weight = _tensor(sample_weight, values.dtype)
    sample_weight = _apply_mask(sample_weight, mask, values.dtype, reduction)
    if sample_weight is not None:
        values, sample_weight = squeeze_or_expand_to_same_rank(values, sample_weight)
        weight_shape = tuple(_core.checked_shape(sample_weight))
        values_shape = tuple(_core.checked_shape(values))
        _check_broadcast(
            who,
            "`sample_weight` and the per-sample losses",
            weight_shape,
            values_shape,
            f"sample_weight.shape={weight_shape}, losses.shape={values_shape}",
        )
        values = values * sample_weight
    if reduction is None or reduction == "none":
        return values
    # Compared with 0 only (see `_core.checked_shape`).
    shape = tuple(_core.checked_shape(values))
    if shape in ((), (0,)):
        return values
    loss = ft.reduce_sum(values)
    if reduction == "sum":
        return loss
    if reduction == "mean_with_sample_weight" and sample_weight is not None:
        # The sum divided by the total weight, 0 when that is 0 (Keras's divide_no_nan).
        divisor = ft.reduce_sum(sample_weight)
        nonzero = ft.not_equal(divisor, 0.0)
        safe_divisor = ft.where(nonzero, divisor, ft.ones_like(divisor))
        return ft.where(nonzero, loss / safe_divisor, ft.zeros_like(loss))
    if 0 in shape:
        return loss * 0.0
    # The count as a tensor, so that a trace counts again at other batch sizes.
    return loss / ft.cast(ft.size(values), loss.dtype)


# ------------------------------------------------------------------ classes


def _snake_case(name):
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


class Loss:
    """Base class of the loss classes: ``__call__(y_true, y_pred, sample_weight=None)``
    computes ``call(y_true, y_pred)`` (one value per sample), weights it and reduces it.

    Args:
        name: the loss's name.
        reduction: ``"sum_over_batch_size"`` (default: the mean over all elements), ``"sum"``,
            ``"mean_with_sample_weight"``, or ``"none"``/None (no reduction).
        dtype: the dtype the inputs are cast to; float32 by default.
    """

    def __init__(self, name=None, reduction="sum_over_batch_size", dtype=None):
        self.name = name or _snake_case(type(self).__name__)
        self.reduction = standardize_reduction(reduction)
        self._dtype = ft.float32 if dtype is None else as_dtype(dtype)

    @property
    def dtype(self):
        return self._dtype

    def __call__(self, y_true, y_pred, sample_weight=None):
        # As Keras 3: the steps a prediction's mask (a model output's `_keras_mask`) marks as
        # padding do not count, and a mean runs over the steps that do.
        in_mask = get_keras_mask(y_pred)
        y_pred = _tensor(y_pred, self._dtype)
        y_true = _tensor(y_true, self._dtype)
        losses = self.call(y_true, y_pred)
        mask = None
        for m in (in_mask, get_keras_mask(losses), self._mask(y_true, y_pred)):
            if m is not None:
                m = ft.cast(m, "bool")
                mask = m if mask is None else ft.logical_and(mask, m)
        return reduce_weighted_values(
            losses,
            sample_weight=sample_weight,
            mask=mask,
            reduction=self.reduction,
            dtype=self._dtype,
            who=type(self).__name__,
        )

    def call(self, y_true, y_pred):
        raise NotImplementedError(f"{type(self).__name__} must implement `call(y_true, y_pred)`.")

    def _mask(self, y_true, y_pred):
        """The entries that count (None: all of them)."""
        del y_true, y_pred
        return None

    def get_config(self):
        return {"name": self.name, "reduction": self.reduction}

    @classmethod
    def from_config(cls, config):
        return cls(**config)
