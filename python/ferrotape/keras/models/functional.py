"""Functional models, ``Model(inputs, outputs)`` (Keras 3's ``keras.src.models.functional``)."""

import numpy as np

from ... import _core, nest
from ..layers.core.input_layer import InputLayer
from ..layers.keras_tensor import KerasTensor
from ..layers.layer_masking import _keep_mask, set_keras_mask
from ..layers.layer_utils import _shape_of
from .model import Model


class Functional(Model):
    """A model defined by ``Input`` tensors and the outputs of layers called on them."""

    _engine_attrs = Model._engine_attrs | {"_inputs_struct", "_outputs_struct", "_nodes"}
    # Keras 3's list of a functional model's layers, input layers first.
    _checkpoint_names = {"_functional_layers": "_operations"}

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
        nodes = _ordered_nodes(flat_outputs, flat_inputs)
        object.__setattr__(self, "_nodes", nodes)
        self._functional_layers = _keras_layer_order(nodes, flat_outputs, flat_inputs)
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
        values = {}
        flat_inputs = nest.flatten(self._inputs_struct)
        given = self._standardized_inputs(inputs, flat_inputs)
        masks = [None] * len(given) if mask is None else nest.flatten(mask)
        for tensor, value, input_mask in zip(flat_inputs, given, masks, strict=False):
            values[id(tensor)] = _adjusted_rank(self._converted_inputs(value), tensor)
            if input_mask is not None:
                # The layers read a mask from the tensor it rides on (Keras 3).
                set_keras_mask(values[id(tensor)], input_mask)
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

    def _standardized_inputs(self, inputs, flat_inputs):
        """The inputs as a flat list in the order of the model's ``Input``s. A dict given to a
        model built on a list of inputs is read by the inputs' names, as in Keras 3 (the
        structured-data examples feed a dataset of feature dicts)."""
        if isinstance(inputs, dict) and not isinstance(self._inputs_struct, dict):
            names = [tensor.name for tensor in flat_inputs]
            missing = [name for name in names if name not in inputs]
            if missing:
                raise ValueError(
                    f"Model '{self.name}': the input dict has no entry for the input(s) named "
                    f"{missing}. Received keys: {sorted(inputs)}"
                )
            return [inputs[name] for name in names]
        given = nest.flatten(inputs) if len(flat_inputs) > 1 else [inputs]
        if len(given) != len(flat_inputs):
            raise ValueError(
                f"Model '{self.name}' expects {len(flat_inputs)} input(s), received {len(given)}"
            )
        return given

    # ------------------------------------------------------------------ configuration
    def get_config(self):
        """Keras 3's functional config: every layer serialized with the calls made on it
        (``inbound_nodes``, each input named by ``[layer, node index, tensor index]``), and
        the model's inputs and outputs named the same way."""
        from .. import object_registration

        node_index, per_layer = {}, {}
        for node in self._nodes:
            node_index[id(node)] = per_layer.setdefault(id(node.layer), 0)
            per_layer[id(node.layer)] += 1

        def history(tensor):
            node = tensor._node
            return [node.layer.name, node_index[id(node)], node.outputs.index(tensor)]

        def node_config(node):
            def entry(value):
                if isinstance(value, KerasTensor):
                    return {
                        "class_name": "__keras_tensor__",
                        "config": {
                            "shape": list(value.shape),
                            "dtype": value.dtype,
                            "keras_history": history(value),
                        },
                    }
                return _serialized_value(value)

            args = nest.map_structure(entry, [node.inputs, *node.rest])
            return {"args": args, "kwargs": nest.map_structure(entry, node.kwargs)}

        layers = []
        for layer in self._functional_layers:
            serialized = object_registration.serialize_keras_object(layer)
            nodes = [n for n in self._nodes if n.layer is layer and not _is_input(n)]
            layers.append(
                {**serialized, "name": layer.name, "inbound_nodes": [node_config(n) for n in nodes]}
            )
        return {
            "name": self.name,
            "trainable": self.trainable,
            "layers": layers,
            "input_layers": nest.map_structure(history, self._inputs_struct),
            "output_layers": nest.map_structure(history, self._outputs_struct),
        }

    @classmethod
    def from_config(cls, config, custom_objects=None):
        """A functional model from ``get_config()``'s dict (Keras's or ferrotape's): the
        layers are rebuilt and called again in the order of the saved calls."""
        from .. import object_registration

        layers, pending = {}, []
        for layer_data in config["layers"]:
            layer = object_registration.deserialize_keras_object(
                layer_data, custom_objects=custom_objects
            )
            layers[layer_data["name"]] = layer
            pending.append((layer, list(layer_data.get("inbound_nodes") or [])))
        outputs = {}  # (layer name, node index) -> the call's flat outputs
        for name, layer in layers.items():
            if isinstance(layer, InputLayer):
                outputs[(name, 0)] = [layer.output]
        while any(nodes for _, nodes in pending):
            progressed = False
            for layer, nodes in pending:
                while nodes and _inputs_ready(nodes[0], outputs):
                    _replay(layer, nodes.pop(0), outputs)
                    progressed = True
            if not progressed:
                raise ValueError(
                    f"Functional.from_config: the config of model {config.get('name')!r} "
                    f"calls layers on tensors that no layer produces"
                )

        def tensor(history):
            name, index, tensor_index = history
            return outputs[(name, index)][tensor_index]

        inputs = _map_histories(tensor, config["input_layers"])
        model_outputs = _map_histories(tensor, config["output_layers"])
        kwargs = {k: config[k] for k in ("name", "trainable") if k in config}
        return cls(inputs, model_outputs, **kwargs)


