"""``LSTMCell`` and ``LSTM`` (Keras 3's ``keras.src.layers.rnn.lstm``).

>>> import ferrotape as ft
>>> layer = ft.keras.layers.LSTM(4, return_sequences=True)
>>> layer(ft.ones([2, 5, 3])).shape
TensorShape([2, 5, 4])
>>> [w.shape.as_list() for w in layer.weights]
[[3, 16], [4, 16], [16]]
"""

from .... import _core, linalg
from ... import activations
from .base_cell import _RecurrentCell
from .simple_rnn import _RecurrentLayer


class LSTMCell(_RecurrentCell):
    """One step of a long short-term memory (Hochreiter 1997), gates in Keras's order
    ``i, f, c, o`` along the kernels' columns: with ``z = x @ kernel + h @ recurrent_kernel +
    bias``, ``i, f, o = recurrent_activation(z_i, z_f, z_o)``,
    ``c = f * c_prev + i * activation(z_c)``, ``h = o * activation(c)``; the states are
    ``[h, c]``. ``unit_forget_bias`` starts the forget gate's bias at 1."""

    _gates = 4

    def __init__(
        self,
        units,
        activation="tanh",
        recurrent_activation="sigmoid",
        use_bias=True,
        kernel_initializer="glorot_uniform",
        recurrent_initializer="orthogonal",
        bias_initializer="zeros",
        unit_forget_bias=True,
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
        kwargs.pop("implementation", None)
        super().__init__(
            units,
            activation=activation,
            use_bias=use_bias,
            kernel_initializer=kernel_initializer,
            recurrent_initializer=recurrent_initializer,
            bias_initializer=bias_initializer,
            kernel_regularizer=kernel_regularizer,
            recurrent_regularizer=recurrent_regularizer,
            bias_regularizer=bias_regularizer,
            kernel_constraint=kernel_constraint,
            recurrent_constraint=recurrent_constraint,
            bias_constraint=bias_constraint,
            dropout=dropout,
            recurrent_dropout=recurrent_dropout,
            seed=seed,
            **kwargs,
        )
        self.recurrent_activation = activations.get(recurrent_activation)
        self.unit_forget_bias = bool(unit_forget_bias)

    @property
    def state_size(self):
        """``[units, units]``: the hidden state ``h`` and the cell state ``c``."""
        return [self.units, self.units]

    def _bias_initializer(self):
        if not self.unit_forget_bias:
            return self.bias_initializer
        base, units = self.bias_initializer, self.units

        def forget_bias_one(shape, dtype=None):
            del shape
            return _core.concat(
                [
                    _core.cast(base((units,), dtype=dtype), dtype),
                    _core.ones([units], dtype=dtype),
                    _core.cast(base((2 * units,), dtype=dtype), dtype),
                ],
                0,
            )

        return forget_bias_one

    def call(self, inputs, states, training=False):
        h, c = states[0], states[1]
        inputs, h_in = self._dropped(inputs, h, training)
        z = linalg.matmul(inputs, self.kernel) + linalg.matmul(h_in, self.recurrent_kernel)
        if self.bias is not None:
            z = z + self.bias
        z_i, z_f, z_c, z_o = _core.split(z, 4, axis=-1)
        i = self.recurrent_activation(z_i)
        f = self.recurrent_activation(z_f)
        c = f * c + i * self.activation(z_c)
        o = self.recurrent_activation(z_o)
        h = o * self.activation(c)
        return h, [h, c]

    def get_config(self):
        return {
            **super().get_config(),
            "recurrent_activation": activations.serialize(self.recurrent_activation),
            "unit_forget_bias": self.unit_forget_bias,
        }


class LSTM(_RecurrentLayer):
    """A long short-term memory layer over ``[batch, steps, features]``: ``LSTMCell`` run by
    ``RNN`` (see there for ``return_sequences``, ``return_state`` (``[output, h, c]``), masks,
    ...)."""

    _cell_class = LSTMCell
    _cell_name = "lstm"

    def __init__(
        self,
        units,
        activation="tanh",
        recurrent_activation="sigmoid",
        use_bias=True,
        kernel_initializer="glorot_uniform",
        recurrent_initializer="orthogonal",
        bias_initializer="zeros",
        unit_forget_bias=True,
        kernel_regularizer=None,
        recurrent_regularizer=None,
        bias_regularizer=None,
        activity_regularizer=None,
        kernel_constraint=None,
        recurrent_constraint=None,
        bias_constraint=None,
        dropout=0.0,
        recurrent_dropout=0.0,
        seed=None,
        return_sequences=False,
        return_state=False,
        go_backwards=False,
        stateful=False,
        unroll=False,
        use_cudnn="auto",
        **kwargs,
    ):
        super().__init__(dict(locals()))
