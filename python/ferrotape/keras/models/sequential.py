"""``Sequential`` (Keras 3's ``keras.src.models.sequential``)."""

from ..layers.core.input_layer import InputLayer
from ..layers.keras_tensor import KerasTensor
from ..layers.layer import Layer
from ..layers.layer_masking import set_keras_mask
from ..layers.layer_utils import (
    _CONTEXT,
    _batch_as_none,
    _is_single_shape,
    _plain_shape,
    _shape_of,
    _structure_changed,
    _zeros_for,
)
from .model import Model


class Sequential(Model):
    """A model that applies its layers one after the other.

    >>> import ferrotape as ft
    >>> model = ft.keras.Sequential([ft.keras.Input(shape=(4,)), ft.keras.layers.Dense(2)])
    >>> model.output_shape
    (None, 2)
    """

    def __init__(self, layers=None, trainable=True, name=None):
        super().__init__(trainable=trainable, name=name)
        object.__setattr__(self, "_input_layer", None)
        self._layers = []
        for layer in layers or []:
            self.add(layer, rebuild=False)
        self._maybe_rebuild()

    @property
    def layers(self):
        return list(self._layers)

    def _checkpoint_children(self):
        """Keras 3's: the layers under ``_functional/_operations/<i>``, index 0 being the input
        layer (Keras 3 runs a Sequential through a functional model of its layers), then the
        optimizer."""
        children = [(n, c) for n, c in super()._checkpoint_children() if n != "_layers"]
        operations = [self._input_layer, *self._layers]
        return [("_functional", _FunctionalView(operations)), *children]

    def add(self, layer, rebuild=True):
        """Appends a layer (or an ``Input`` as the first element)."""
        if isinstance(layer, KerasTensor):
            origin = layer._node.layer if layer._node is not None else None
            if not isinstance(origin, InputLayer):
                raise ValueError(
                    "Sequential.add: a KerasTensor can only be added if it comes from "
                    "keras.Input; received the output of a layer"
                )
            layer = origin
        if isinstance(layer, InputLayer):
            if self._layers or self._input_layer is not None:
                raise ValueError(
                    "Sequential.add: an Input can only be the first element of a Sequential model"
                )
            object.__setattr__(self, "_input_layer", layer)
            return
        if not isinstance(layer, Layer):
            raise ValueError(
                f"Only instances of `keras.Layer` can be added to a Sequential model. Received: "
                f"{layer!r} (of type {type(layer).__name__})"
            )
        if any(existing.name == layer.name for existing in self._layers):
            raise ValueError(
                f"All layers added to a Sequential model should have unique names. Name "
                f"'{layer.name}' is already the name of a layer in this model. Update the "
                f"`name` argument to pass a unique name."
            )
        if self._input_layer is None and not self._layers and layer._input_batch_shape:
            object.__setattr__(
                self, "_input_layer", InputLayer(batch_shape=layer._input_batch_shape)
            )
        self._layers.append(layer)
        if rebuild:
            self._maybe_rebuild()

    def pop(self, rebuild=True):
        """Removes and returns the last layer."""
        if not self._layers:
            raise TypeError("There are no layers in the model.")
        layer = self._layers.pop()
        if rebuild:
            self._maybe_rebuild()
        return layer

    def _maybe_rebuild(self):
        object.__setattr__(self, "built", False)
        input_shape = self.input_shape
        if self._layers and input_shape is not None:
            self.build(input_shape)

    @property
    def input_shape(self):
        if self._input_layer is not None:
            return self._input_layer.batch_shape
        return self._build_input_shape

    @property
    def output_shape(self):
        if not self._layers:
            return self.input_shape
        return self._layers[-1]._output_shape

    def _build_from_call(self, input_shape):
        pass  # the layers build as the first batch runs through them

    def build(self, input_shape=None):
        """Builds every layer by running zeros of ``input_shape`` (batch dim included) through
        the model, recording each layer's output shape with the batch dim as given."""
        if input_shape is None:
            input_shape = self.input_shape
        if input_shape is None:
            raise ValueError(
                "Sequential.build: the input shape is unknown; pass it, e.g. "
                "model.build((None, 784)), or start the model with keras.Input(shape=...)"
            )
        input_shape = _plain_shape(input_shape)
        dtype = self._input_layer.dtype if self._input_layer is not None else "float32"
        x = _zeros_for(input_shape, dtype)
        batch_unknown = _is_single_shape(input_shape) and input_shape[0] is None
        previous = _CONTEXT.symbolic_batch
        _CONTEXT.symbolic_batch = batch_unknown
        try:
            for layer in self._layers:
                x = layer(x, training=False)
                shape = _shape_of(x)
                object.__setattr__(
                    layer, "_output_shape", _batch_as_none(shape) if batch_unknown else shape
                )
        finally:
            _CONTEXT.symbolic_batch = previous
        object.__setattr__(self, "built", True)
        object.__setattr__(self, "_build_input_shape", input_shape)
        object.__setattr__(self, "_output_shape", self.output_shape)
        _structure_changed()

    def call(self, inputs, training=None, mask=None):
        outputs = inputs
        if mask is not None:
            # The layers read a mask from the tensor it rides on (Keras 3).
            outputs = self._converted_inputs(inputs)
            set_keras_mask(outputs, mask)
        for layer in self._layers:
            outputs = layer(outputs)
        return outputs

    def get_config(self):
        """Keras 3's Sequential config: each layer serialized (the ``InputLayer`` first when
        the model has one) and the input shape the model was built with."""
        from .. import object_registration

        layers = [self._input_layer] if self._input_layer is not None else []
        config = {
            "name": self.name,
            "trainable": self.trainable,
            "layers": [object_registration.serialize_keras_object(layer) for layer in layers]
            + [object_registration.serialize_keras_object(layer) for layer in self._layers],
        }
        if self._build_input_shape is not None:
            config["build_input_shape"] = self._build_input_shape
        return config

    @classmethod
    def from_config(cls, config, custom_objects=None):
        """A new Sequential model from ``get_config()``'s dict (Keras's or ferrotape's):
        its layers rebuilt, and the model built when the config gives an input shape."""
        from .. import object_registration

        config = dict(config)
        layer_configs = config.pop("layers", [])
        build_input_shape = config.pop("build_input_shape", None)
        config.pop("dtype", None)  # Keras records the model's policy; its layers carry theirs
        model = cls(**config)
        for layer_config in layer_configs:
            if "module" not in layer_config and "registered_name" not in layer_config:
                layer_config = {"module": "keras.layers", **layer_config}
            layer = object_registration.deserialize_keras_object(
                layer_config, custom_objects=custom_objects
            )
            model.add(layer, rebuild=False)
        if model._input_layer is not None:
            model._maybe_rebuild()
        elif build_input_shape is not None:
            model.build(_plain_shape(build_input_shape))
        return model


# ----------------------------------------------------------------------------- Functional


class _FunctionalView:
    """The functional model Keras 3 builds inside a Sequential, as a checkpoint names it."""

    def __init__(self, operations):
        self._operations = operations

    def _checkpoint_children(self):
        return [("_operations", self._operations)]
