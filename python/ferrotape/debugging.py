"""``ft.debugging``: TensorFlow's eager assertions and numeric checks.

Eager only, as ferrotape is: each assertion checks its condition at once and returns None, or
raises what TensorFlow 2.21 raises in eager mode: ``InvalidArgumentError`` for a condition on
values (``assert_equal``, ``assert_near``, ``check_numerics``...), ``ValueError`` for one on
static shapes (``assert_rank``, ``assert_shapes``). Every message names the assertion.

>>> import ferrotape as ft
>>> ft.debugging.assert_equal(ft.constant([1, 2]), [1, 2])
>>> ft.debugging.check_numerics(ft.constant([1.0, 2.0]), "weights").numpy()
array([1., 2.], dtype=float32)
"""

import numpy as np

from . import _core
from ._debugging_types import (
    assert_integer,
    assert_proper_iterable,
    assert_same_float_dtype,
    disable_check_numerics,
    disable_traceback_filtering,
    enable_check_numerics,
    enable_traceback_filtering,
    get_log_device_placement,
    is_numeric_tensor,
    is_traceback_filtering_enabled,
    set_log_device_placement,
)
from .control_flow import Assert
from .dtypes import as_dtype
from .errors import InvalidArgumentError
from .gradients import custom_gradient

_FLOATS = ("float16", "bfloat16", "float32", "float64")


def _tensor(value, dtype=None):
    if _core.is_tensor(value):
        return value
    return _core.convert_to_tensor(value, dtype=dtype)


def _pair(x, y):
    """``x`` as a tensor and ``y`` converted to its dtype when ``y`` is not a tensor (as TF)."""
    x = _tensor(x)
    if not _core.is_tensor(y):
        y = _core.convert_to_tensor(y, dtype=x.dtype)
    return x, y


def _head(values, summarize):
    flat = np.asarray(values).reshape(-1)
    count = min(flat.size, 3 if summarize is None else int(summarize))
    return count, flat[:count]


def _fail(op, condition, message, x, y, holds, summarize):
    lines = [message] if message else []
    lines.append(f"{op}: Condition {condition} did not hold.")
    bad = np.argwhere(~np.asarray(holds))
    x_np, y_np = np.asarray(x.numpy()), np.asarray(y.numpy())
    if bad.size and x_np.shape == y_np.shape and x_np.ndim > 0:
        first = bad[: 3 if summarize is None else int(summarize)]
        lines += [f"Indices of first {len(first)} different values:", str(first)]
        lines += ["Corresponding x values:", str(x_np[tuple(first.T)])]
        lines += ["Corresponding y values:", str(y_np[tuple(first.T)])]
    for name, values in (("x", x_np), ("y", y_np)):
        count, head = _head(values, summarize)
        lines += [f"First {count} elements of {name}:", str(head)]
    raise InvalidArgumentError("\n".join(lines))


def _compare(op, condition, compute, x, y, message, summarize):
    x, y = _pair(x, y)
    holds = compute(x, y).numpy()
    if not np.all(holds):
        _fail(op, condition, message, x, y, holds, summarize)


def assert_equal(x, y, message=None, summarize=None, name=None):
    """Checks that ``x == y`` holds for every element (with broadcasting).

    Args:
        x: A numeric tensor (or array-like).
        y: A tensor of ``x``'s dtype, broadcastable with ``x``.
        message: A string prefixed to the error message.
        summarize: How many entries of ``x`` and ``y`` the message prints.
        name: Ignored (TensorFlow's op name).

    Returns:
        ``None``: eager mode has no op to return.

    Raises:
        InvalidArgumentError: if the condition is false for any element.

    >>> import ferrotape as ft
    >>> ft.assert_equal([1, 2], [1, 2])
    >>> try:
    ...     ft.assert_equal([1, 2], [1, 3])
    ... except ft.errors.InvalidArgumentError:
    ...     print("raised")
    raised
    """
    del name
    _compare("assert_equal", "x == y", _core.equal, x, y, message, summarize)


