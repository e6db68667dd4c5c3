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

import numpy as np

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
    }

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

    # ------------------------------------------------------------------ weight files
    def save_weights(self, filepath, overwrite=True, max_shard_size=None):
        """Writes the weights to a safetensors file, keyed ``"0003/conv2d_1/kernel"``
        (position, layer, weight) so the order survives."""
        import os

        from ... import __version__
        from .. import saving

        del max_shard_size
        filepath = os.fspath(filepath)
        if not overwrite and os.path.exists(filepath):
            raise FileExistsError(f"save_weights: {filepath} exists and overwrite=False was given")
        named = {
            f"{index:04d}/{layer.name}/{weight_name}": variable.numpy()
            for index, (layer, weight_name, variable) in enumerate(self._weights_with_owners())
        }
        metadata = {
            "format": "ferrotape.keras.weights",
            "format_version": "1",
            "ferrotape_version": str(__version__),
            "model_name": self.name,
        }
        saving.save_weights_file(filepath, named, metadata)

    def load_weights(self, filepath, skip_mismatch=False):
        """Loads weights written by ``save_weights``: matched by position, with the count and
        every shape checked (a ValueError names the first mismatching weight)."""
        import os

        from .. import saving

        filepath = os.fspath(filepath)
        stored = saving.load_weights_file(filepath)
        keys = sorted(stored)
        owned = self._weights_with_owners()
        if not owned and keys:
            raise ValueError(
                f"load_weights: model '{self.name}' has no weights yet; build it first (call it "
                f"on a batch, or give it an input shape) and then load {filepath}"
            )
        if len(keys) != len(owned) and not skip_mismatch:
            raise ValueError(
                f"load_weights: {filepath} holds {len(keys)} weights but model '{self.name}' "
                f"has {len(owned)}"
            )
        assignments = []
        for key, (layer, weight_name, variable) in zip(keys, owned, strict=False):
            value = stored[key]
            expected = tuple(variable.shape)
            if tuple(value.shape) != expected:
                if skip_mismatch:
                    continue
                raise ValueError(
                    f"load_weights: weight {key!r} in {filepath} has shape {tuple(value.shape)} "
                    f"but the model's weight '{layer.name}/{weight_name}' has shape {expected}"
                )
            assignments.append((variable, value))
        for variable, value in assignments:
            variable.assign(np.asarray(value, dtype=variable.dtype.name))

    def save(self, filepath, overwrite=True, **kwargs):
        raise NotImplementedError(
            "Model.save: whole-model files are not supported by ferrotape; use "
            "save_weights/load_weights"
        )

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


def _functional_init_arguments(args, kwargs):
    """Whether ``Model.__init__``'s arguments build a functional model (Keras 3's test):
    ``(inputs, outputs)`` positionally, or ``inputs``/``outputs`` by keyword."""
    return (
        len(args) == 2
        or (len(args) == 1 and "outputs" in kwargs)
        or ("inputs" in kwargs and "outputs" in kwargs)
    )
