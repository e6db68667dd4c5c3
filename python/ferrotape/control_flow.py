"""TensorFlow's control flow, run eagerly: ``cond``, ``case``, ``switch_case``, ``while_loop``,
and the graph-era names that eager programs still call (``identity_n``, ``no_op``, ``group``,
``control_dependencies``, ``get_static_value``, ``Assert``). The loops over a tensor's first axis
(``map_fn``, ``scan``, ``foldl``, ``foldr``, ``vectorized_map``) are in ``functional_ops``.

Everything here is plain Python around ferrotape's ops: a branch or loop body runs as ordinary
eager code, so every op inside is recorded by the active tapes and gradients (of any order) flow
through without a derivative of their own. Inside ``ft.function`` each decision (a predicate, a
branch index, a loop condition) is read into Python as a bool or integer, which makes it a guard
of the trace: a later call deciding otherwise runs the trace of its own path (see
``polymorphic_function``).

Where TensorFlow's eager and ``tf.function`` behaviour differ, ``while_loop`` follows
``tf.function`` (which is where real programs run loops): the result has ``loop_vars``'
structure, a body may return a bare tensor for a single loop variable, and a loop variable that
changes dtype (TypeError) or shape beyond its ``shape_invariants`` (ValueError) is an error, as
it is when TensorFlow traces the loop.
"""

import numpy as np

from . import _core, nest
from .errors import InvalidArgumentError
from .tensor_array import TensorArray
from .tensor_shape import TensorShape

_convert = _core.convert_to_tensor


def _loop_var(x):
    """A loop variable as a tensor; a ``TensorArray`` (a Python list of tensors) stays one."""
    return x if isinstance(x, TensorArray) else _convert(x)


def _truth(value, op, what):
    """Python truth of a predicate: a Python value, or a tensor with exactly one element."""
    if isinstance(value, (bool, int, float, np.bool_, np.number)):
        return bool(value)
    array = np.asarray(_convert(value).numpy())
    if array.size != 1:
        raise InvalidArgumentError(
            f"{op}: {what} must be a scalar (one element), received shape {array.shape}"
        )
    return bool(array.reshape(()))


def _unpack_singleton(result):
    return result[0] if isinstance(result, (list, tuple)) and len(result) == 1 else result


def cond(pred, true_fn=None, false_fn=None, name=None):
    """Returns ``true_fn()`` if ``pred`` is true, else ``false_fn()``; only that branch runs.

    Args:
        pred: A scalar (a bool tensor, or any one-element tensor or Python value).
        true_fn: The callable to run when ``pred`` is true.
        false_fn: The callable to run when ``pred`` is false.
        name: Ignored (TensorFlow's op name).

    Returns:
        What the chosen branch returns, unchanged (singleton lists are not unpacked).

    Raises:
        TypeError: if a branch is missing or not callable.
        InvalidArgumentError: (a ValueError) if ``pred`` has more than one element.

    Gradient: that of the branch that ran.

    >>> import ferrotape as ft
    >>> x, y = ft.constant(2), ft.constant(5)
    >>> ft.cond(x < y, lambda: x * 7, lambda: y + 3).numpy()
    np.int32(14)
    """
    del name
    for arg, fn in (("true_fn", true_fn), ("false_fn", false_fn)):
        if fn is None:
            raise TypeError(f"cond(): '{arg}' argument required")
        if not callable(fn):
            raise TypeError(f"cond(): '{arg}' must be callable, received {type(fn).__name__}")
    return true_fn() if _truth(pred, "cond", "pred") else false_fn()


def _case_pairs(pred_fn_pairs, exclusive):
    if not isinstance(pred_fn_pairs, (list, tuple, dict)):
        raise TypeError(
            f"case: 'pred_fn_pairs' must be a list, tuple, or dict. Received: {type(pred_fn_pairs)}"
        )
    if isinstance(pred_fn_pairs, dict):
        if not exclusive:
            raise ValueError(
                "case: unordered dictionaries are not supported for the 'pred_fn_pairs' "
                "argument when exclusive=False (the order of the tests would be arbitrary)"
            )
        pred_fn_pairs = list(pred_fn_pairs.items())
    if not pred_fn_pairs:
        raise ValueError("case: 'pred_fn_pairs' must hold at least one (pred, fn) pair")
    for pair in pred_fn_pairs:
        if not isinstance(pair, tuple) or len(pair) != 2:
            raise TypeError(
                f"case: each entry in 'pred_fn_pairs' must be a 2-tuple. Received {pair}."
            )
        pred, fn = pair
        if not _core.is_tensor(pred):
            raise TypeError(f"case: pred must be a Tensor, got: {pred!r}")
        if pred.dtype != "bool":
            raise TypeError(f"case: pred must be a Tensor of type bool, got {pred.dtype!r}")
        if not callable(fn):
            raise TypeError(f"case: fn for pred {pred!r} must be callable")
    return list(pred_fn_pairs)