def assert_none_equal(x, y, message=None, summarize=None, name=None):
    """Checks that ``x != y`` holds for every element (with broadcasting).

    Args:
        x: A numeric tensor (or array-like).
        y: A tensor of ``x``'s dtype, broadcastable with ``x``.
        message: A string prefixed to the error message.
        summarize: How many entries of ``x`` and ``y`` the message prints.
        name: Ignored (TensorFlow's op name).

    Returns:
        ``None``: eager mode has no op to return.

    Raises:
        InvalidArgumentError: if the condition is false for any element.

    >>> import ferrotape as ft
    >>> ft.debugging.assert_none_equal([1, 2], [3, 4])
    >>> try:
    ...     ft.debugging.assert_none_equal([1, 2], [1, 4])
    ... except ft.errors.InvalidArgumentError:
    ...     print("raised")
    raised
    """
    del name
    _compare("assert_none_equal", "x != y", _core.not_equal, x, y, message, summarize)


def assert_less(x, y, message=None, summarize=None, name=None):
    """Checks that ``x < y`` holds for every element (with broadcasting).

    Args:
        x: A numeric tensor (or array-like).
        y: A tensor of ``x``'s dtype, broadcastable with ``x``.
        message: A string prefixed to the error message.
        summarize: How many entries of ``x`` and ``y`` the message prints.
        name: Ignored (TensorFlow's op name).

    Returns:
        ``None``: eager mode has no op to return.

    Raises:
        InvalidArgumentError: if the condition is false for any element.

    >>> import ferrotape as ft
    >>> ft.assert_less([1, 2], [2, 3])
    >>> try:
    ...     ft.assert_less([1, 2], [2, 2])
    ... except ft.errors.InvalidArgumentError:
    ...     print("raised")
    raised
    """
    del name
    _compare("assert_less", "x < y", _core.less, x, y, message, summarize)


def assert_less_equal(x, y, message=None, summarize=None, name=None):
    """Checks that ``x <= y`` holds for every element (with broadcasting).

    Args:
        x: A numeric tensor (or array-like).
        y: A tensor of ``x``'s dtype, broadcastable with ``x``.
        message: A string prefixed to the error message.
        summarize: How many entries of ``x`` and ``y`` the message prints.
        name: Ignored (TensorFlow's op name).

    Returns:
        ``None``: eager mode has no op to return.

    Raises:
        InvalidArgumentError: if the condition is false for any element.

    >>> import ferrotape as ft
    >>> ft.debugging.assert_less_equal([1, 2], [1, 3])
    >>> try:
    ...     ft.debugging.assert_less_equal([1, 2], [0, 3])
    ... except ft.errors.InvalidArgumentError:
    ...     print("raised")
    raised
    """
    del name
    _compare("assert_less_equal", "x <= y", _core.less_equal, x, y, message, summarize)


def assert_greater(x, y, message=None, summarize=None, name=None):
    """Checks that ``x > y`` holds for every element (with broadcasting).

    Args:
        x: A numeric tensor (or array-like).
        y: A tensor of ``x``'s dtype, broadcastable with ``x``.
        message: A string prefixed to the error message.
        summarize: How many entries of ``x`` and ``y`` the message prints.
        name: Ignored (TensorFlow's op name).

    Returns:
        ``None``: eager mode has no op to return.

    Raises:
        InvalidArgumentError: if the condition is false for any element.

    >>> import ferrotape as ft
    >>> ft.assert_greater([2, 3], [1, 2])
    >>> try:
    ...     ft.assert_greater([2, 2], [1, 2])
    ... except ft.errors.InvalidArgumentError:
    ...     print("raised")
    raised
    """
    del name
    _compare("assert_greater", "x > y", _core.greater, x, y, message, summarize)


def assert_greater_equal(x, y, message=None, summarize=None, name=None):
    """Checks that ``x >= y`` holds for every element (with broadcasting).

    Args:
        x: A numeric tensor (or array-like).
        y: A tensor of ``x``'s dtype, broadcastable with ``x``.
        message: A string prefixed to the error message.
        summarize: How many entries of ``x`` and ``y`` the message prints.
        name: Ignored (TensorFlow's op name).

    Returns:
        ``None``: eager mode has no op to return.

    Raises:
        InvalidArgumentError: if the condition is false for any element.

    >>> import ferrotape as ft
    >>> ft.debugging.assert_greater_equal([1, 3], [1, 2])
    >>> try:
    ...     ft.debugging.assert_greater_equal([0, 3], [1, 2])
    ... except ft.errors.InvalidArgumentError:
    ...     print("raised")
    raised
    """
    del name
    _compare("assert_greater_equal", "x >= y", _core.greater_equal, x, y, message, summarize)


