"""``Model`` (Keras 3's ``keras.src.models.model``): a ``Layer`` with the training loop of
``trainers.trainer.Trainer`` (``compile``/``fit``/``evaluate``/``predict``), weight files and
``summary``; ``Model(inputs, outputs)`` makes a functional model (``models/functional.py``).

``fit`` runs ``train_step`` on batches sliced from arrays (or drawn from a ``ft.data.Dataset``),
keeps the loss as a running mean on the device, and reads metric values only when the progress
bar refreshes (at most ten times a second) or a callback asks for batch logs.

>>> import numpy as np, ferrotape as ft
>>> model = ft.keras.Sequential([ft.keras.Input(shape=(3,)), ft.keras.layers.Dense(1)])
>>> model.compile(optimizer=ft.keras.optimizers.SGD(0.1), loss="mse")
>>> x = np.random.default_rng(0).normal(size=(64, 3)).astype("float32")
>>> history = model.fit(x, x.sum(axis=1), epochs=30, verbose=0)
>>> history.history["loss"][-1] < 1e-3
True
"""

from ..layers.layer import Layer
from ..layers.layer_utils import _CONTEXT, _plain_shape, _zeros_for
from ..trainers.compile_utils import _MeanTracker
from ..trainers.trainer import Trainer
from ..utils.summary_utils import _summary_text


class Model(Trainer, Layer):
    """A layer with training and saving: subclass it (layers in ``__init__``, the forward pass
    in ``call``) or build it from ``Input`` tensors: ``Model(inputs, outputs)``."""

    _engine_attrs = Layer._engine_attrs | {
        "optimizer",
        "loss",
        "compiled",
        "stop_training",
        "history",
        "_compiled_loss",
        "_compile_metrics",
        "_metric_outputs",
        "_loss_tracker",
        "_compile_config",
        "_warned_no_trainable",
        "_run_eagerly",
        "train_function",
        "test_function",
        "predict_function",
    }

    def _checkpoint_children(self):
        """A layer's children, then the optimizer ``compile`` set, as Keras 3 on TensorFlow."""
        found = super()._checkpoint_children()
        optimizer = self.__dict__.get("optimizer")
        if optimizer is not None and not any(child is optimizer for _, child in found):
            found.append(("optimizer", optimizer))
        return found

    def __new__(cls, *args, **kwargs):
        # Keras 3 imports functional here too: functional.py subclasses Model.
        from .functional import Functional

        if cls is Model and _functional_init_arguments(args, kwargs):
            return super().__new__(Functional)
        # A subclass's own constructor arguments say nothing (ActorCritic(2, 16) is not
        # functional): what its __init__ passes on to Model.__init__ decides, as in Keras 3.
        return super().__new__(cls)

    def __init__(self, *args, **kwargs):
        from .functional import Functional, _functional_variant

        if _functional_init_arguments(args, kwargs) and not isinstance(self, Functional):
            # A subclass built as CustomModel(inputs, outputs) (for its train_step, say) is a
            # Functional underneath. Keras rewrites the class's bases in place; a cached
            # subclass placing Functional before Model in the MRO leaves the user's class alone.
            object.__setattr__(self, "__class__", _functional_variant(type(self)))
            Functional.__init__(self, *args, **kwargs)
            return
        if args or "inputs" in kwargs or "outputs" in kwargs:
            raise TypeError(
                f"{type(self).__name__}: positional arguments and inputs/outputs are only "
                f"accepted by Model(inputs, outputs); subclasses call super().__init__() with "
                f"keyword arguments (name=..., trainable=..., dtype=...)"
            )
        super().__init__(**kwargs)
        setattr_ = object.__setattr__
        setattr_(self, "optimizer", None)
        setattr_(self, "loss", None)
        setattr_(self, "compiled", False)
        setattr_(self, "stop_training", False)
        setattr_(self, "history", None)
        setattr_(self, "_compiled_loss", None)
        setattr_(self, "_compile_metrics", [])
        setattr_(self, "_metric_outputs", [])
        setattr_(self, "_loss_tracker", _MeanTracker("loss"))
        setattr_(self, "_compile_config", None)
        setattr_(self, "_warned_no_trainable", False)
        setattr_(self, "_run_eagerly", False)
        setattr_(self, "train_function", None)
        setattr_(self, "test_function", None)
        setattr_(self, "predict_function", None)

    # ------------------------------------------------------------------ structure
    @property
    def layers(self):
        """The layers held directly by the model, in assignment order."""
        return list(self._flatten_layers(include_self=False, recursive=False))

    def get_layer(self, name=None, index=None):
        """A layer by name or by index in ``layers``."""
        if index is not None and name is not None:
            raise ValueError("get_layer: provide only one of `name` and `index`")
        layers = self.layers
        if index is not None:
            if not -len(layers) <= index < len(layers):
                raise ValueError(
                    f"get_layer: was asked to retrieve layer at index {index} but the model "
                    f"only has {len(layers)} layers"
                )
            return layers[index]
        if name is not None:
            for layer in layers:
                if layer.name == name:
                    return layer
            raise ValueError(
                f"get_layer: no such layer: {name}. Existing layers are: "
                f"{[layer.name for layer in layers]}"
            )
        raise ValueError("get_layer: provide either a layer name or a layer index")

    def _build_from_call(self, input_shape):
        # A model builds its sublayers by running; only a user-defined build is called here.
        if type(self).build is not Model.build:
            self.build(input_shape)

    def build(self, input_shape=None):
        """Builds the model by running it once on zeros of ``input_shape`` (batch dim
        included, ``None`` allowed), in inference mode."""
        if input_shape is None:
            raise ValueError(
                f"{type(self).__name__}.build: expected an input shape such as (None, 784)"
            )
        input_shape = _plain_shape(input_shape)
        dummy = _zeros_for(input_shape, self.compute_dtype)
        previous = _CONTEXT.symbolic_batch
        _CONTEXT.symbolic_batch = True
        try:
            self(dummy, training=False)
        finally:
            _CONTEXT.symbolic_batch = previous
        object.__setattr__(self, "_build_input_shape", input_shape)

    # ------------------------------------------------------------------ files
    def save_weights(self, filepath, overwrite=True, max_shard_size=None):
        """Writes the weights: Keras 3's HDF5 layout for ``.weights.h5`` names (optimizer
        state included), safetensors keyed ``"0003/conv2d_1/kernel"`` for ``.safetensors``
        names; any other name is a ValueError. See ``keras.saving.save_weights``."""
        from ..saving import saving_api

        saving_api.save_weights(self, filepath, overwrite, max_shard_size)

    def load_weights(self, filepath, skip_mismatch=False):
        """Loads weights from a ``.weights.h5``, ``.keras`` or ``.safetensors`` file (written
        by ferrotape or Keras), checking every count and shape before assigning anything."""
        from ..saving import saving_api

        saving_api.load_weights(self, filepath, skip_mismatch)

    def save(self, filepath, overwrite=True, zipped=None, **kwargs):
        """Saves the whole model (config, weights, optimizer state) as a Keras 3 ``.keras``
        file, which ``keras.models.load_model`` (ferrotape's or Keras's) reads back."""
        from ..saving import saving_api

        saving_api.save_model(self, filepath, overwrite, zipped, **kwargs)

    def to_json(self, **kwargs):
        """The model's config (``serialize_keras_object``) as a JSON string, which
        ``keras.models.model_from_json`` turns back into a model (fresh weights)."""
        import json

        from ..saving import saving_lib

        return json.dumps(json.loads(saving_lib.config_json(self)), **kwargs)

    def get_compile_config(self):
        """The arguments of ``compile`` (the optimizer with its config), serialized; None
        if the model was not compiled."""
        from .. import object_registration

        if not self.compiled or self._compile_config is None:
            return None
        config = {**self._compile_config, "optimizer": self.optimizer}
        return object_registration.serialize_keras_object(config)

    def compile_from_config(self, config):
        """Compiles the model from ``get_compile_config()``'s dict and builds the optimizer's
        variables, so saved optimizer state can be loaded into them."""
        from .. import losses, metrics, optimizers

        config = dict(config)
        config["optimizer"] = optimizers.get(config.get("optimizer") or "rmsprop")
        for key in ("loss", "metrics", "weighted_metrics"):
            config[key] = _deserialized(config.get(key), losses if key == "loss" else metrics)
        self.compile(**config)
        if self.built:
            self.optimizer.build(self.trainable_variables)

    # ------------------------------------------------------------------ summary
    def summary(
        self,
        line_length=None,
        positions=None,
        print_fn=None,
        expand_nested=False,
        show_trainable=False,
        layer_range=None,
    ):
        """Prints Keras's table of layers (name and type, output shape, parameter count) and
        the parameter totals."""
        text = _summary_text(
            self, line_length, positions, expand_nested, show_trainable, layer_range
        )
        (print_fn or print)(text)

    def get_config(self):
        return {"name": self.name, "trainable": self.trainable}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        """A model from its config: a functional config (``layers``, ``input_layers``,
        ``output_layers``) is rebuilt as a functional model, as Keras does; any other is
        passed to the constructor."""
        if {"layers", "input_layers", "output_layers"} <= set(config):
            from .functional import Functional

            return Functional.from_config.__func__(cls, config, custom_objects)
        return cls(**config)


