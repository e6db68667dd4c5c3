"""``ft.custom_gradient`` and ``ft.stop_gradient``."""

import functools
import inspect

from . import _core, nest

stop_gradient = _core.stop_gradient


def _accepts_variables(fn):
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return True
    return any(p.name == "variables" or p.kind is p.VAR_KEYWORD for p in params)


def custom_gradient(f=None):
    """Decorator that gives a function its own gradient.

    ``f(*args)`` returns ``(result, grad_fn)``; ``grad_fn(*upstream)`` returns the gradients
    with respect to ``args``. When ``f`` reads trainable variables, ``grad_fn`` takes them as
    ``variables=`` and returns ``(input_grads, variable_grads)``.

    Args:
        f: The function to decorate (``None`` when used as ``@custom_gradient()``).

    Returns:
        A function computing ``f``'s result whose gradient on a tape is ``grad_fn``.

    >>> import ferrotape as ft
    >>> @ft.custom_gradient
    ... def clip_gradients(y):
    ...     return y, lambda dy: ft.clip_by_norm(dy, 0.5)
    >>> v = ft.Variable(2.0)
    >>> with ft.GradientTape() as t:
    ...     out = clip_gradients(v * v)
    >>> float(t.gradient(out, v))  # 0.5 (clipped) * 2v
    2.0
    """
    if f is None:
        return custom_gradient

    @functools.wraps(f)
    def decorated(*args, **kwargs):
        _core.push_variable_watcher()
        try:
            result, grad_fn = f(*args, **kwargs)
        finally:
            read = _core.pop_variable_watcher()
        # The function's own arguments are inputs, not captured variables.
        arg_ids = {a._id for a in args if isinstance(a, _core.Variable)}
        variables = [v for v in read if v.trainable and v._id not in arg_ids]
        if variables and not _accepts_variables(grad_fn):
            raise TypeError(
                "If using @custom_gradient with a function that uses variables, then grad_fn "
                "must accept a keyword argument 'variables'."
            )
        outputs = [_core.fresh_tensor(r) for r in nest.flatten(result)]
        inputs = [a if _core.is_tensor(a) else _core.convert_to_tensor(a) for a in args]

        def backward(*upstream):
            if variables:
                input_grads, variable_grads = grad_fn(*upstream, variables=variables)
            else:
                input_grads, variable_grads = grad_fn(*upstream), []
            flat = nest.flatten(input_grads)
            if len(flat) != len(inputs):
                raise ValueError(
                    f"custom_gradient function expected to return {len(inputs)} gradients, "
                    f"but returned {len(flat)} instead."
                )
            return list(flat) + list(nest.flatten(variable_grads))

        _core.record_custom_gradient(inputs + variables, outputs, backward)
        return nest.pack_sequence_as(result, outputs)

    return decorated


def grad_pass_through(f):
    """``f`` with the identity as its gradient: the result is ``f(x)``, the gradient with
    respect to ``x`` the upstream gradient unchanged (a straight-through estimator, e.g. for
    ``round`` or a variable's ``assign``). Variables ``f`` reads get no gradient.

    Args:
        f: A function of one or more tensors returning as many.

    Returns:
        A function computing ``f``'s result whose gradient passes straight through.

    >>> import ferrotape as ft
    >>> x = ft.constant(2.6)
    >>> with ft.GradientTape() as tape:
    ...     tape.watch(x)
    ...     y = ft.grad_pass_through(ft.round)(x)
    >>> float(y), float(tape.gradient(y, x))
    (3.0, 1.0)
    """

    @custom_gradient
    def passed(*args, **kwargs):
        def grad(*upstream, variables=None):
            if variables:
                return list(upstream), [None] * len(variables)
            return list(upstream)

        return f(*args, **kwargs), grad

    return passed


def hessians(ys, xs, gate_gradients=False, aggregation_method=None, name="hessians"):
    """TensorFlow's graph-mode Hessian, which (like ``tf.gradients``) needs a graph: eager
    TensorFlow raises, and so does ferrotape, which has no graph mode. Nest two
    ``GradientTape`` s instead (``tape.jacobian`` of an inner ``tape.gradient``).

    Args:
        ys: The tensors to differentiate.
        xs: The tensors to differentiate with respect to.
        gate_gradients: Unused.
        aggregation_method: Unused.
        name: Unused.

    Raises:
        RuntimeError: always, naming the tape-based replacement.

    >>> import ferrotape as ft
    >>> x = ft.constant([1.0, 2.0])
    >>> with ft.GradientTape() as outer:
    ...     outer.watch(x)
    ...     with ft.GradientTape() as inner:
    ...         inner.watch(x)
    ...         y = ft.reduce_sum(x**3)
    ...     g = inner.gradient(y, x)
    >>> outer.jacobian(g, x).numpy()
    array([[ 6.,  0.],
           [ 0., 12.]], dtype=float32)
    """
    del ys, xs, gate_gradients, aggregation_method, name
    raise RuntimeError(
        "hessians: tf.gradients is not supported when eager execution is enabled (ferrotape "
        "always runs eagerly). Use tf.GradientTape instead: tape.jacobian of an inner "
        "tape.gradient."
    )


def recompute_grad(f):
    """``f`` whose gradient runs ``f`` again under a tape of its own, as TensorFlow's does to
    save memory. Values and gradients, those of the variables ``f`` reads included, are
    ``f``'s own. ferrotape saves no memory by it: an open tape still records ``f``'s first
    run (there is no global pause to stop it), so this only costs the second run.

    Args:
        f: A function of tensors returning a tensor or a nest of tensors.

    Returns:
        A function computing ``f``'s result, with the recomputing gradient.

    >>> import ferrotape as ft
    >>> x = ft.constant([1.0, 2.0])
    >>> with ft.GradientTape() as tape:
    ...     tape.watch(x)
    ...     y = ft.recompute_grad(lambda t: t * t)(x)
    >>> tape.gradient(y, x).numpy()
    array([2., 4.], dtype=float32)
    """
    from .tape import GradientTape

    @custom_gradient
    def recomputed(*args):
        result = f(*args)

        def grad(*upstream, variables=None):
            sources = [a for a in args if _core.is_tensor(a)]
            with GradientTape() as tape:
                tape.watch(sources)
                again = f(*args)
            wrt = sources + list(variables or [])
            got = tape.gradient(nest.flatten(again), wrt, output_gradients=list(upstream))
            arg_grads = iter(got[: len(sources)])
            per_arg = [next(arg_grads) if _core.is_tensor(a) else None for a in args]
            if variables:
                return per_arg, got[len(sources) :]
            return per_arg

        return result, grad

    return recomputed
