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
