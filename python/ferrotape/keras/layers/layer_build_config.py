"""``get_build_config`` and ``build_from_config``, the part of Keras 3's ``Layer`` that records
the input shape a layer was built with, so that a loaded ``.keras`` model creates its weights
before they are assigned. A mixin of ``Layer`` (kept apart to keep ``layer.py`` short).

>>> import ferrotape as ft
>>> dense = ft.keras.layers.Dense(2)
>>> dense.build((None, 3))
>>> config = dense.get_build_config()
>>> config
{'input_shape': (None, 3)}
>>> fresh = ft.keras.layers.Dense(2)
>>> fresh.build_from_config(config)
>>> [tuple(w.shape) for w in fresh.weights]
[(3, 2), (2,)]
"""

from .layer_utils import _plain_shape


class LayerBuildConfig:
    """Build configs of ``Layer`` (Keras 3's ``Layer.get_build_config``/``build_from_config``)."""

    def get_build_config(self):
        """The input shape the layer was built with, as ``{"input_shape": shape}``; None when
        the layer is not built."""
        if not self.built or self._build_input_shape is None:
            return None
        return {"input_shape": self._build_input_shape}

    def build_from_config(self, config):
        """Builds the layer (creating its weights) from ``get_build_config()``'s dict; a
        built layer is left as it is."""
        shape = (config or {}).get("input_shape")
        if not self.built and shape is not None:
            shape = _plain_shape(shape)
            self.build(shape)
            if self._build_input_shape is None:  # the base build records nothing
                object.__setattr__(self, "_build_input_shape", shape)
