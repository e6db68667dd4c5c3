"""TensorFlow's top-level framework utilities: ``name_scope`` and ``get_current_name_scope``,
``ensure_shape``, ``tuple``, ``get_logger``, ``timestamp``, ``py_function`` and
``numpy_function``, and ``convert_to_tensor`` with ``register_tensor_conversion_function``'s
registry.

ferrotape runs every op eagerly and names nothing, so a name scope only keeps the scope path
that ``get_current_name_scope`` (and Keras) read, per thread, as TensorFlow's eager context does.
"""

import builtins
import logging
import threading
import time

import numpy as np

from . import _core
from .dtypes import as_dtype
from .errors import InvalidArgumentError
from .polymorphic_function import host_computed
from .tensor_shape import TensorShape

_scopes = threading.local()


def get_current_name_scope():
    """The current name scope path, ``"outer/inner"`` (``""`` outside every scope).

    Returns:
        A string, without a trailing ``/``.

    >>> import ferrotape as ft
    >>> with ft.name_scope("outer"):
    ...     with ft.name_scope("inner"):
    ...         ft.get_current_name_scope()
    'outer/inner'
    """
    return getattr(_scopes, "path", "")


class name_scope:  # noqa: N801 - TensorFlow's name
    """A context manager that opens the name scope ``name`` inside the current one.

    Entering gives the full scope path with a trailing ``/`` (``"outer/inner/"``); a name that
    ends in ``/`` is taken as a full path instead, and ``""`` returns to the top. ferrotape's ops
    carry no names, so the scope only changes what ``get_current_name_scope`` returns.

    >>> import ferrotape as ft
    >>> with ft.name_scope("block") as scope:
    ...     scope
    'block/'
    """

    def __init__(self, name):
        """A scope named ``name``, opened on entering.

        Args:
            name: The scope's name (a string).

        Raises:
            ValueError: if ``name`` is not a string.
        """
        if not isinstance(name, str):
            raise ValueError(f"name for name_scope must be a string, received {name!r}")
        self._name = name
        self._saved = []

    @property
    def name(self):
        """The name the scope was made with."""
        return self._name

    def __enter__(self):
        outer = get_current_name_scope()
        if not self._name or self._name.endswith("/"):
            path = self._name.rstrip("/")
        else:
            path = f"{outer}/{self._name}" if outer else self._name
        self._saved.append(outer)
        _scopes.path = path
        return f"{path}/" if path else ""

    def __exit__(self, *exc):
        _scopes.path = self._saved.pop()
        return False


class init_scope:  # noqa: N801 - TensorFlow's name
    """TensorFlow's ``tf.init_scope``: inside a function ``ft.function`` traces, what runs in
    the scope runs once, while tracing, and is not part of the trace (creating a variable
    there, as TensorFlow code does, is allowed on any trace). A tensor made in the scope and
    used after it makes the function run eagerly (it is not a value a replay can make).
    Outside a trace it changes nothing.

    >>> import ferrotape as ft
    >>> @ft.function
    ... def f(x):
    ...     with ft.init_scope():
    ...         print("runs once")
    ...     return x + 1
    >>> f(ft.constant(1.0)).numpy(), f(ft.constant(2.0)).numpy()
    runs once
    (np.float32(2.0), np.float32(3.0))
    """

    def __enter__(self):
        self._paused = _core.is_tracing()
        if self._paused:
            _core.trace_pause()
        return None

    def __exit__(self, *exc):
        if self._paused:
            _core.trace_resume()
        return False