def case(pred_fn_pairs, default=None, exclusive=False, strict=False, name="case"):
    """Runs the callable of the first pair whose predicate is true, else ``default``.

    Args:
        pred_fn_pairs: A list of ``(pred, fn)`` pairs: ``pred`` a scalar bool tensor, ``fn`` a
            callable. A dict is accepted only with ``exclusive=True``.
        default: The callable to run when no predicate is true. Without it the last pair's
            callable is the default, and it is an error for every predicate to be false.
        exclusive: If true, at most one predicate may be true (checked, as TensorFlow does,
            over the pairs other than the one taken as the default).
        strict: If false, a singleton list or tuple result is unpacked to its element (except,
            as in TensorFlow, with a single pair and no ``default``).
        name: Ignored (TensorFlow's op name).

    Returns:
        The chosen callable's result.

    Raises:
        TypeError: if the pairs are malformed, a predicate is not a bool tensor, or a
            callable is not callable.
        InvalidArgumentError: if ``exclusive`` and several predicates are true, or no
            predicate is true and there is no ``default``.

    >>> import ferrotape as ft
    >>> x = ft.constant(3)
    >>> ft.case([(x < 0, lambda: -1), (x > 0, lambda: 1)], default=lambda: 0)
    1
    """
    del name
    pairs = _case_pairs(pred_fn_pairs, exclusive)
    if default is not None and not callable(default):
        raise TypeError("case: 'default' must be callable")
    checked = pairs if default is not None else pairs[:-1]
    truths = [_truth(p, "case", "each pred") for p, _ in pairs]
    if exclusive and sum(truths[: len(checked)]) > 1:
        raise InvalidArgumentError(
            f"case: exclusive=True but more than 1 conditions evaluated as True: {truths}"
        )
    chosen = next((fn for (_, fn), t in zip(pairs, truths, strict=True) if t), None)
    if chosen is None:
        if default is None:
            raise InvalidArgumentError(
                f"case: none of the conditions evaluated as True (and there is no default): "
                f"{truths}"
            )
        chosen = default
    result = chosen()
    # TF nests one cond per pair and a non-strict cond unpacks singletons; with one pair and no
    # default no cond is built, so nothing is unpacked.
    if strict or (default is None and len(pairs) == 1):
        return result
    return _unpack_singleton(result)


def _switch_branches(branch_index, branch_fns, default):
    if not _core.is_tensor(branch_index):
        raise TypeError(f"switch_case: 'branch_index' must be a Tensor, got {type(branch_index)}")
    if not branch_index.dtype.is_integer:
        raise TypeError(
            f"switch_case: 'branch_index' must be an integer Tensor, got {branch_index.dtype!r}"
        )
    if not branch_fns:
        raise ValueError("switch_case: must provide at least one item in 'branch_fns'")
    if not isinstance(branch_fns, (list, tuple, dict)):
        raise TypeError("switch_case: 'branch_fns' must be a list, tuple, or dict")
    pairs = list(branch_fns.items()) if isinstance(branch_fns, dict) else list(branch_fns)
    if all(callable(fn) for fn in pairs):
        pairs = list(enumerate(pairs))
    for pair in pairs:
        if not isinstance(pair, tuple) or len(pair) != 2:
            raise TypeError(
                f"switch_case: each entry in 'branch_fns' must be a 2-tuple. Received {pair}."
            )
        key, fn = pair
        if not isinstance(key, int):
            raise TypeError(f"switch_case: key must be a Python `int`, got {type(key)}")
        if not callable(fn):
            raise TypeError(f"switch_case: fn for key {key} must be callable.")
    keys = sorted(k for k, _ in pairs)
    if keys != list(range(len(keys))):
        raise ValueError(
            f"switch_case: branch indices (keys) must form contiguous range of [0 to "
            f"{len(keys)}) but found {{{','.join(map(str, keys))}}}"
        )
    return [fn for _, fn in sorted(pairs, key=lambda p: p[0])] + ([default] if default else [])


