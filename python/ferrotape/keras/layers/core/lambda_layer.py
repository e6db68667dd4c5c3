"""``Lambda`` (Keras 3's ``keras.src.layers.core.lambda_layer``)."""

import inspect

from ... import object_registration
from ..layer import Layer


class Lambda(Layer):
    """Wraps a function of the inputs as a layer: ``function(inputs, **arguments)`` (with
    ``training=`` passed on when the function takes it). Variables the function creates are
    not tracked; write a ``Layer`` subclass for weights. ``mask``: the output's mask, a
    function ``mask(inputs, previous_mask)`` or a fixed value (without it the layer does not
    support masking); a function taking ``mask`` receives the input's."""

    def __init__(self, function, output_shape=None, mask=None, arguments=None, **kwargs):
        super().__init__(**kwargs)
        if not callable(function):
            raise ValueError(f"Lambda: function must be callable. Received: function={function!r}")
        self.mask = mask
        self.supports_masking = mask is not None
        self.function = function
        self.output_shape_arg = output_shape
        self.arguments = dict(arguments or {})
        try:
            parameters = inspect.signature(function).parameters
        except (TypeError, ValueError):  # builtins without a signature
            parameters = {}
        self._takes_training = "training" in parameters
        self._takes_mask = "mask" in parameters

    def call(self, inputs, mask=None, training=None):
        kwargs = dict(self.arguments)
        if self._takes_training:
            kwargs["training"] = training
        if self._takes_mask:
            kwargs["mask"] = mask
        return self.function(inputs, **kwargs)

    def compute_mask(self, inputs, mask=None):
        """``mask(inputs, previous_mask)`` when the layer's ``mask`` is a function, else it.

        Args:
            inputs: The layer's inputs.
            mask: Their mask.

        Returns:
            The output's mask.
        """
        if callable(self.mask):
            return self.mask(inputs, mask)
        return self.mask

    def get_config(self):
        return {
            **super().get_config(),
            "function": getattr(self.function, "__name__", repr(self.function)),
            "arguments": self.arguments,
        }

    @classmethod
    def from_config(cls, config, custom_objects=None):
        """The layer again, its ``function`` found by name as any config name is: a registered
        or custom function, or a Keras activation, loss or metric. A lambda saved by Keras
        as bytecode is refused (``safe_mode``)."""
        config = dict(config)
        if isinstance(config.get("function"), (str, dict)):
            config["function"] = object_registration.deserialize_keras_object(
                config["function"], custom_objects=custom_objects
            )
        return cls(**config)
