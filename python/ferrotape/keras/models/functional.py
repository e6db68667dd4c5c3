"""Functional models, ``Model(inputs, outputs)`` (Keras 3's ``keras.src.models.functional``)."""

from ... import nest
from ..layers.core.input_layer import InputLayer
from ..layers.keras_tensor import KerasTensor
from ..layers.layer_utils import _shape_of
from .model import Model


class Functional(Model):
    """A model defined by ``Input`` tensors and the outputs of layers called on them."""

    _engine_attrs = Model._engine_attrs | {"_inputs_struct", "_outputs_struct", "_nodes"}

    def __init__(self, inputs, outputs, name=None, trainable=True, **kwargs):
        Model.__init__(self, name=name, trainable=trainable, **kwargs)
        flat_inputs = nest.flatten_for(inputs, (list, tuple), "Model(inputs, outputs)")
        flat_outputs = nest.flatten_for(outputs, (list, tuple), "Model(inputs, outputs)")
        for tensor in flat_inputs + flat_outputs:
            if not isinstance(tensor, KerasTensor):
                raise ValueError(
                    f"Model(inputs, outputs): expected KerasTensors (from keras.Input and "
                    f"layer calls), received {type(tensor).__name__}"
                )
        object.__setattr__(self, "_inputs_struct", inputs)
        object.__setattr__(self, "_outputs_struct", outputs)
        nodes, first_seen = _ordered_nodes(flat_outputs, flat_inputs)
        object.__setattr__(self, "_nodes", nodes)
        self._functional_layers = _layers_by_depth(nodes, first_seen)
        object.__setattr__(self, "built", True)
        object.__setattr__(self, "_build_input_shape", _shape_of(inputs))
        object.__setattr__(self, "_output_shape", _shape_of(outputs))

    @property
    def inputs(self):
        return nest.flatten(self._inputs_struct)

    @property
    def outputs(self):
        return nest.flatten(self._outputs_struct)

    @property
    def output_names(self):
        """The names of the layers that produce the outputs, in output order (the keys that
        ``compile``'s loss, loss_weights and metrics dicts use)."""
        return [tensor._node.layer.name for tensor in self.outputs]

    @property
    def input(self):
        """The model's input KerasTensor(s), as given to ``Model(inputs, ...)``."""
        return self._inputs_struct

    @property
    def output(self):
        return self._outputs_struct

    @property
    def input_shape(self):
        return self._build_input_shape

    @property
    def output_shape(self):
        return self._output_shape

    def _build_from_call(self, input_shape):
        pass

    def call(self, inputs, training=None, mask=None):
        del mask
        values = {}
        flat_inputs = nest.flatten(self._inputs_struct)
        given = nest.flatten(inputs) if len(flat_inputs) > 1 else [inputs]
        if len(given) != len(flat_inputs):
            raise ValueError(
                f"Model '{self.name}' expects {len(flat_inputs)} input(s), received {len(given)}"
            )
        for tensor, value in zip(flat_inputs, given, strict=True):
            values[id(tensor)] = self._converted_inputs(value)
        for node in self._nodes:
            if isinstance(node.layer, InputLayer):
                continue
            args, rest, kwargs = nest.map_structure(
                lambda v: values[id(v)] if isinstance(v, KerasTensor) else v,
                (node.inputs, tuple(node.rest), node.kwargs),
            )
            out = node.layer(args, *rest, **kwargs)
            for tensor, value in zip(node.outputs, nest.flatten(out), strict=True):
                values[id(tensor)] = value
        flat = [values[id(t)] for t in nest.flatten(self._outputs_struct)]
        return nest.pack_sequence_as(self._outputs_struct, flat)


_FUNCTIONAL_VARIANTS = {}


def _functional_variant(cls):
    """``cls`` with ``Functional`` mixed in (cached): same name, module and methods, so
    ``isinstance(m, cls)`` holds and the subclass's overrides win over Functional's."""
    variant = _FUNCTIONAL_VARIANTS.get(cls)
    if variant is None:
        variant = type(cls.__name__, (cls, Functional), {"__module__": cls.__module__})
        variant.__qualname__ = cls.__qualname__
        _FUNCTIONAL_VARIANTS[cls] = variant
    return variant


def _ordered_nodes(flat_outputs, flat_inputs):
    """The layer calls needed for the outputs, each after the calls it depends on, and the
    layers by when the walk back from the outputs first met them (their ids to an index)."""
    order, visited, first_seen = [], set(), {}
    input_ids = {id(t) for t in flat_inputs}

    def visit(tensor):
        node = tensor._node
        if node is None:
            raise ValueError(f"Model(inputs, outputs): {tensor!r} was not made by a layer call")
        if id(node) in visited:
            return
        visited.add(id(node))
        first_seen.setdefault(id(node.layer), len(first_seen))
        if isinstance(node.layer, InputLayer):
            if id(tensor) not in input_ids:
                raise ValueError(
                    f"Model(inputs, outputs): the outputs depend on input '{tensor.name}', which "
                    f"is not in `inputs`"
                )
        for parent in node.input_tensors():
            visit(parent)
        order.append(node)

    for tensor in flat_outputs:
        visit(tensor)
    return order, first_seen


def _layers_by_depth(nodes, first_seen):
    """The model's layers in Keras 3's order (``map_graph``): by depth, the inputs' side first
    (a layer's depth is its longest path to an output), ties in the order the walk back from
    the outputs met them. ``layers``, ``weights`` and ``get_weights``/``set_weights`` follow it,
    so weights move between ferrotape and Keras models positionally (a residual block's shortcut
    convolution comes before the main branch's last BatchNormalization, as in Keras)."""
    node_depth = {}
    layer_depth = {}
    for node in reversed(nodes):
        depth = max(node_depth.setdefault(id(node), 0), layer_depth.get(id(node.layer), 0))
        node_depth[id(node)] = depth
        layer_depth[id(node.layer)] = depth
        for parent in node.input_tensors():
            parent_node = parent._node
            node_depth[id(parent_node)] = max(depth + 1, node_depth.get(id(parent_node), 0))
    layers = {id(node.layer): node.layer for node in nodes}
    order = sorted(layers, key=lambda key: (-layer_depth[key], first_seen[key]))
    return [layers[key] for key in order]