def switch_case(branch_index, branch_fns, default=None, name="switch_case"):
    """Runs ``branch_fns[branch_index]()``; an index out of range runs ``default``.

    Args:
        branch_index: A scalar integer tensor.
        branch_fns: A list of callables, a list of ``(int, callable)`` pairs, or a dict from
            int to callable; the keys must be ``0 .. n-1``.
        default: The callable for an out-of-range index; without it the last branch runs.
        name: Ignored (TensorFlow's op name).

    Returns:
        The chosen branch's result.

    Raises:
        TypeError: if ``branch_index`` is not an integer tensor, or a branch is malformed.
        ValueError: if there are no branches or the keys are not ``0 .. n-1``.
        InvalidArgumentError: if ``branch_index`` has more than one element.

    >>> import ferrotape as ft
    >>> ft.switch_case(ft.constant(1), [lambda: "a", lambda: "b"], default=lambda: "z")
    'b'
    """
    del name
    branches = _switch_branches(branch_index, branch_fns, default)
    array = np.asarray(branch_index.numpy())
    if array.size != 1:
        raise InvalidArgumentError(
            f"switch_case: 'branch_index' must be a scalar, received shape {array.shape}"
        )
    index = int(array.reshape(()))
    return branches[index if 0 <= index < len(branches) else -1]()


def _flatten_up_to(structure, values, who):
    """``values`` (e.g. shape invariants, whose TensorShapes are tuples) flattened to the leaves
    of ``structure``."""
    if isinstance(structure, dict):
        if not isinstance(values, dict) or sorted(values) != sorted(structure):
            raise ValueError(f"{who}: shape_invariants must have loop_vars' structure")
        return [v for k in sorted(structure) for v in _flatten_up_to(structure[k], values[k], who)]
    if isinstance(structure, (list, tuple)):
        if not isinstance(values, (list, tuple)) or len(values) != len(structure):
            raise ValueError(f"{who}: shape_invariants must have loop_vars' structure")
        return [
            v for s, x in zip(structure, values, strict=True) for v in _flatten_up_to(s, x, who)
        ]
    return [values]


def _shape_fits(shape, invariant):
    return len(shape) == len(invariant) and all(
        d is None or d == s for s, d in zip(shape, invariant, strict=True)
    )


def _max_iterations(maximum_iterations):
    if maximum_iterations is None:
        return None
    limit = _convert(maximum_iterations)
    if limit.shape != ():
        raise ValueError(
            f"while_loop: 'maximum_iterations' must be a scalar. Received shape: "
            f"{tuple(limit.shape)}"
        )
    if not limit.dtype.is_integer:
        raise TypeError(
            f"while_loop: 'maximum_iterations' must be an integer, received {limit.dtype!r}"
        )
    return int(limit.numpy())


def _check_loop_vars(loop_vars):
    if not isinstance(loop_vars, (list, tuple)):
        raise TypeError(
            f"while_loop: loop_vars must be a list or tuple of loop variables (each a tensor or "
            f"a nest of tensors), received {type(loop_vars).__name__}"
        )
    if not loop_vars:
        raise ValueError("while_loop: 'loop_vars' must be provided (received an empty list)")