def ensure_shape(x, shape, name=None):
    """``x`` unchanged, after checking that its shape is compatible with ``shape``.

    Args:
        x: A tensor.
        shape: A ``TensorShape`` or list of dims, ``None`` for a dim that may be anything
            (``None`` itself: any shape).
        name: Ignored (TensorFlow's op name).

    Returns:
        ``x``.

    Raises:
        InvalidArgumentError: if the shapes are incompatible.

    Gradient: the upstream gradient unchanged.

    >>> import ferrotape as ft
    >>> ft.ensure_shape(ft.zeros([2, 3]), [None, 3]).shape
    TensorShape([2, 3])
    """
    del name
    x = x if _core.is_tensor(x) else _core.convert_to_tensor(x)
    if shape is None:  # an unknown rank: anything is compatible
        return x
    expected = list(TensorShape(shape))
    if len(expected) != x.ndim or any(
        e is not None and e != d for e, d in zip(expected, x.shape, strict=True)
    ):
        raise InvalidArgumentError(
            f"ensure_shape: Shape of tensor input {list(x.shape)} is not compatible with "
            f"expected shape {expected}."
        )
    return x


def tuple(tensors, name=None, control_inputs=None):  # noqa: A001 - TensorFlow's name
    """The tensors, as a list, once all of them (and ``control_inputs``) are computed: in
    ferrotape, which runs ops as they are called, they already are.

    Args:
        tensors: A list of tensors (``None`` entries stay ``None``).
        name: Ignored (TensorFlow's op name).
        control_inputs: Ops to run first; already run.

    Returns:
        A list of the same tensors.

    >>> import ferrotape as ft
    >>> [t.numpy() for t in ft.tuple([ft.constant(1), ft.constant(2)])]
    [np.int32(1), np.int32(2)]
    """
    del name, control_inputs
    return list(tensors)


def get_logger():
    """The ``logging`` logger ferrotape writes its messages to (``"ferrotape"``).

    Returns:
        A ``logging.Logger``; its level is WARNING unless set, as TensorFlow's.

    >>> import ferrotape as ft
    >>> ft.get_logger().name
    'ferrotape'
    """
    logger = logging.getLogger("ferrotape")
    if logger.level == logging.NOTSET:
        logger.setLevel(logging.WARNING)
    return logger


def timestamp(name=None):
    """The current time in seconds since the Unix epoch, as a float64 scalar tensor (inside a
    traced function, the time of each call: a host computation of the trace).

    Args:
        name: Ignored (TensorFlow's op name).

    Returns:
        A float64 scalar tensor.

    >>> import ferrotape as ft
    >>> float(ft.timestamp()) > 1.6e9
    True
    """
    del name
    return host_computed(lambda: [_core.constant(np.float64(time.time()))], [])[0]


def _as_list(outputs, Tout):  # noqa: N803 - TensorFlow's argument name
    """``_outputs``'s result as a list of tensors (empty for ``Tout=None``)."""
    if Tout is None:
        return []
    return list(outputs) if isinstance(Tout, (list, builtins.tuple)) else [outputs]


def _from_list(results, Tout):  # noqa: N803 - TensorFlow's argument name
    """The inverse of ``_as_list``."""
    if Tout is None:
        return None
    return list(results) if isinstance(Tout, (list, builtins.tuple)) else results[0]


def _outputs(op, result, Tout, convert):  # noqa: N803 - TensorFlow's argument name
    """``result`` as TensorFlow returns it for ``Tout``: a list for a list, else one tensor."""
    if Tout is None:
        return None
    many = isinstance(Tout, (list, builtins.tuple))
    values = list(result) if many else [result]
    if len(values) != (len(Tout) if many else 1):
        raise InvalidArgumentError(
            f"{op}: func returned {len(values)} values, Tout expects {len(Tout) if many else 1}"
        )
    kinds = list(Tout) if many else [Tout]
    out = [convert(v, dtype) for v, dtype in zip(values, kinds, strict=True)]
    return out if many else out[0]


