"""What the dropout-capable RNN cells share (Keras 3's
``keras.src.layers.rnn.dropout_rnn_cell``): one dropout mask for the inputs and one for the
recurrent state per sequence, drawn at the first step of each call and reused at every step
(so a unit is dropped for the whole sequence, as recurrent dropout needs).
"""

from .... import _core
from ... import random as keras_random


class DropoutRNNCell:
    """Mixin of the cells with ``dropout`` and ``recurrent_dropout`` (and a
    ``seed_generator``)."""

    def _create_dropout_mask(self, step_input, rate):
        ones = _core.ones_like(step_input)
        return keras_random.dropout(ones, rate, seed=self.seed_generator)

    def get_dropout_mask(self, step_input):
        """The inputs' mask for this sequence (drawn at its first step).

        Args:
            step_input: One step's input, ``[batch, features]``.

        Returns:
            The mask (0 or ``1 / (1 - dropout)``), or None without dropout.
        """
        if getattr(self, "_dropout_mask", None) is None and self.dropout > 0:
            self._dropout_mask = self._create_dropout_mask(step_input, self.dropout)
        return getattr(self, "_dropout_mask", None)

    def get_recurrent_dropout_mask(self, step_input):
        """The recurrent state's mask for this sequence (drawn at its first step).

        Args:
            step_input: The previous state, ``[batch, units]``.

        Returns:
            The mask, or None without recurrent dropout.
        """
        if getattr(self, "_recurrent_dropout_mask", None) is None and self.recurrent_dropout > 0:
            self._recurrent_dropout_mask = self._create_dropout_mask(
                step_input, self.recurrent_dropout
            )
        return getattr(self, "_recurrent_dropout_mask", None)

    def reset_dropout_mask(self):
        """Forgets the inputs' mask, so that the next sequence draws a new one."""
        self._dropout_mask = None

    def reset_recurrent_dropout_mask(self):
        """Forgets the recurrent mask, so that the next sequence draws a new one."""
        self._recurrent_dropout_mask = None
