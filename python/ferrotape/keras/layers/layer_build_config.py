"""``get_build_config`` and ``build_from_config``, the part of Keras 3's ``Layer`` that records
the input shape a layer was built with, so that a loaded ``.keras`` model creates its weights
before they are assigned, and the legacy ``input_shape`` arguments that give a Sequential model
its input shape. A mixin of ``Layer`` (kept apart to keep ``layer.py`` short).

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

import sys
import warnings

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

    def _pop_input_shape_kwargs(self, kwargs):
        """Keras's legacy ``input_shape``/``input_dim``/``batch_input_shape`` arguments, as a
        batch shape for the Sequential model that starts with this layer."""
        input_dim = kwargs.pop("input_dim", None)
        input_shape = kwargs.pop("input_shape", None)
        batch_input_shape = kwargs.pop("batch_input_shape", None)
        batch_size = kwargs.pop("batch_size", None)
        if input_dim is not None:
            input_shape = (input_dim,)
        if input_shape is None and batch_input_shape is None:
            return None
        warnings.warn(
            "Do not pass an `input_shape`/`input_dim` argument to a layer. When using "
            "Sequential models, prefer using an `Input(shape)` object as the first layer in "
            "the model instead.",
            UserWarning,
            stacklevel=self._user_stacklevel(),
        )
        if batch_input_shape is not None:
            return _plain_shape(tuple(batch_input_shape))
        if isinstance(input_shape, int):
            input_shape = (input_shape,)
        return (batch_size,) + _plain_shape(tuple(input_shape))

    def _user_stacklevel(self):
        """The stack level of the code constructing this layer, past all its ``__init__``s."""
        frame, level = sys._getframe(2), 2
        while frame is not None and frame.f_code.co_name == "__init__":
            if frame.f_locals.get("self") is not self:
                break
            frame, level = frame.f_back, level + 1
        return level