def while_loop(
    cond,
    body,
    loop_vars,
    shape_invariants=None,
    parallel_iterations=10,
    back_prop=True,
    swap_memory=False,
    maximum_iterations=None,
    name=None,
):
    """Repeats ``loop_vars = body(*loop_vars)`` while ``cond(*loop_vars)`` is true.

    Args:
        cond: A callable of the loop variables returning a scalar bool.
        body: A callable of the loop variables returning new values of the same structure
            (a bare tensor is accepted when there is one loop variable).
        loop_vars: A list or tuple of loop variables, each a tensor, Python number,
            ``TensorArray`` or a nest (lists, tuples, namedtuples, dicts) of them.
        shape_invariants: Shapes (``TensorShape`` or lists, ``None`` for a dimension that may
            vary) in ``loop_vars``' structure; by default each variable keeps its shape.
        parallel_iterations: Accepted for TensorFlow's API (must be positive); ignored eagerly.
        back_prop: If false, the results are wrapped in ``stop_gradient``.
        swap_memory: Ignored (a GPU memory option).
        maximum_iterations: Stops after this many iterations even if ``cond`` still holds.
        name: Ignored (TensorFlow's op name).

    Returns:
        The final loop variables, as tensors, in ``loop_vars``' structure.

    Raises:
        TypeError: if ``cond``/``body`` is not callable, ``parallel_iterations`` < 1, or a loop
            variable changes dtype.
        ValueError: if ``loop_vars`` is empty, ``body`` returns a different structure, or a
            loop variable's shape leaves its invariant.

    Gradient: that of the unrolled iterations (every op in ``body`` is recorded).

    >>> import ferrotape as ft
    >>> i, total = ft.while_loop(lambda i, s: i < 4, lambda i, s: (i + 1, s + i), (0, 0))
    >>> int(i), int(total)
    (4, 6)
    """
    del swap_memory, name
    if not callable(cond):
        raise TypeError("while_loop: 'cond' must be callable.")
    if not callable(body):
        raise TypeError("while_loop: 'body' must be callable.")
    if parallel_iterations < 1:
        raise TypeError("while_loop: 'parallel_iterations' must be a positive integer.")
    _check_loop_vars(loop_vars)
    limit = _max_iterations(maximum_iterations)
    flat = [_loop_var(x) for x in nest.flatten_for(loop_vars, nest.SEQUENCES, "while_loop")]
    if shape_invariants is None:
        invariants = [None if isinstance(x, TensorArray) else tuple(x.shape) for x in flat]
    else:
        given = _flatten_up_to(loop_vars, shape_invariants, "while_loop")
        invariants = [
            None if isinstance(x, TensorArray) else tuple(TensorShape(s))
            for x, s in zip(flat, given, strict=True)
        ]
    dtypes = [x.dtype for x in flat]
    current = nest.pack_for(loop_vars, flat, nest.SEQUENCES, "while_loop")
    count = 0
    while _truth(cond(*current), "while_loop", "the value cond returns") and (
        limit is None or count < limit
    ):
        out = body(*current)
        if not nest.is_nested(out):
            out = [out]
        nest.assert_same_for(out, loop_vars, False, "while_loop (body's result vs loop_vars)")
        flat = [_loop_var(x) for x in nest.flatten(out)]
        for k, x in enumerate(flat):
            _check_loop_var(k, x, dtypes[k], invariants[k])
        current = nest.pack_for(loop_vars, flat, nest.SEQUENCES, "while_loop")
        count += 1
    if not back_prop:
        current = nest.map_structure(
            lambda x: x if isinstance(x, TensorArray) else _core.stop_gradient(x), current
        )
    return current


def _check_loop_var(k, value, dtype, invariant):
    if (invariant is None) != isinstance(value, TensorArray):
        raise TypeError(
            f"while_loop: loop variable {k} must stay a "
            f"{'TensorArray' if invariant is None else 'tensor'} across iterations, received "
            f"{type(value).__name__}"
        )
    if value.dtype != dtype:
        raise TypeError(
            f"while_loop: loop variable {k} enters the loop with type {dtype!r} but has type "
            f"{value.dtype!r} after an iteration; its type should remain constant"
        )
    if invariant is not None and not _shape_fits(tuple(value.shape), invariant):
        raise ValueError(
            f"while_loop: loop variable {k} enters the loop with shape "
            f"{_fmt_shape(invariant)}, but has shape {_fmt_shape(value.shape)} after an "
            f"iteration. To allow the shape to vary across iterations, use the "
            f"`shape_invariants` argument of tf.while_loop to specify a less-specific shape."
        )


def _fmt_shape(shape):
    return tuple.__repr__(tuple(shape))


# ----------------------------------------------------------------------------- graph-era names