def py_function(func, inp, Tout, name=None):  # noqa: N803 - TensorFlow's argument name
    """Calls the Python function ``func`` on the tensors ``inp`` and returns its results as
    tensors of the dtypes ``Tout``.

    ``func`` runs eagerly on tensors (as it does in TensorFlow), so a tape records its ops and
    the gradient flows through it. Inside a function ``ft.function`` traces, ``func`` runs on
    every call with that call's tensors, as TensorFlow's op does; only when a tape records
    inside the function are ``func``'s ops traced instead, for the tape to see them.

    Args:
        func: A Python function taking ``len(inp)`` tensors.
        inp: A list of tensors (or values ``convert_to_tensor`` accepts).
        Tout: One dtype (one result) or a list of dtypes; ``None`` when ``func`` returns nothing.
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor, a list of tensors (for a list ``Tout``), or ``None``.

    Raises:
        InvalidArgumentError: if a result is a tensor of another dtype than ``Tout`` asks, or
            the number of results differs.

    >>> import ferrotape as ft
    >>> ft.py_function(lambda x: x * 2, [ft.constant(2.0)], ft.float32).numpy()
    np.float32(4.0)
    """
    del name

    def convert(value, dtype):
        if _core.is_tensor(value):
            if value.dtype != as_dtype(dtype):
                raise InvalidArgumentError(
                    f"py_function: func returned a {value.dtype.name} tensor where Tout asks "
                    f"for {dtype}"
                )
            return value
        return _core.convert_to_tensor(value, dtype=dtype)

    args = [_core.convert_to_tensor(x) for x in inp]
    if _core.is_tracing() and not _core.tape_is_recording():
        # Inside ft.function, func runs on every call, as TensorFlow's op does (a tape
        # recording inside the function needs func's ops on it: then they are traced).
        results = host_computed(
            lambda *values: _as_list(_outputs("py_function", func(*values), Tout, convert), Tout),
            args,
        )
        return _from_list(results, Tout)
    return _outputs("py_function", func(*args), Tout, convert)


def numpy_function(func, inp, Tout, stateful=True, name=None):  # noqa: N803
    """Calls the Python function ``func`` on the values of ``inp`` as numpy arrays and returns
    its results as tensors.

    Args:
        func: A Python function taking ``len(inp)`` numpy arrays and returning arrays.
        inp: A list of tensors (or values ``convert_to_tensor`` accepts).
        Tout: One dtype (one result) or a list of dtypes; ``None`` when ``func`` returns nothing.
        stateful: Accepted for TensorFlow's signature (ferrotape never prunes calls).
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor, a list of tensors (for a list ``Tout``), or ``None``. A numpy result keeps its
        own dtype, as in eager TensorFlow; a Python number becomes ``Tout``.

    Not differentiable: the result is cut from the tape (TensorFlow has no gradient for it).
    Inside a function ``ft.function`` traces, ``func`` runs on every call with that call's
    values; a result whose shape or dtype differs from the traced one is an error.

    >>> import ferrotape as ft
    >>> ft.numpy_function(lambda x: x * 2, [ft.constant(2.0)], ft.float32).numpy()
    np.float32(4.0)
    """
    del stateful, name

    def convert(value, dtype):
        if isinstance(value, (np.ndarray, np.generic)):
            return _core.constant(value)
        return _core.convert_to_tensor(value, dtype=dtype)

    def call(*tensors):
        values = func(*[t.numpy() for t in tensors])
        return _as_list(_outputs("numpy_function", values, Tout, convert), Tout)

    # Inside ft.function, func runs on every call with that call's values.
    results = host_computed(call, [_core.convert_to_tensor(x) for x in inp])
    return _from_list(results, Tout)


# priority -> [(base_type, conversion_func)], as registered; lower priorities are tried first.
_CONVERSIONS = {}


