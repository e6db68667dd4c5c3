"""``ft.debugging``'s dtype and iterable checks (``assert_integer``, ``assert_same_float_dtype``,
``is_numeric_tensor``, ``assert_proper_iterable``) and its global switches:
``enable_traceback_filtering`` (acted on, in ``_public_api.py``), and ``enable_check_numerics`` and
``set_log_device_placement``, which ferrotape records but does not act on: it has no per-op hook
to check or log from (see each function).
"""

import numpy as np

from . import _core, _public_api
from .dtypes import as_dtype, float32

_switches = {"check_numerics": False, "log_device_placement": False}


def _tensor(value):
    return value if _core.is_tensor(value) else _core.convert_to_tensor(value)


def assert_integer(x, message=None, name=None):
    """Checks that ``x`` has an integer dtype.

    Args:
        x: A tensor (or array-like).
        message: A string prefixed to the error message.
        name: Ignored (TensorFlow's op name).

    Returns:
        ``None``.

    Raises:
        TypeError: if ``x``'s dtype is not an integer one.

    >>> import ferrotape as ft
    >>> ft.debugging.assert_integer(ft.constant([1, 2]))
    """
    del name
    dtype = _tensor(x).dtype
    if not dtype.is_integer:
        prefix = f"{message}.  " if message else ""
        raise TypeError(
            f'{prefix}assert_integer: Expected "x" to be integer type.  Found: tensor of dtype '
            f"{dtype}"
        )


def assert_same_float_dtype(tensors=None, dtype=None):
    """Checks that ``tensors`` (and ``dtype``, if given) share one floating dtype, and
    returns it.

    Args:
        tensors: A list of tensors, or ``None``.
        dtype: The expected dtype, or ``None`` (that of the first tensor).

    Returns:
        The common dtype: float32 when there are neither tensors nor ``dtype``.

    Raises:
        ValueError: if a dtype differs or is not floating.

    >>> import ferrotape as ft
    >>> ft.debugging.assert_same_float_dtype([ft.constant(1.0), ft.constant(2.0)])
    tf.float32
    """
    expected = None if dtype is None else as_dtype(dtype)
    for t in tensors or []:
        actual = _tensor(t).dtype
        if expected is None:
            expected = actual
        elif actual != expected:
            raise ValueError(
                f"assert_same_float_dtype: {t!r}, type={actual}, must be of the same type "
                f"({expected})."
            )
    if expected is None:
        return float32
    if not expected.is_floating:
        raise ValueError(f"assert_same_float_dtype: Expected floating point type, got {expected}.")
    return expected


def is_numeric_tensor(tensor):
    """Whether ``tensor`` is a tensor of a numeric dtype (not bool); a Python number or numpy
    array is not a tensor, so gives ``False``.

    Args:
        tensor: Anything.

    Returns:
        A bool.

    >>> import ferrotape as ft
    >>> ft.debugging.is_numeric_tensor(ft.constant(1.0)), ft.debugging.is_numeric_tensor(1.0)
    (True, False)
    """
    return bool(_core.is_tensor(tensor) and not tensor.dtype.is_bool)


def assert_proper_iterable(values):
    """Checks that ``values`` is an iterable of values, not one value that happens to be
    iterable (a tensor, numpy array, ``str`` or ``bytes``).

    Args:
        values: The object to check.

    Returns:
        ``None``.

    Raises:
        TypeError: for one of those single values, or something not iterable.

    >>> import ferrotape as ft
    >>> ft.debugging.assert_proper_iterable([1, 2])
    """
    if isinstance(values, (str, bytes, np.ndarray)) or _core.is_tensor(values):
        raise TypeError(
            f'assert_proper_iterable: Expected argument "values" to be a "proper" iterable.  '
            f"Found: {type(values)}"
        )
    if not hasattr(values, "__iter__"):
        raise TypeError(
            f'assert_proper_iterable: Expected argument "values" to be iterable.  Found: '
            f"{type(values)}"
        )


def enable_check_numerics(stack_height_limit=30, path_length_limit=50):
    """Records that numeric checking is on. TensorFlow then checks every op's output for NaN
    and infinity; ferrotape has no per-op hook, so it does not: call
    ``ft.debugging.check_numerics`` on the tensors to watch.

    Args:
        stack_height_limit: Accepted for TensorFlow's signature.
        path_length_limit: Accepted for TensorFlow's signature.

    Returns:
        ``None``.

    >>> import ferrotape as ft
    >>> ft.debugging.enable_check_numerics()
    >>> ft.debugging.disable_check_numerics()
    """
    del stack_height_limit, path_length_limit
    _switches["check_numerics"] = True


def disable_check_numerics():
    """Records that numeric checking is off (see ``enable_check_numerics``).

    Returns:
        ``None``.

    >>> import ferrotape as ft
    >>> ft.debugging.disable_check_numerics()
    """
    _switches["check_numerics"] = False


def set_log_device_placement(enabled):
    """Records whether to log each op's device. TensorFlow then prints one line per op;
    ferrotape does not log placements (a tensor's ``.device`` says where it lives).

    Args:
        enabled: A bool.

    Returns:
        ``None``.

    >>> import ferrotape as ft
    >>> ft.debugging.set_log_device_placement(False)
    """
    _switches["log_device_placement"] = bool(enabled)


def get_log_device_placement():
    """The flag ``set_log_device_placement`` last set (``False`` at start).

    Returns:
        A bool.

    >>> import ferrotape as ft
    >>> ft.debugging.get_log_device_placement()
    False
    """
    return _switches["log_device_placement"]


def enable_traceback_filtering():
    """Filters tracebacks (the default): an error leaving a public function, a Keras layer or
    ``fit`` shows the caller's frames and the line that raised, not the library's frames in
    between, as in TensorFlow.

    Returns:
        ``None``.

    >>> import ferrotape as ft
    >>> ft.debugging.enable_traceback_filtering()
    """
    _public_api.set_traceback_filtering(True)


def disable_traceback_filtering():
    """Shows every frame in tracebacks again (see ``enable_traceback_filtering``).

    Returns:
        ``None``.
    """
    _public_api.set_traceback_filtering(False)


def is_traceback_filtering_enabled():
    """Whether tracebacks are filtered (``True`` at start, as in TensorFlow).

    Returns:
        A bool.

    >>> import ferrotape as ft
    >>> ft.debugging.is_traceback_filtering_enabled()
    True
    """
    return _public_api.is_traceback_filtering_enabled()
