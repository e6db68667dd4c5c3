"""Loops over the first axis of tensors, run eagerly: ``map_fn``, ``scan``, ``foldl``,
``foldr`` and ``vectorized_map``.

``elems`` may be a tensor or a nest of tensors with equal first dimensions; step ``i`` sees the
nest of their ``i``-th slices (taken with one ``unstack`` each). Step results are joined with
``stack``, whose derivative splits the upstream gradient back to the steps, and every op inside
``fn`` is recorded by the active tapes, so gradients of any order flow through.

``map_fn`` and ``scan`` check each step's result as TensorFlow's TensorArrays do: the dtype must
be the declared one (InvalidArgumentError) and, with ``infer_shape``, the shape must stay the
first step's (ValueError). ``foldl``/``foldr`` only check the structure, as eager TensorFlow does.
``vectorized_map`` maps ``fn`` over the examples one by one and stacks the results: the same
values as TensorFlow's vectorised (pfor) program, without its speed.
"""

from . import _core, nest
from .errors import InvalidArgumentError, OutOfRangeError
from .tensor_spec import TensorSpec

_convert = _core.convert_to_tensor


def _elems_flat(elems, op):
    """The leaves of ``elems`` as tensors of rank >= 1 with one first dimension, and that n."""
    flat = [_convert(e) for e in nest.flatten_for(elems, nest.SEQUENCES, op)]
    if not flat:
        raise ValueError(
            f"{op}: elems must be a Tensor or (possibly nested) sequence of Tensors. Got "
            f"{elems!r}, which does not contain any Tensors."
        )
    for e in flat:
        if len(e.shape) < 1:
            raise ValueError(f"{op}: elements in elems must be 1+ dimensional Tensors, not scalars")
    n = flat[0].shape[0]
    for e in flat[1:]:
        if e.shape[0] != n:
            raise ValueError(
                f"{op}: all elems must have the same first dimension: dimensions {n} and "
                f"{e.shape[0]} are not compatible"
            )
    return flat, n


def _slices(flat):
    return [_core.unstack(e) for e in flat]


def _fmt(shape):
    return tuple.__repr__(tuple(shape))


class _Column:
    """One output leaf: its dtype, the shape each step must have (None: any), the steps."""

    def __init__(self, op, dtype, shape, infer_shape):
        self.op, self.dtype, self.shape, self.infer = op, dtype, shape, infer_shape
        self.steps = {}

    def write(self, index, value):
        tensor = _convert(value, dtype_hint=self.dtype)
        if tensor.dtype != self.dtype:
            raise InvalidArgumentError(
                f"{self.op}: fn returned {tensor.dtype!r} where {self.dtype!r} was expected "
                f"(the output dtype is the elems' dtype unless fn_output_signature says otherwise)"
            )
        shape = tuple(tensor.shape)
        if self.shape is not None and (
            len(shape) != len(self.shape)
            or any(e is not None and e != s for s, e in zip(shape, self.shape, strict=True))
        ):
            raise ValueError(
                f"{self.op}: incompatible shape for value {_fmt(shape)}, expected "
                f"{_fmt(self.shape)} (every step's result must have one shape)"
            )
        if self.shape is None and self.infer:
            self.shape = shape
        self.steps[index] = tensor

    def stacked(self, n):
        if n == 0:
            known = self.shape is not None and None not in self.shape
            return _core.zeros([0, *(self.shape if known else ())], dtype=self.dtype)
        return _core.stack([self.steps[i] for i in range(n)])


def _spec_of(signature):
    if isinstance(signature, TensorSpec):
        shape = None if signature.shape is None else tuple(signature.shape)
        return signature.dtype, shape
    return _core.DType(signature), None