def _against_zero(op, condition, compare, example):
    def check(x, message=None, summarize=None, name=None):
        del name
        x = _tensor(x)
        _compare(op, condition, compare, x, _core.zeros_like(x), message, summarize)

    check.__name__ = check.__qualname__ = op
    check.__doc__ = f"""Checks that ``{condition}`` holds for every element.

    Args:
        x: A numeric tensor (or array-like).
        message: A string prefixed to the error message.
        summarize: How many entries of ``x`` the message prints.
        name: Ignored (TensorFlow's op name).

    Returns:
        ``None``.

    Raises:
        InvalidArgumentError: if the condition is false for any element.

    >>> import ferrotape as ft
    >>> ft.debugging.{op}({example})
    """
    return check


assert_positive = _against_zero("assert_positive", "x > 0", _core.greater, "[1, 2]")
assert_negative = _against_zero("assert_negative", "x < 0", _core.less, "[-1, -2]")
assert_non_negative = _against_zero("assert_non_negative", "x >= 0", _core.greater_equal, "[0, 2]")
assert_non_positive = _against_zero("assert_non_positive", "x <= 0", _core.less_equal, "[0, -2]")


def assert_near(x, y, rtol=None, atol=None, message=None, summarize=None, name=None):
    """Checks that ``|x - y| <= atol + rtol * |y|`` holds for every element.

    Args:
        x: A floating tensor (or array-like).
        y: A tensor of ``x``'s dtype, broadcastable with ``x``.
        rtol: The relative tolerance; ``None`` for 10 times the dtype's machine epsilon.
        atol: The absolute tolerance; ``None`` for 10 times the dtype's machine epsilon.
        message: A string prefixed to the error message.
        summarize: How many entries the message prints.
        name: Ignored (TensorFlow's op name).

    Returns:
        ``None``.

    Raises:
        InvalidArgumentError: if any element is outside the tolerance.

    >>> import ferrotape as ft
    >>> ft.debugging.assert_near([1.0, 2.0], [1.0, 2.0000001])
    """
    del name
    x, y = _pair(x, y)
    if x.dtype != y.dtype:
        raise InvalidArgumentError(
            f"assert_near: x and y must have the same dtype, received {x.dtype.name} and "
            f"{y.dtype.name}"
        )
    x_np, y_np = np.asarray(x.numpy()), np.asarray(y.numpy())
    eps = np.finfo(x_np.dtype).eps if x_np.dtype.kind == "f" else 0
    rtol = 10 * eps if rtol is None else rtol
    atol = 10 * eps if atol is None else atol
    try:
        holds = np.abs(x_np - y_np) <= atol + rtol * np.abs(y_np)
    except ValueError as error:
        raise InvalidArgumentError(
            f"assert_near: incompatible shapes: {list(x_np.shape)} vs. {list(y_np.shape)}"
        ) from error
    if not np.all(holds):
        condition = f"|x - y| <= atol + rtol * |y| (rtol = {rtol}, atol = {atol})"
        _fail("assert_near", condition, message, x, y, holds, summarize)


def _static_rank(x):
    return len(_tensor(x).shape)


def _rank_error(op, message, expected, x):
    shape = tuple(_tensor(x).shape)
    prefix = f"{message}.  " if message else ""
    raise ValueError(
        f"{prefix}{op}: Tensor must have rank {expected}.  Received rank {len(shape)}, "
        f"shape {shape}"
    )


def _int(value, op, what):
    value = value.numpy() if hasattr(value, "numpy") else value
    if np.ndim(value) != 0 or not np.issubdtype(np.asarray(value).dtype, np.integer):
        raise ValueError(f"{op}: {what} must be a scalar integer, received {value!r}")
    return int(value)


def assert_rank(x, rank, message=None, name=None):
    """Checks that ``x`` has rank ``rank``.

    Args:
        x: A tensor (or array-like).
        rank: The expected rank, an int.
        message: A string prefixed to the error message.
        name: Ignored (TensorFlow's op name).

    Raises:
        ValueError: if the rank does not match (the shape is known in eager mode).

    Returns:
        ``None``.

    >>> import ferrotape as ft
    >>> ft.assert_rank(ft.zeros([2, 3]), 2)
    """
    del name
    rank = _int(rank, "assert_rank", "rank")
    if _static_rank(x) != rank:
        _rank_error("assert_rank", message, rank, x)


