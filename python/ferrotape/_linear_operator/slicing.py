"""Batch slicing of ``LinearOperator`` s (TensorFlow's ``slicing.py``): ``operator[1:, 0]``
is the operator built from its parameters, each sliced along the batch axes."""

import inspect

import numpy as _np

from .. import _core
from .linear_operator_util import read

_HINTS = ("is_non_singular", "is_self_adjoint", "is_positive_definite", "is_square")


def _expand_ellipsis(slices, rank):
    """``slices`` as a tuple over the ``rank`` batch axes, an ``...`` spelled out."""
    slices = slices if isinstance(slices, tuple) else (slices,)
    if any(s is Ellipsis for s in slices):
        i = next(k for k, s in enumerate(slices) if s is Ellipsis)
        used = sum(1 for s in slices if s is not None and s is not Ellipsis)
        slices = slices[:i] + (slice(None),) * (rank - used) + slices[i + 1 :]
    return slices


def _slice_value(value, ndims, batch, slices):
    from .linear_operator import LinearOperator

    if isinstance(value, (list, tuple)) and not all(
        isinstance(v, (int, float, _np.number)) for v in value
    ):
        # A list of operators (or of diagonals): each sliced. A list of numbers is data.
        return [_slice_value(v, ndims, batch, slices) for v in value]
    if isinstance(value, LinearOperator):
        own = value.batch_shape.as_list()
        if not own:
            return value  # unbatched: it broadcasts against any batch, sliced or not
        if own != batch:
            raise NotImplementedError(
                f"Slicing a {value.name} of batch shape {own} inside an operator of batch "
                f"shape {batch} is not supported"
            )
        return value[slices]
    tensor = read(value)
    matrix = list(tensor.shape[len(tensor.shape) - ndims :]) if ndims else []
    if list(tensor.shape) != [*batch, *matrix]:
        tensor = _core.broadcast_to(tensor, [*batch, *matrix])
    return tensor[slices]


def batch_slice(operator, slices):
    """``operator`` with its batch axes indexed by ``slices`` (ints, slices, ``None``, ``...``).

    Args:
        operator: A ``LinearOperator`` whose class lists its parameters' matrix ranks
            (``_slice_param_ndims``).
        slices: The index over the batch axes.

    Returns:
        A ``LinearOperator`` of the same class.

    Raises:
        ValueError: if ``slices`` indexes more axes than the batch has.
    """
    batch = operator.batch_shape.as_list()
    slices = _expand_ellipsis(slices, len(batch))
    try:
        new_batch = list(_np.empty(batch)[slices].shape)
    except IndexError as err:
        raise ValueError(
            f"{operator.name}: cannot slice the batch shape {batch} with {slices}: {err}"
        ) from None
    params = dict(operator.parameters)
    for key, ndims in operator._slice_param_ndims().items():
        if params.get(key) is not None:
            params[key] = _slice_value(params[key], ndims, batch, slices)
    signature = inspect.signature(type(operator).__init__).parameters
    for hint in _HINTS:
        if hint in signature and params.get(hint) is None:
            params[hint] = getattr(operator, hint)
    if "batch_shape" in signature and params.get("batch_shape") is not None:
        params["batch_shape"] = new_batch
    return type(operator)(**params)