def identity_n(input, name=None):  # noqa: A002 - TensorFlow's argument name
    """Returns a list of tensors equal to the items of ``input`` (``identity`` of each).

    Args:
        input: A list or tuple of tensors (or convertible values); a tensor is iterated over
            its first axis, as in TensorFlow.
        name: Ignored (TensorFlow's op name).

    Returns:
        A list of tensors.

    Gradient: passed through unchanged to each input.

    >>> import ferrotape as ft
    >>> [t.numpy() for t in ft.identity_n([ft.constant(1), 2.0])]
    [np.int32(1), np.float32(2.0)]
    """
    del name
    return [_core.identity(_convert(x)) for x in input]


def no_op(name=None):
    """Does nothing: eagerly there is nothing to group or order.

    Args:
        name: Ignored (TensorFlow's op name).

    Returns:
        None, as eager TensorFlow returns.

    >>> import ferrotape as ft
    >>> ft.no_op() is None
    True
    """
    del name


def group(*inputs, **kwargs):
    """Groups ops so that they run together: eagerly they have already run.

    Args:
        *inputs: Tensors or ops (ignored).
        **kwargs: ``name`` (ignored, as are other keywords when eager, like TensorFlow).

    Returns:
        None, as eager TensorFlow returns.

    >>> import ferrotape as ft
    >>> ft.group(ft.constant(1.0), ft.constant(2.0)) is None
    True
    """
    del inputs, kwargs


class _NullContext:
    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False


def control_dependencies(control_inputs):
    """A context manager ordering ops after ``control_inputs``; eagerly ops already run in order.

    As in eager TensorFlow, callables among ``control_inputs`` are called (so that code that
    passes a function to run first keeps working); everything else is ignored.

    Args:
        control_inputs: A list of tensors, ops or callables, or None.

    Returns:
        A context manager that does nothing and yields None.

    >>> import ferrotape as ft
    >>> with ft.control_dependencies([ft.constant(1.0)]):
    ...     y = ft.constant(2.0) * 3
    >>> float(y)
    6.0
    """
    for control in control_inputs or ():
        if callable(control):
            control()
    return _NullContext()


def get_static_value(tensor, partial=False):
    """The value of ``tensor`` as a NumPy array, when it is known without running anything.

    Eagerly every tensor's value is known. As in TensorFlow, a Variable gives None (its value
    may change), so does a tensor computed from a traced function's arguments while
    ``ft.function`` traces it (its value differs from call to call), and a non-tensor is
    returned as it is.

    Args:
        tensor: A tensor, or any other value.
        partial: Ignored (graph mode's partially known values).

    Returns:
        A NumPy array (or NumPy scalar) for a tensor, None for a Variable, else ``tensor``.

    >>> import ferrotape as ft
    >>> ft.get_static_value(ft.constant([1, 2]))
    array([1, 2], dtype=int32)
    """
    del partial
    if isinstance(tensor, _core.Tensor):
        return None if _core.trace_holds_value(tensor) else tensor.numpy()
    if isinstance(tensor, _core.Variable):
        return None
    return tensor


def Assert(condition, data, summarize=None, name=None):  # noqa: N802 - TensorFlow's name
    """Checks that ``condition`` holds, raising with ``data`` in the message if it does not.

    Args:
        condition: A scalar bool (tensor or Python value).
        data: A list of tensors or Python values to show when the check fails.
        summarize: How many entries of each tensor to show (``None``: 3).
        name: Ignored (TensorFlow's op name).

    Returns:
        ``None`` (eager TensorFlow returns nothing to depend on).

    Raises:
        InvalidArgumentError: if ``condition`` is false.

    >>> import ferrotape as ft
    >>> ft.Assert(ft.constant(True), ["never shown"])
    """
    del name
    holds = np.asarray(_convert(condition).numpy())
    if holds.all():
        return None
    limit = 3 if summarize is None else int(summarize)
    shown = []
    for item in data:
        if _core.is_tensor(item):
            flat = np.asarray(item.numpy()).reshape(-1)
            text = ", ".join(str(v) for v in flat[:limit].tolist())
            shown.append(text + (", ..." if flat.size > limit else ""))
        else:
            shown.append(str(item))
    raise InvalidArgumentError(
        f"Assert: Expected {_convert(condition)!r} to be true. Summarized data: " + "\n".join(shown)
    )


__all__ = [
    "Assert",
    "case",
    "cond",
    "control_dependencies",
    "get_static_value",
    "group",
    "identity_n",
    "no_op",
    "switch_case",
    "while_loop",
]