def assert_rank_at_least(x, rank, message=None, name=None):
    """Checks that ``x`` has rank ``rank`` or more.

    Args:
        x: A tensor (or array-like).
        rank: The smallest rank allowed, an int.
        message: A string prefixed to the error message.
        name: Ignored (TensorFlow's op name).

    Raises:
        ValueError: if the rank does not match (the shape is known in eager mode).

    Returns:
        ``None``.

    >>> import ferrotape as ft
    >>> ft.debugging.assert_rank_at_least(ft.zeros([2, 3]), 1)
    """
    del name
    rank = _int(rank, "assert_rank_at_least", "rank")
    if _static_rank(x) < rank:
        _rank_error("assert_rank_at_least", message, f"at least {rank}", x)


def assert_rank_in(x, ranks, message=None, name=None):
    """Checks that the rank of ``x`` is one of ``ranks``.

    Args:
        x: A tensor (or array-like).
        ranks: The ranks allowed, a sequence of ints.
        message: A string prefixed to the error message.
        name: Ignored (TensorFlow's op name).

    Raises:
        ValueError: if the rank does not match (the shape is known in eager mode).

    Returns:
        ``None``.

    >>> import ferrotape as ft
    >>> ft.debugging.assert_rank_in(ft.zeros([2, 3]), [1, 2])
    """
    del name
    ranks = tuple(_int(r, "assert_rank_in", "each rank") for r in ranks)
    if _static_rank(x) not in ranks:
        _rank_error("assert_rank_in", message, f"in {ranks}", x)


def assert_scalar(tensor, message=None, name=None):
    """Checks that ``tensor`` is a scalar (rank 0).

    Args:
        tensor: A tensor (or array-like).
        message: A string prefixed to the error message.
        name: Ignored (TensorFlow's op name).

    Returns:
        ``None``.

    Raises:
        ValueError: if ``tensor`` has rank 1 or more.

    >>> import ferrotape as ft
    >>> ft.debugging.assert_scalar(ft.constant(1.0))
    """
    del name
    if _static_rank(tensor) != 0:
        prefix = f"{message}  " if message else ""
        raise ValueError(
            f"{prefix}assert_scalar: expected scalar, received shape {tuple(_tensor(tensor).shape)}"
        )


def assert_type(tensor, tf_type, message=None, name=None):
    """Checks that ``tensor`` has dtype ``tf_type``.

    Args:
        tensor: A tensor (or array-like).
        tf_type: The expected dtype (a ``DType``, name or numpy dtype).
        message: A string prefixed to the error message.
        name: Ignored (TensorFlow's op name).

    Returns:
        ``None``.

    Raises:
        TypeError: if the dtypes differ.

    >>> import ferrotape as ft
    >>> ft.debugging.assert_type(ft.constant(1.0), ft.float32)
    """
    del name
    expected = as_dtype(tf_type)
    actual = _tensor(tensor).dtype
    if actual != expected:
        prefix = f"{message} " if message else ""
        raise TypeError(
            f"{prefix}assert_type: tensor must be of type {expected.name}; got {actual.name}"
        )


def _spec_dims(spec, op):
    if isinstance(spec, str):
        return list(spec)
    if hasattr(spec, "as_list"):
        spec = spec.as_list()
    if not isinstance(spec, (list, tuple)):
        raise ValueError(f"{op}: a shape must be a list, tuple or string, received {spec!r}")
    return list(spec)


def assert_shapes(shapes, data=None, summarize=None, message=None, name=None):
    """Checks each tensor's shape against a pattern, with named dimensions shared between tensors.

    A pattern entry is an int (that size), a string symbol (the same size wherever the symbol
    appears) or ``"."``/``None`` (any size).

    Args:
        shapes: A list of ``(tensor, shape)`` pairs (or a dict from tensor to shape).
        data: Ignored (TensorFlow prints it on failure).
        summarize: Ignored.
        message: A string prefixed to the error message.
        name: Ignored (TensorFlow's op name).

    Returns:
        ``None``.

    Raises:
        ValueError: if a rank, a size or a symbol's size disagrees.

    >>> import ferrotape as ft
    >>> ft.debugging.assert_shapes([(ft.zeros([2, 3]), ("N", 3)), (ft.zeros([2]), ("N",))])
    """
    del data, summarize, name
    pairs = list(shapes.items()) if isinstance(shapes, dict) else list(shapes)
    sizes = {}
    prefix = f"{message}.  " if message else ""
    for tensor, spec in pairs:
        dims = _spec_dims(spec, "assert_shapes")
        shape = tuple(_tensor(tensor).shape)
        if len(shape) != len(dims):
            _rank_error("assert_shapes", message, len(dims), tensor)
        for axis, (dim, size) in enumerate(zip(dims, shape, strict=True)):
            if dim is None or dim == ".":
                continue
            if isinstance(dim, str):
                known = sizes.setdefault(dim, (size, shape))
                if known[0] == size:
                    continue
                expected, origin = known[0], f"Specified by tensor shape={known[1]} symbol {dim!r}"
            else:
                expected, origin = int(dim), "Specified explicitly"
                if expected == size:
                    continue
            raise ValueError(
                f"{prefix}assert_shapes: {origin}.  Tensor shape={shape} dimension {axis} must "
                f"have size {expected}.  Received size {size}, shape {shape}"
            )