def map_fn(
    fn,
    elems,
    dtype=None,
    parallel_iterations=None,
    back_prop=True,
    swap_memory=False,
    infer_shape=True,
    name=None,
    fn_output_signature=None,
):
    """Applies ``fn`` to each slice of ``elems`` along axis 0 and stacks the results.

    Args:
        fn: A callable of one slice (a tensor, or a nest like ``elems``).
        elems: A tensor or a nest of tensors, all with the same first dimension ``n``.
        dtype: The deprecated spelling of ``fn_output_signature``.
        parallel_iterations: Ignored eagerly (TensorFlow ignores it too).
        back_prop: If false, the results are wrapped in ``stop_gradient``.
        swap_memory: Ignored (a GPU memory option).
        infer_shape: If true, every step's result must have the first step's shape.
        name: Ignored (TensorFlow's op name).
        fn_output_signature: ``fn``'s output: a dtype, a ``TensorSpec`` or a nest of them.
            Without it, ``fn`` must return ``elems``' structure and dtypes.

    Returns:
        A tensor (or nest, in the output structure) whose slice ``i`` is ``fn(elems[i])``.
        With ``n == 0``, ``fn`` is not called and each result has shape ``[0]`` (or
        ``[0] + spec.shape`` for a ``TensorSpec`` with a known shape), as in TensorFlow.

    Raises:
        TypeError: if ``fn`` is not callable or returns another sequence type.
        ValueError: for no tensors, scalars, unequal first dimensions, another structure, or
            a step whose shape differs.
        InvalidArgumentError: if a step's dtype is not the declared one.

    Gradient: that of each ``fn`` call, through ``unstack`` and ``stack``.

    >>> import ferrotape as ft
    >>> ft.map_fn(lambda r: ft.reduce_sum(r), ft.constant([[1.0, 2.0], [3.0, 4.0]])).numpy()
    array([3., 7.], dtype=float32)
    >>> ft.map_fn(lambda p: p[0] * p[1], (ft.constant([1, 2]), ft.constant([3, 4])),
    ...           fn_output_signature=ft.int32).numpy()
    array([3, 8], dtype=int32)
    """
    del parallel_iterations, swap_memory, name
    if fn_output_signature is None:
        fn_output_signature = dtype
    if not callable(fn):
        raise TypeError(f"map_fn: fn must be callable, received {type(fn).__name__}")
    flat, n = _elems_flat(elems, "map_fn")
    if fn_output_signature is None:
        structure, specs = elems, [(e.dtype, None) for e in flat]
    else:
        structure = fn_output_signature
        specs = [_spec_of(s) for s in nest.flatten(fn_output_signature)]
    columns = [_Column("map_fn", d, s, infer_shape) for d, s in specs]
    slices = _slices(flat)
    for i in range(n):
        value = fn(nest.pack_for(elems, [s[i] for s in slices], nest.SEQUENCES, "map_fn"))
        nest.assert_same_for(structure, value, True, "map_fn (fn's result vs the signature)")
        for column, leaf in zip(columns, nest.flatten(value), strict=True):
            column.write(i, leaf)
    results = [c.stacked(n) for c in columns]
    if not back_prop:
        results = [_core.stop_gradient(r) for r in results]
    return nest.pack_sequence_as(structure, results)


