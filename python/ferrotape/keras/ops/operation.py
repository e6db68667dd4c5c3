"""Operations: computations callable on tensors and on KerasTensors (Keras 3's
``keras.src.ops.operation``).

On tensors an operation computes at once. On KerasTensors it computes nothing: it records a call
node and returns KerasTensors of the output shapes, so that ``x * 10.0``, ``x[:, 0]`` or
``keras.ops.mean(x, axis=1)`` on an ``Input`` become steps of a functional model, serialized as
Keras serializes them (``{"module": "keras.src.ops.numpy", "class_name": "Multiply", ...}``).

Every operation class is declared by one ``define`` row: its Keras name and module, which of its
arguments are configuration (given to the constructor and saved in the config) and the function
that computes it.
"""

import re

from ... import _core, nest
from ..layers.keras_tensor import KerasTensor, _holds_keras_tensor, _Node
from ..layers.layer_utils import _unique_name

# (Keras module, class name) -> operation class; the loader's table.
OPERATIONS = {}


def _snake(name):
    """Keras's automatic names: ``GetItem`` -> ``get_item``, ``ReLU`` -> ``re_lu``."""
    name = re.sub(r"(.)([A-Z][a-z]+)", r"\1_\2", name)
    return re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name).lower()


class Operation:
    """A computation on tensors that, called on KerasTensors, adds a node to the functional
    graph instead (Keras 3's ``Operation``).

    Args:
        name: the node's name in a functional model (unique automatic name by default).
        **config: the operation's configuration (``axis``, ``keepdims``, ...), fixed for
            every call and saved in ``get_config()``.
    """

    config_names = ()
    compute = None
    keras_module = "keras.src.ops.operation"  # where Keras's class of the same name lives

    def __init__(self, name=None, **config):
        unknown = sorted(set(config) - set(self.config_names))
        if unknown:
            raise TypeError(
                f"{type(self).__name__}: unexpected argument(s) {unknown}; it takes "
                f"{list(self.config_names)} and `name`"
            )
        self.name = name or _unique_name(_snake(type(self).__name__))
        self._config = config

    def __call__(self, *args, **kwargs):
        if _holds_keras_tensor((list(args), kwargs), type(self).__name__):
            return self.symbolic_call(*args, **kwargs)
        return self.call(*args, **kwargs)

    def call(self, *args, **kwargs):
        """Computes the operation on tensors."""
        return type(self).compute(*args, **kwargs, **self._config)

    def symbolic_call(self, *args, **kwargs):
        """Records this call on KerasTensors and returns KerasTensors for its outputs."""
        outputs = self.compute_output_spec(*args, **kwargs)
        node = _Node(self, args[0] if args else None, args[1:], kwargs)
        symbolic = nest.map_structure(
            lambda spec: KerasTensor(spec.shape, spec.dtype, node=node), outputs
        )
        node.outputs = nest.flatten(symbolic)
        shapes = [t.shape for t in node.outputs]
        self._output_shape = shapes[0] if len(shapes) == 1 else shapes  # for summary()
        return symbolic

    def compute_output_spec(self, *args, **kwargs):
        """The shape and dtype of each output (as KerasTensors of no node), found by
        computing on stand-ins for the KerasTensors: once with each unknown dimension 1 and
        once with it 2. A dimension that differs between the runs is unknown (``None``); when
        only the first run works (a ``reshape`` to a fixed shape), its shapes stand."""
        first = self._stand_in_run(args, kwargs, 1)
        try:
            second = self._stand_in_run(args, kwargs, 2)
        except Exception:  # noqa: BLE001 - any failure means the sizes are not free
            second = first
        specs = []
        for a, b in zip(nest.flatten(first), nest.flatten(second), strict=True):
            shape = tuple(d1 if d1 == d2 else None for d1, d2 in zip(a.shape, b.shape, strict=True))
            specs.append(KerasTensor(shape, a.dtype.name))
        return nest.pack_sequence_as(first, specs)

    def _stand_in_run(self, args, kwargs, size):
        def stand_in(value):
            if not isinstance(value, KerasTensor):
                return value
            shape = [size if d is None else int(d) for d in value.shape]
            # Ones keep divisions and logs finite; integer stand-ins are zeros, which index
            # any axis.
            if value.dtype.startswith(("float", "bfloat")):
                return _core.ones(shape, dtype=value.dtype)
            return _core.zeros(shape, dtype=value.dtype)

        args, kwargs = nest.map_structure(stand_in, (list(args), kwargs))
        outputs = self.call(*args, **kwargs)
        return nest.map_structure(_core.convert_to_tensor, outputs)

    # What Model.summary() reads of a step: an operation holds no weights.
    built = True
    trainable = False
    weights = ()
    _output_shape = None

    def count_params(self):
        """0: an operation has no weights."""
        return 0

    def get_config(self):
        """The constructor arguments: the name and the configuration."""
        return {"name": self.name, **self._config}

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def __repr__(self):
        return f"<Operation name={self.name}>"


def define(class_name, module, compute, config_names=()):
    """Declares the operation class ``class_name`` of Keras's ``module`` (its ``call`` is
    ``compute(*tensors, **config)``) and returns it."""
    cls = type(
        class_name,
        (Operation,),
        {
            "__doc__": f"Keras 3's ``{module}.{class_name}`` operation.",
            "__module__": __name__.rsplit(".", 1)[0],
            "keras_module": module,
            "compute": staticmethod(compute),
            "config_names": tuple(config_names),
        },
    )
    OPERATIONS[(module, class_name)] = cls
    return cls


def symbolic_or_eager(cls, args, config):
    """What a ``keras.ops`` function returns: ``cls``'s node on KerasTensors, else the
    computed value (without making an operation object, as Keras does)."""
    if _holds_keras_tensor(list(args), cls.__name__):
        return cls(**config).symbolic_call(*args)
    return cls.compute(*args, **config)


def operation_class(module, class_name):
    """The operation class a Keras config names (``None`` if there is none)."""
    return OPERATIONS.get((module, class_name))
