"""``Pipeline`` (Keras 3's ``keras.src.layers.preprocessing.pipeline``).

>>> import ferrotape as ft
>>> pipeline = ft.keras.layers.Pipeline(
...     [ft.keras.layers.Rescaling(1 / 255), ft.keras.layers.CenterCrop(2, 2)]
... )
>>> float(ft.reduce_max(pipeline(ft.fill([1, 4, 4, 3], 255.0))))
1.0
"""

from ... import object_registration
from ..layer import Layer


class Pipeline(Layer):
    """Applies ``layers`` one after the other (a preprocessing chain that, unlike a
    ``Sequential`` model, is a plain layer). The call's ``training`` (default True, Keras's)
    reaches every layer that takes it."""

    def __init__(self, layers, name=None):
        super().__init__(name=name)
        if not isinstance(layers, (list, tuple)) or not all(isinstance(x, Layer) for x in layers):
            raise ValueError(f"Pipeline: layers must be a list of layers. Received: {layers!r}")
        self._pipeline_layers = list(layers)

    @property
    def layers(self):
        """The layers, in the order they run."""
        return list(self._pipeline_layers)

    def call(self, inputs, training=True):
        for layer in self._pipeline_layers:
            inputs = layer(inputs, training=training)
        return inputs

    def get_config(self):
        layers = [object_registration.serialize_keras_object(x) for x in self._pipeline_layers]
        return {"layers": layers, "name": self.name}

    @classmethod
    def from_config(cls, config):
        """A Pipeline made from ``get_config``'s output.

        Args:
            config: The dict ``get_config`` returned.

        Returns:
            The new layer.
        """
        layers = config.get("layers")
        if not isinstance(layers, (list, tuple)):
            raise ValueError(
                "`Pipeline` config must contain a `layers` key mapping to a list of serialized "
                f"layers. Received config with layers={layers}."
            )
        built = [object_registration.deserialize_keras_object(x) for x in layers]
        return cls(**{**config, "layers": built})
