"""Neural-network ``keras.ops`` (Keras 3's ``keras.src.ops.nn``) and the operations that
``keras.activations`` functions add to a functional graph. The math is the activation
functions' own (``ft.keras.activations``); this module only makes them operations."""

import inspect

from ... import _core
from .. import activations
from ..backend_dtypes import standardize_dtype
from .op_table import as_tensor, make_op
from .operation import define

_NN = "keras.src.ops.nn"


def _math(name):
    """The activation function itself, without its KerasTensor dispatch."""
    return inspect.unwrap(getattr(activations, name))


def _one_hot(x, num_classes, axis=-1, dtype=None, sparse=False):
    if sparse:
        raise ValueError("keras.ops.one_hot: sparse=True is not supported by ferrotape")
    return _core.one_hot(as_tensor(x), num_classes, axis=axis, dtype=standardize_dtype(dtype))


# name, class, configuration: every keras.ops.nn function here computes with the activation
# of the same name.
_rows = [
    ("relu", "Relu", ()),
    ("relu6", "Relu6", ()),
    ("sigmoid", "Sigmoid", ()),
    ("softplus", "Softplus", ()),
    ("softsign", "Softsign", ()),
    ("silu", "Silu", ()),
    ("selu", "Selu", ()),
    ("log_sigmoid", "LogSigmoid", ()),
    ("hard_sigmoid", "HardSigmoid", ()),
    ("hard_silu", "HardSilu", ()),
    ("hard_tanh", "HardTanh", ()),
    ("sparse_plus", "SparsePlus", ()),
    ("sparse_sigmoid", "SparseSigmoid", ()),
    ("tanh_shrink", "TanhShrink", ()),
    ("elu", "Elu", (("alpha", 1.0),)),
    ("celu", "Celu", (("alpha", 1.0),)),
    ("gelu", "Gelu", (("approximate", True),)),
    ("leaky_relu", "LeakyRelu", (("negative_slope", 0.2),)),
    ("softmax", "Softmax", (("axis", -1),)),
    ("log_softmax", "LogSoftmax", (("axis", -1),)),
    ("glu", "Glu", (("axis", -1),)),
    ("sparsemax", "Sparsemax", (("axis", -1),)),
    ("hard_shrink", "HardShrink", (("threshold", 0.5),)),
    ("soft_shrink", "SoftShrink", (("threshold", 0.5),)),
    ("squareplus", "Squareplus", (("b", 4),)),
]
for _name, _class, _config in _rows:
    make_op(globals(), _name, _class, _NN, _math(_name), ("x",), _config)
make_op(
    globals(),
    "one_hot",
    "OneHot",
    _NN,
    _one_hot,
    ("x",),
    (("num_classes", None), ("axis", -1), ("dtype", None), ("sparse", False)),
)

# Activations that Keras computes with an operation of another module, or (ReLU with its
# options) with an operation of the activations module.
_ACT = "keras.src.activations.activations"
_OTHERS = {
    "relu": define("ReLU", _ACT, _math("relu"), ("negative_slope", "max_value", "threshold")),
    "tanh": define("Tanh", "keras.src.ops.numpy", _math("tanh")),
    "exponential": define("Exp", "keras.src.ops.numpy", _math("exponential")),
    "mish": define("Mish", _ACT, _math("mish")),
    "threshold": define("Threshold", _NN, _math("threshold"), ("threshold", "default_value")),
}


def activation_call(fn, x, args, kwargs):
    """``keras.activations.<fn>(x, *args, **kwargs)`` on a KerasTensor: the node of its
    operation, configured by the arguments."""
    bound = inspect.signature(fn).bind(x, *args, **kwargs)
    bound.apply_defaults()
    config = dict(bound.arguments)
    del config[next(iter(config))]  # the tensor
    cls = _OTHERS.get(fn.__name__)
    if cls is None:
        return globals()[fn.__name__](x, **config)
    return cls(**config).symbolic_call(x)


__all__ = sorted([row[0] for row in _rows] + ["one_hot"])
