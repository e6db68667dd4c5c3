"""``StackedRNNCells`` (Keras 3's ``keras.src.layers.rnn.stacked_rnn_cells``).

>>> import ferrotape as ft
>>> cells = [ft.keras.layers.LSTMCell(4), ft.keras.layers.GRUCell(3)]
>>> ft.keras.layers.RNN(cells)(ft.ones([2, 5, 6])).shape
TensorShape([2, 3])
"""

from ... import object_registration
from ..layer import Layer


class StackedRNNCells(Layer):
    """Cells run one after the other at each step, as one cell: each cell's output is the
    next one's input; the states are one entry per cell (that cell's state, or its list of
    states), as Keras nests them."""

    def __init__(self, cells, **kwargs):
        super().__init__(**kwargs)
        for cell in cells:
            if not callable(getattr(cell, "call", None)) or not hasattr(cell, "state_size"):
                raise ValueError(
                    "All cells must have a `call` method and a `state_size` attribute. "
                    f"Received cells={cells}"
                )
        self.cells = list(cells)

    @property
    def state_size(self):
        """Each cell's state size (an int, or a list for a cell with several states)."""
        return [cell.state_size for cell in self.cells]

    @property
    def output_size(self):
        """The output size of the last cell."""
        last = self.cells[-1]
        return getattr(last, "output_size", None) or (
            last.state_size[0] if isinstance(last.state_size, (list, tuple)) else last.state_size
        )

    def get_initial_state(self, batch_size=None):
        """Each cell's zero states, one entry per cell.

        Args:
            batch_size: The number of sequences.

        Returns:
            A list with, per cell, its initial state (or list of states).
        """
        return [cell.get_initial_state(batch_size) for cell in self.cells]

    def reset_dropout_mask(self):
        """Forgets the cells' input dropout masks."""
        for cell in self.cells:
            if hasattr(cell, "reset_dropout_mask"):
                cell.reset_dropout_mask()

    def reset_recurrent_dropout_mask(self):
        """Forgets the cells' recurrent dropout masks."""
        for cell in self.cells:
            if hasattr(cell, "reset_recurrent_dropout_mask"):
                cell.reset_recurrent_dropout_mask()

    def build(self, input_shape):
        for cell in self.cells:
            if isinstance(cell, Layer) and not cell.built:
                cell.build(input_shape)
                cell.built = True
            size = getattr(cell, "output_size", None) or cell.state_size
            size = size[0] if isinstance(size, (list, tuple)) else size
            input_shape = (input_shape[0], size)

    def call(self, inputs, states, training=False):
        new_states = []
        for cell, own in zip(self.cells, states, strict=True):
            was_list = isinstance(own, (list, tuple))
            inputs, own = cell(inputs, list(own) if was_list else [own], training=training)
            if isinstance(own, (list, tuple)) and len(own) == 1 and not was_list:
                own = own[0]
            new_states.append(own)
        return inputs, new_states

    def get_config(self):
        cells = [object_registration.serialize_keras_object(c) for c in self.cells]
        return {**super().get_config(), "cells": cells}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        """Stacked cells made from ``get_config``'s output.

        Args:
            config: The dict ``get_config`` returned.
            custom_objects: Classes the cells' configs may name.

        Returns:
            The new layer.
        """
        config = dict(config)
        config["cells"] = [
            object_registration.deserialize_keras_object(c, custom_objects=custom_objects)
            for c in config["cells"]
        ]
        return cls(**config)