def _deserialized(value, module):
    """Loss or metric identifiers from a compile config: serialized objects become objects
    again, names stay names, lists and dicts are mapped."""
    if isinstance(value, dict) and "class_name" in value:
        return module.deserialize(value)
    if isinstance(value, dict):
        return {key: _deserialized(item, module) for key, item in value.items()}
    if isinstance(value, list):
        return [_deserialized(item, module) for item in value]
    return value


def model_from_json(json_string, custom_objects=None):
    """A model from ``Model.to_json()``'s string (Keras's or ferrotape's), with fresh weights.

    Args:
        json_string: The JSON text.
        custom_objects: A dict of names to custom classes the config refers to.

    Returns:
        The model (compiled when the JSON holds a ``compile_config``).

    >>> import ferrotape as ft
    >>> model = ft.keras.Sequential([ft.keras.Input(shape=(3,)), ft.keras.layers.Dense(2)])
    >>> ft.keras.models.model_from_json(model.to_json()).output_shape
    (None, 2)
    """
    import json

    from .. import object_registration

    return object_registration.deserialize_keras_object(
        json.loads(json_string), custom_objects=custom_objects
    )


def _functional_init_arguments(args, kwargs):
    """Whether ``Model.__init__``'s arguments build a functional model (Keras 3's test):
    ``(inputs, outputs)`` positionally, or ``inputs``/``outputs`` by keyword."""
    return (
        len(args) == 2
        or (len(args) == 1 and "outputs" in kwargs)
        or ("inputs" in kwargs and "outputs" in kwargs)
    )
