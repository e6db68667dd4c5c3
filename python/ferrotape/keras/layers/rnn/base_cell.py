"""What ``SimpleRNNCell``, ``LSTMCell`` and ``GRUCell`` share: their arguments, the weights
``kernel`` ``[features, gates * units]``, ``recurrent_kernel`` ``[units, gates * units]`` and
``bias``, created in that order (Keras's), and zero initial states.
"""

from .... import _core
from ... import activations, initializers, regularizers
from ... import random as keras_random
from ..layer import Layer
from ..layer_helpers import _float_arg, _is_int, _known_dim
from .dropout_rnn_cell import DropoutRNNCell


def _rate(layer, what, value):
    rate = _float_arg(type(layer).__name__, what, value)
    # Keras clips the dropout rates into [0, 1] rather than rejecting them.
    return min(1.0, max(0.0, rate))


class _RecurrentCell(DropoutRNNCell, Layer):
    # How many blocks of `units` columns the kernels have (1, 4 for LSTM, 3 for GRU).
    _gates = 1

    def __init__(
        self,
        units,
        activation="tanh",
        use_bias=True,
        kernel_initializer="glorot_uniform",
        recurrent_initializer="orthogonal",
        bias_initializer="zeros",
        kernel_regularizer=None,
        recurrent_regularizer=None,
        bias_regularizer=None,
        kernel_constraint=None,
        recurrent_constraint=None,
        bias_constraint=None,
        dropout=0.0,
        recurrent_dropout=0.0,
        seed=None,
        **kwargs,
    ):
        if not _is_int(units) or units < 1:
            raise ValueError(
                f"Received an invalid value for argument `units`, expected a positive "
                f"integer, got {units}."
            )
        super().__init__(**kwargs)
        self.units = int(units)
        self.activation = activations.get(activation)
        self.use_bias = bool(use_bias)
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.recurrent_initializer = initializers.get(recurrent_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.kernel_regularizer = regularizers.get(kernel_regularizer)
        self.recurrent_regularizer = regularizers.get(recurrent_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.kernel_constraint = kernel_constraint
        self.recurrent_constraint = recurrent_constraint
        self.bias_constraint = bias_constraint
        self.dropout = _rate(self, "dropout", dropout)
        self.recurrent_dropout = _rate(self, "recurrent_dropout", recurrent_dropout)
        self.seed = seed
        self.seed_generator = keras_random.SeedGenerator(seed)

    @property
    def state_size(self):
        """The size of the state (``units``)."""
        return self.units

    @property
    def output_size(self):
        """The size of each step's output (``units``)."""
        return self.units

    def _bias_shape(self):
        return (self._gates * self.units,)

    def _bias_initializer(self):
        return self.bias_initializer

    def build(self, input_shape):
        features = _known_dim(self, input_shape, -1, "last dimension")
        width = self._gates * self.units
        self.kernel = self.add_weight(
            shape=(features, width),
            name="kernel",
            initializer=self.kernel_initializer,
            regularizer=self.kernel_regularizer,
            constraint=self.kernel_constraint,
        )
        self.recurrent_kernel = self.add_weight(
            shape=(self.units, width),
            name="recurrent_kernel",
            initializer=self.recurrent_initializer,
            regularizer=self.recurrent_regularizer,
            constraint=self.recurrent_constraint,
        )
        self.bias = None
        if self.use_bias:
            self.bias = self.add_weight(
                shape=self._bias_shape(),
                name="bias",
                initializer=self._bias_initializer(),
                regularizer=self.bias_regularizer,
                constraint=self.bias_constraint,
            )

    def _dropped(self, inputs, h, training):
        """The step's inputs and previous state with this sequence's dropout masks applied."""
        if training and 0.0 < self.dropout < 1.0:
            inputs = inputs * self.get_dropout_mask(inputs)
        if training and 0.0 < self.recurrent_dropout < 1.0:
            h = h * self.get_recurrent_dropout_mask(h)
        return inputs, h

    def get_initial_state(self, batch_size=None):
        """Zero states ``[batch_size, units]`` (one; two for LSTM).

        Args:
            batch_size: The number of sequences.

        Returns:
            A list of zero tensors.
        """
        sizes = self.state_size if isinstance(self.state_size, list) else [self.state_size]
        return [_core.zeros([batch_size, s], dtype=self.compute_dtype) for s in sizes]

    def get_config(self):
        return {
            **super().get_config(),
            "units": self.units,
            "activation": activations.serialize(self.activation),
            "use_bias": self.use_bias,
            "kernel_initializer": initializers.serialize(self.kernel_initializer),
            "recurrent_initializer": initializers.serialize(self.recurrent_initializer),
            "bias_initializer": initializers.serialize(self.bias_initializer),
            "dropout": self.dropout,
            "recurrent_dropout": self.recurrent_dropout,
            "seed": self.seed,
        }
