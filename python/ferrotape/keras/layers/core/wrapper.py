"""``Wrapper`` (Keras 3's ``keras.src.layers.core.wrapper``): the base of layers that wrap
another layer.
"""

from ... import object_registration
from ..layer import Layer


class Wrapper(Layer):
    """Holds ``layer`` (its weights are the wrapper's) and builds it on the wrapper's build;
    subclasses say in ``call`` how they apply it. ``get_config`` serialises the wrapped
    layer, ``from_config`` rebuilds it."""

    def __init__(self, layer, **kwargs):
        if not isinstance(layer, Layer):
            raise ValueError(
                f"Layer {layer} supplied to Wrapper isn't a supported layer type. Please "
                "ensure wrapped layer is a valid Keras layer."
            )
        super().__init__(**kwargs)
        self.layer = layer

    def build(self, input_shape=None):
        if not self.layer.built:
            self.layer.build(input_shape)
            self.layer.built = True

    def get_config(self):
        return {
            **super().get_config(),
            "layer": object_registration.serialize_keras_object(self.layer),
        }

    @classmethod
    def from_config(cls, config, custom_objects=None):
        """A wrapper made from ``get_config``'s output.

        Args:
            config: The dict ``get_config`` returned.
            custom_objects: Classes the wrapped layer's config may name.

        Returns:
            The new layer.
        """
        config = dict(config)
        config["layer"] = object_registration.deserialize_keras_object(
            config["layer"], custom_objects=custom_objects
        )
        return cls(**config)
