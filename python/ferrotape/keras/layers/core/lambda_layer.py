"""``Lambda`` (Keras 3's ``keras.src.layers.core.lambda_layer``)."""

import inspect

from ..layer import Layer


class Lambda(Layer):
    """Wraps a function of the inputs as a layer: ``function(inputs, **arguments)`` (with
    ``training=`` passed on when the function takes it). Variables the function creates are
    not tracked; write a ``Layer`` subclass for weights."""

    _supports_masking = True  # as Keras 3: the input's mask passes through

    def __init__(self, function, output_shape=None, mask=None, arguments=None, **kwargs):
        super().__init__(**kwargs)
        if not callable(function):
            raise ValueError(f"Lambda: function must be callable. Received: function={function!r}")
        if mask is not None:
            raise ValueError("Lambda: mask is not supported (ferrotape has no masks)")
        self.function = function
        self.output_shape_arg = output_shape
        self.arguments = dict(arguments or {})
        try:
            self._takes_training = "training" in inspect.signature(function).parameters
        except (TypeError, ValueError):  # builtins without a signature
            self._takes_training = False

    def call(self, inputs, training=None):
        if self._takes_training:
            return self.function(inputs, training=training, **self.arguments)
        return self.function(inputs, **self.arguments)

    def get_config(self):
        return {
            **super().get_config(),
            "function": getattr(self.function, "__name__", repr(self.function)),
            "arguments": self.arguments,
        }