def _adjusted_rank(value, tensor):
    """Keras 3's rank adjustment of a model input: one axis of size 1 more or fewer than the
    ``Input`` declares is squeezed or added (a batch of scalars, shape ``(n,)``, feeds
    ``Input(shape=(1,))``); any other difference of rank is an error."""
    shape = getattr(value, "shape", None)
    if shape is None or tensor.shape is None:
        return value
    rank, expected = len(shape), len(tensor.shape)
    if rank == expected:
        return value
    if rank == expected + 1 and shape[-1] == 1:
        return _keep_mask(value, _core.squeeze(value, [-1]))
    if rank == expected - 1 and tensor.shape[-1] == 1:
        return _keep_mask(value, _core.expand_dims(value, -1))
    raise ValueError(
        f"Invalid input shape for input {tensor}. Expected shape {tensor.shape}, but input has "
        f"incompatible shape {tuple(shape)}"
    )


def _is_input(node):
    return isinstance(node.layer, InputLayer)


def _is_history(value):
    return isinstance(value, list) and len(value) == 3 and isinstance(value[0], str)


def _map_histories(fn, structure):
    """Applies ``fn`` to each ``[layer, node, tensor]`` entry of a nest of them (a single
    entry, a list or a dict), keeping the nest."""
    if _is_history(structure):
        return fn(structure)
    if isinstance(structure, dict):
        return {key: _map_histories(fn, value) for key, value in structure.items()}
    return [_map_histories(fn, value) for value in structure]


def _is_saved_tensor(value):
    return isinstance(value, dict) and value.get("class_name") == "__keras_tensor__"


def _inputs_ready(node_data, outputs):
    histories = [_saved_history(v) for v in _saved_tensors(node_data)]
    return all(key in outputs for key in histories)


def _saved_history(value):
    name, index, _ = value["config"]["keras_history"]
    return (name, index)


def _saved_tensors(node_data):
    found = []

    def visit(value):
        if _is_saved_tensor(value):
            found.append(value)
        elif isinstance(value, dict):
            for item in value.values():
                visit(item)
        elif isinstance(value, (list, tuple)):
            for item in value:
                visit(item)

    visit(node_data)
    return found


