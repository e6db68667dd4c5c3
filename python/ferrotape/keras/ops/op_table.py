"""How a ``keras.ops`` function is made from one row: the operation class (``define``) and
the public function with its signature and docstring."""

import inspect

from ... import _core
from .operation import define, symbolic_or_eager

_KIND = inspect.Parameter.POSITIONAL_OR_KEYWORD


def as_tensor(x, like=None):
    """``x`` as a tensor; a Python number takes the dtype of ``like`` (Keras's weak typing of
    Python scalars: ``x * 10.0`` keeps ``x``'s float16, ``x + 1`` its float32)."""
    if isinstance(x, (_core.Tensor, _core.Variable)):
        return x
    if isinstance(x, (bool, int, float)) and like is not None:
        return _core.cast(_core.convert_to_tensor(x), like.dtype)
    return _core.convert_to_tensor(x)


def binary(fn):
    """``fn`` on two operands, Python numbers taking the other operand's dtype."""

    def compute(x1, x2):
        a = x1 if isinstance(x1, (bool, int, float)) else as_tensor(x1)
        b = as_tensor(x2, like=None if isinstance(a, (bool, int, float)) else a)
        return fn(as_tensor(a, like=b), b)

    return compute


def make_op(namespace, name, class_name, module, compute, tensors, config=(), summary=None):
    """Declares the operation ``class_name`` and returns ``keras.ops.<name>`` (also put in
    ``namespace`` if given): a function of the ``tensors`` arguments and the ``config``
    ``(name, default)`` pairs."""
    cls = define(class_name, module, compute, [key for key, _ in config])
    parameters = [inspect.Parameter(t, _KIND) for t in tensors]
    parameters += [inspect.Parameter(key, _KIND, default=value) for key, value in config]
    signature = inspect.Signature(parameters)

    def op(*args, **kwargs):
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError as error:
            raise TypeError(f"keras.ops.{name}: {error}; expected {name}{signature}") from None
        bound.apply_defaults()
        values = [bound.arguments[t] for t in tensors]
        return symbolic_or_eager(cls, values, {key: bound.arguments[key] for key, _ in config})

    summary = summary or f"Keras's ``keras.ops.{name}``, computed by ferrotape's ops."
    args_doc = "".join(f"\n    {t}: a tensor (or a KerasTensor)." for t in tensors)
    args_doc += "".join(f"\n    {key}: as in Keras (default {value!r})." for key, value in config)
    op.__name__ = op.__qualname__ = name
    op.__module__ = "ferrotape.keras.ops"
    op.__signature__ = signature
    op.__doc__ = (
        f"{summary}\n\nOn KerasTensors it adds a ``{class_name}`` step to the functional "
        f"graph instead of computing.\n\nArgs:{args_doc}\n\nReturns:\n    A tensor, or a "
        f"KerasTensor when an argument is symbolic.\n"
    )
    if namespace is not None:
        namespace[name] = op
    return op