def register_tensor_conversion_function(base_type, conversion_func, priority=100):
    """Registers ``conversion_func`` to turn objects of ``base_type`` into tensors in
    ``ft.convert_to_tensor``.

    ``conversion_func(value, dtype=None, name=None, as_ref=False)`` returns a tensor (of
    ``dtype`` when one is asked for), or ``NotImplemented`` to pass the value to the next
    function. Functions of lower ``priority`` are tried first, then in registration order.
    Tensors and variables convert as themselves; ferrotape's ops convert their arguments
    natively, so only ``ft.convert_to_tensor`` consults the registry.

    Args:
        base_type: A type or a tuple of types (subclasses match too).
        conversion_func: The function described above.
        priority: An int; lower runs earlier (default 100).

    Raises:
        TypeError: if ``base_type`` is not a type or tuple of types, is a Python number or a
            numpy type (those convert natively), or ``conversion_func`` is not callable.

    >>> import ferrotape as ft
    >>> class Meters:
    ...     def __init__(self, value):
    ...         self.value = value
    >>> ft.register_tensor_conversion_function(
    ...     Meters, lambda m, dtype=None, name=None, as_ref=False: ft.constant(m.value, dtype))
    >>> ft.convert_to_tensor(Meters(3.0)).numpy()
    np.float32(3.0)
    """
    base_types = base_type if isinstance(base_type, builtins.tuple) else (base_type,)
    if any(not isinstance(t, type) for t in base_types):
        raise TypeError(
            f"Argument `base_type` must be a type or a tuple of types. Obtained: {base_type}"
        )
    if any(issubclass(t, (int, float, np.generic, np.ndarray)) for t in base_types):
        raise TypeError(
            "Cannot register conversions for Python numeric types and NumPy scalars and arrays."
        )
    if not callable(conversion_func):
        raise TypeError(f"Argument `conversion_func` must be callable. Received {conversion_func}.")
    _CONVERSIONS.setdefault(priority, []).append((base_type, conversion_func))


def _check_result(func, base_type, result, dtype):
    if result is NotImplemented:
        return
    if not isinstance(result, _core.Tensor):
        raise RuntimeError(
            f"Conversion function {func!r} for type {base_type} returned non-Tensor: {result!r}"
        )
    if dtype is not None and result.dtype != dtype:
        raise RuntimeError(
            f"Conversion function {func!r} for type {base_type} returned incompatible dtype: "
            f"requested = {dtype.name}, actual = {result.dtype.name}"
        )


def _registered(value, dtype, dtype_hint, name):
    """The first registered conversion of ``value`` that does not decline, or None."""
    for priority in sorted(_CONVERSIONS):
        for base_type, func in _CONVERSIONS[priority]:
            if not isinstance(value, base_type):
                continue
            result = None
            if dtype is None and dtype_hint is not None:
                # The hint first; a function that cannot honour it is asked again without.
                try:
                    result = func(value, dtype=dtype_hint, name=name, as_ref=False)
                except (TypeError, ValueError):
                    result = None
                else:
                    _check_result(func, base_type, result, dtype_hint)
            if result is None:
                result = func(value, dtype=dtype, name=name, as_ref=False)
            if result is NotImplemented:
                continue
            _check_result(func, base_type, result, dtype)
            return result
    return None


def convert_to_tensor(value, dtype=None, dtype_hint=None, name=None):
    """``value`` as a tensor: a tensor or variable passes through, an object of a type given
    to ``register_tensor_conversion_function`` goes through its function, and Python and numpy
    values are converted with TensorFlow's dtype rules (or to ``dtype``, trying ``dtype_hint``
    first).

    Args:
        value: A tensor, variable, nested list, number, numpy array or registered object.
        dtype: The dtype required (converting to it).
        dtype_hint: A dtype tried first when ``dtype`` is None; ignored if the conversion fails.
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor.

    Raises:
        TypeError: for a value of a type that cannot be converted.
        RuntimeError: if a registered function returns a non-tensor or another dtype than
            ``dtype``.

    >>> import ferrotape as ft
    >>> ft.convert_to_tensor([1, 2]).dtype
    tf.int32
    >>> ft.convert_to_tensor(3, dtype_hint=ft.float32).dtype
    tf.float32
    """
    if _CONVERSIONS and not isinstance(value, (_core.Tensor, _core.Variable)):
        dtype = None if dtype is None else as_dtype(dtype)
        dtype_hint = None if dtype_hint is None else as_dtype(dtype_hint)
        result = _registered(value, dtype, dtype_hint, name)
        if result is not None:
            return result
    return _core.convert_to_tensor(value, dtype=dtype, dtype_hint=dtype_hint, name=name)