def scan(
    fn,
    elems,
    initializer=None,
    parallel_iterations=10,
    back_prop=True,
    swap_memory=False,
    infer_shape=True,
    reverse=False,
    name=None,
):
    """Accumulates ``a = fn(a, elems[i])`` over axis 0 and stacks every ``a``.

    Args:
        fn: A callable ``fn(accumulator, slice)`` returning the next accumulator.
        elems: A tensor or a nest of tensors, all with the same first dimension ``n``.
        initializer: The first accumulator (a tensor, number or nest). Without it, the first
            slice (the last with ``reverse``) is the first accumulator and its own output.
        parallel_iterations: Ignored eagerly.
        back_prop: If false, the results are wrapped in ``stop_gradient``.
        swap_memory: Ignored (a GPU memory option).
        infer_shape: If true, every accumulator must keep the first one's shape.
        reverse: If true, scan from the last slice to the first.
        name: Ignored (TensorFlow's op name).

    Returns:
        The stacked accumulators, in ``initializer``'s (else ``elems``') structure.

    Raises:
        TypeError: if ``fn`` is not callable or returns another sequence type.
        ValueError: as ``map_fn``, and for an accumulator whose shape changes.
        InvalidArgumentError: if an accumulator changes dtype.
        OutOfRangeError: if ``n == 0`` and there is no ``initializer``.

    Gradient: that of the chained ``fn`` calls.

    >>> import ferrotape as ft
    >>> ft.scan(lambda a, x: a + x, ft.constant([1, 2, 3, 4])).numpy()
    array([ 1,  3,  6, 10], dtype=int32)
    >>> ft.scan(lambda a, x: a * x, ft.constant([1.0, 2.0, 3.0]), initializer=2.0).numpy()
    array([ 2.,  4., 12.], dtype=float32)
    """
    del parallel_iterations, swap_memory, name
    if not callable(fn):
        raise TypeError(f"scan: fn must be callable, received {type(fn).__name__}")
    flat, n = _elems_flat(elems, "scan")
    slices = _slices(flat)
    order = list(range(n - 1, -1, -1) if reverse else range(n))
    structure = elems if initializer is None else initializer
    if initializer is None:
        if n == 0:
            raise OutOfRangeError("scan: elems has 0 elements and there is no initializer")
        first = order.pop(0)
        acc = [s[first] for s in slices]
    else:
        acc = [_convert(x) for x in nest.flatten(initializer)]
    columns = [_Column("scan", a.dtype, tuple(a.shape) if infer_shape else None, True) for a in acc]
    if initializer is None:
        for column, a in zip(columns, acc, strict=True):
            column.write(first, a)
    for i in order:
        x = nest.pack_for(elems, [s[i] for s in slices], nest.SEQUENCES, "scan")
        out = fn(nest.pack_sequence_as(structure, acc), x)
        nest.assert_same_for(structure, out, True, "scan (fn's result vs the accumulator)")
        for column, leaf in zip(columns, nest.flatten(out), strict=True):
            column.write(i, leaf)
        acc = [columns[k].steps[i] for k in range(len(columns))]
    results = [c.stacked(n) for c in columns]
    if not back_prop:
        results = [_core.stop_gradient(r) for r in results]
    return nest.pack_sequence_as(structure, results)


def _fold(op, fn, elems, initializer, back_prop, reverse):
    if not callable(fn):
        raise TypeError(f"{op}: fn must be callable, received {type(fn).__name__}")
    flat, n = _elems_flat(elems, op)
    slices = _slices(flat)
    order = list(range(n - 1, -1, -1) if reverse else range(n))

    def element(i):
        return nest.pack_for(elems, [s[i] for s in slices], nest.SEQUENCES, op)

    if initializer is None:
        if n == 0:
            raise OutOfRangeError(f"{op}: elems has 0 elements and there is no initializer")
        acc = element(order.pop(0))
    else:
        acc = initializer
    for i in order:
        out = fn(acc, element(i))
        nest.assert_same_for(acc, out, True, f"{op} (fn's result vs the accumulator)")
        acc = out
    result = nest.map_structure(_convert, acc)
    return result if back_prop else nest.map_structure(_core.stop_gradient, result)


def foldl(
    fn,
    elems,
    initializer=None,
    parallel_iterations=10,
    back_prop=True,
    swap_memory=False,
    name=None,
):
    """Folds ``fn`` over the slices of ``elems`` from first to last: ``a = fn(a, elems[i])``.

    Args:
        fn: A callable ``fn(accumulator, slice)`` returning the next accumulator (of the same
            structure; its dtype and shape may change, as in eager TensorFlow).
        elems: A tensor or a nest of tensors, all with the same first dimension ``n``.
        initializer: The first accumulator; without it, the first slice.
        parallel_iterations: Ignored eagerly.
        back_prop: If false, the result is wrapped in ``stop_gradient``.
        swap_memory: Ignored (a GPU memory option).
        name: Ignored (TensorFlow's op name).

    Returns:
        The last accumulator, as tensors.

    Raises:
        TypeError: if ``fn`` is not callable.
        ValueError: for no tensors, scalars, unequal first dimensions or another structure.
        OutOfRangeError: if ``n == 0`` and there is no ``initializer``.

    >>> import ferrotape as ft
    >>> ft.foldl(lambda a, x: a * 10 + x, ft.constant([1, 2, 3])).numpy()
    np.int32(123)
    """
    del parallel_iterations, swap_memory, name
    return _fold("foldl", fn, elems, initializer, back_prop, reverse=False)


