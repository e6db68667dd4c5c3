"""Core ``keras.ops`` (Keras 3's ``keras.src.ops.core``): casts and gradient stops."""

from ... import _core
from ..backend_dtypes import standardize_dtype
from .op_table import as_tensor, make_op

_CORE = "keras.src.ops.core"

cast = make_op(
    None,
    "cast",
    "Cast",
    _CORE,
    lambda x, dtype: _core.cast(as_tensor(x), standardize_dtype(dtype)),
    ("x",),
    (("dtype", None),),
)
stop_gradient = make_op(
    None,
    "stop_gradient",
    "StopGradient",
    _CORE,
    lambda variable: _core.stop_gradient(as_tensor(variable)),
    ("variable",),
)

__all__ = ["cast", "stop_gradient"]