def _check(tensor, message, where=""):
    dtype = tensor.dtype.name
    if dtype not in _FLOATS:
        raise InvalidArgumentError(
            f"check_numerics: expected a floating-point tensor (bfloat16, half, float, "
            f"double), received {dtype} [Op:CheckNumerics]"
        )
    values = np.asarray(tensor.numpy(), dtype=np.float64)
    has_inf, has_nan = bool(np.isinf(values).any()), bool(np.isnan(values).any())
    if has_inf or has_nan:
        kinds = " and ".join(k for k, bad in (("Inf", has_inf), ("NaN", has_nan)) if bad)
        raise InvalidArgumentError(
            f"{where}{message} : Tensor had {kinds} values [Op:CheckNumerics]"
        )


def check_numerics(tensor, message, name=None):
    """Returns ``tensor`` unchanged if it holds no NaN or Inf; raises otherwise.

    Args:
        tensor: A floating tensor.
        message: A string included in the error message.
        name: Ignored (TensorFlow's op name).

    Returns:
        ``tensor``.

    Raises:
        InvalidArgumentError: if ``tensor`` holds a NaN or an Inf.

    Gradient: the upstream gradient, checked the same way.

    >>> import ferrotape as ft
    >>> ft.debugging.check_numerics(ft.constant([1.0, 2.0]), "x").numpy()
    array([1., 2.], dtype=float32)
    """
    del name
    tensor = _tensor(tensor)
    _check(tensor, message)

    @custom_gradient
    def checked(x):
        def grad(upstream):
            _check(
                upstream,
                message,
                "Not a number (NaN) or infinity (Inf) values detected in gradient. ",
            )
            return upstream

        return _core.identity(x), grad

    return checked(tensor)


def assert_all_finite(x, message, name=None):
    """Returns ``x`` unchanged if it holds no NaN or Inf; raises otherwise (``check_numerics``).

    Args:
        x: A floating tensor.
        message: A string included in the error message.
        name: Ignored (TensorFlow's op name).

    Returns:
        ``x``.

    Raises:
        InvalidArgumentError: if ``x`` holds a NaN or an Inf.

    Gradient: the upstream gradient, checked the same way.

    >>> import ferrotape as ft
    >>> try:
    ...     ft.debugging.assert_all_finite(ft.constant([1.0, float("nan")]), "x")
    ... except ft.errors.InvalidArgumentError:
    ...     print("raised")
    raised
    """
    return check_numerics(x, message, name=name)


__all__ = [
    "assert_all_finite",
    "assert_equal",
    "assert_greater",
    "assert_greater_equal",
    "assert_less",
    "assert_less_equal",
    "assert_near",
    "assert_negative",
    "assert_non_negative",
    "assert_non_positive",
    "assert_none_equal",
    "assert_positive",
    "assert_rank",
    "assert_rank_at_least",
    "assert_rank_in",
    "assert_scalar",
    "assert_shapes",
    "assert_type",
    "check_numerics",
    # dtype and iterable checks, switches (_debugging_types.py)
    "Assert",
    "assert_integer",
    "assert_proper_iterable",
    "assert_same_float_dtype",
    "disable_check_numerics",
    "disable_traceback_filtering",
    "enable_check_numerics",
    "enable_traceback_filtering",
    "get_log_device_placement",
    "is_numeric_tensor",
    "is_traceback_filtering_enabled",
    "set_log_device_placement",
]