def foldr(
    fn,
    elems,
    initializer=None,
    parallel_iterations=10,
    back_prop=True,
    swap_memory=False,
    name=None,
):
    """Folds ``fn`` over the slices of ``elems`` from last to first: ``a = fn(a, elems[i])``.

    Args:
        fn: A callable ``fn(accumulator, slice)`` returning the next accumulator.
        elems: A tensor or a nest of tensors, all with the same first dimension ``n``.
        initializer: The first accumulator; without it, the last slice.
        parallel_iterations: Ignored eagerly.
        back_prop: If false, the result is wrapped in ``stop_gradient``.
        swap_memory: Ignored (a GPU memory option).
        name: Ignored (TensorFlow's op name).

    Returns:
        The last accumulator, as tensors.

    Raises:
        TypeError: if ``fn`` is not callable.
        ValueError: for no tensors, scalars, unequal first dimensions or another structure.
        OutOfRangeError: if ``n == 0`` and there is no ``initializer``.

    >>> import ferrotape as ft
    >>> ft.foldr(lambda a, x: a * 10 + x, ft.constant([1, 2, 3])).numpy()
    np.int32(321)
    """
    del parallel_iterations, swap_memory, name
    return _fold("foldr", fn, elems, initializer, back_prop, reverse=True)


def vectorized_map(fn, elems, fallback_to_while_loop=True, warn=True):
    """``fn`` applied to each slice of ``elems`` along axis 0, results stacked.

    TensorFlow vectorises ``fn`` (pfor); ferrotape calls it once per example and stacks the
    results, which gives the same values. With ``n == 0`` it calls ``fn`` once on zeros of one
    example's shape to learn the output shapes (TensorFlow traces ``fn`` there too).

    Args:
        fn: A callable of one example (a tensor, or a nest like ``elems``); its result may be
            any nest of tensors.
        elems: A tensor or a nest of tensors, all with the same first dimension ``n``.
        fallback_to_while_loop: Accepted for TensorFlow's API (ferrotape always loops).
        warn: Accepted for TensorFlow's API.

    Returns:
        ``fn``'s result structure, each leaf stacked over the ``n`` examples.

    Raises:
        ValueError: for no tensors or scalar elems, or results of different structures.
        InvalidArgumentError: if the first dimensions differ.

    >>> import ferrotape as ft
    >>> ft.vectorized_map(lambda r: r * 2, ft.constant([[1, 2], [3, 4]])).numpy()
    array([[2, 4],
           [6, 8]], dtype=int32)
    """
    del fallback_to_while_loop, warn
    try:
        flat, n = _elems_flat(elems, "vectorized_map")
    except ValueError as error:
        if "first dimension" in str(error):
            raise InvalidArgumentError(str(error)) from None
        raise
    if n == 0:
        probe = [_core.zeros(list(e.shape[1:]), dtype=e.dtype) for e in flat]
        out = fn(nest.pack_for(elems, probe, nest.SEQUENCES, "vectorized_map"))
        return nest.map_structure(
            lambda leaf: _core.zeros([0, *_convert(leaf).shape], dtype=_convert(leaf).dtype), out
        )
    slices = _slices(flat)
    outs = [
        fn(nest.pack_for(elems, [s[i] for s in slices], nest.SEQUENCES, "vectorized_map"))
        for i in range(n)
    ]
    for out in outs[1:]:
        nest.assert_same_for(outs[0], out, True, "vectorized_map (results of two examples)")
    columns = zip(*[[_convert(x) for x in nest.flatten(out)] for out in outs], strict=True)
    return nest.pack_sequence_as(outs[0], [_core.stack(list(c)) for c in columns])


__all__ = ["foldl", "foldr", "map_fn", "scan", "vectorized_map"]