def _replay(layer, node_data, outputs):
    """Calls ``layer`` again as one saved call did, recording the outputs under the next
    node index of the layer."""

    def restore(value):
        if _is_saved_tensor(value):
            name, index, tensor_index = value["config"]["keras_history"]
            return outputs[(name, index)][tensor_index]
        if isinstance(value, dict):
            special = _restored_value(value)
            if special is not value:
                return special
            return {key: restore(item) for key, item in value.items()}
        if isinstance(value, (list, tuple)):  # a config not yet through JSON keeps tuples
            return [restore(item) for item in value]
        return value

    args = [restore(value) for value in node_data.get("args", [])]
    kwargs = {key: restore(value) for key, value in (node_data.get("kwargs") or {}).items()}
    result = layer(*args, **kwargs)
    index = sum(1 for name, _ in outputs if name == layer.name)
    outputs[(layer.name, index)] = nest.flatten(result)


def _serialized_value(value):
    """A non-symbolic argument of a call as Keras 3 writes it: arrays and tensors as
    ``__numpy__``/``__tensor__`` entries with their dtype, slices as ``__slice__`` (indexing
    ``x[:, 0]``), ``...`` as ``__ellipsis__``."""
    from .. import object_registration

    if isinstance(value, slice):
        config = {"start": value.start, "stop": value.stop, "step": value.step}
        return {"class_name": "__slice__", "config": config}
    if value is Ellipsis:
        return {"class_name": "__ellipsis__", "config": {}}
    if isinstance(value, np.ndarray) and value.ndim > 0:
        config = {"value": value.tolist(), "dtype": value.dtype.name}
        return {"class_name": "__numpy__", "config": config}
    if isinstance(value, (_core.Tensor, _core.Variable)):
        config = {"value": value.numpy().tolist(), "dtype": value.dtype.name}
        return {"class_name": "__tensor__", "config": config}
    return object_registration.serialize_keras_object(value)


def _restored_value(value):
    """The inverse of ``_serialized_value`` for its special entries (others come back as
    given)."""
    kind, config = value.get("class_name"), value.get("config")
    if kind == "__slice__":
        return slice(config["start"], config["stop"], config["step"])
    if kind == "__ellipsis__":
        return Ellipsis
    if kind == "__numpy__":
        return np.array(config["value"], dtype=config["dtype"])
    if kind == "__tensor__":
        return _core.convert_to_tensor(np.array(config["value"], dtype=config["dtype"]))
    return value


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


def _keras_layer_order(nodes, flat_outputs, flat_inputs):
    """The layers in Keras 3's order (``keras.src.ops.function.map_graph``): deepest first,
    a layer's depth being the most layer calls between one of its calls and an output, ties
    in the order a depth-first walk from the outputs first meets them. ``layers``, the
    weights and the groups of a weights file all follow it, so it must be Keras's."""
    first_seen, seen_nodes = {}, set()

    def walk(tensor):
        node = tensor._node
        if node is None or id(node) in seen_nodes:
            return
        seen_nodes.add(id(node))
        first_seen.setdefault(id(node.layer), len(first_seen))
        if not isinstance(node.layer, InputLayer):
            for parent in node.input_tensors():
                walk(parent)

    for tensor in flat_outputs:
        walk(tensor)
    node_depth, layer_depth, layers = {}, {}, {}
    for node in reversed(nodes):
        depth = max(node_depth.setdefault(id(node), 0), layer_depth.get(id(node.layer), 0))
        layer_depth[id(node.layer)] = node_depth[id(node)] = depth
        layers[id(node.layer)] = node.layer
        for parent in node.input_tensors():
            if parent._node is not None:
                key = id(parent._node)
                node_depth[key] = max(depth + 1, node_depth.get(key, 0))
    for tensor in flat_inputs:  # inputs the outputs do not use still belong to the model
        layer = tensor._node.layer
        if id(layer) not in layer_depth:
            layer_depth[id(layer)], first_seen[id(layer)], layers[id(layer)] = 0, -1, layer
    order = sorted(layers, key=lambda key: (-layer_depth[key], first_seen[key]))
    return [layers[key] for key in order]


def _ordered_nodes(flat_outputs, flat_inputs):
    """The layer calls needed for the outputs, each after the calls it depends on."""
    order, visited = [], set()
    input_ids = {id(t) for t in flat_inputs}

    def visit(tensor):
        node = tensor._node
        if node is None:
            raise ValueError(f"Model(inputs, outputs): {tensor!r} was not made by a layer call")
        if id(node) in visited:
            return
        visited.add(id(node))
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
    return order
