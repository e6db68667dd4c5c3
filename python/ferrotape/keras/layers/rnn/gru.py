"""``GRUCell`` and ``GRU`` (Keras 3's ``keras.src.layers.rnn.gru``).

>>> import ferrotape as ft
>>> layer = ft.keras.layers.GRU(4)
>>> layer(ft.ones([2, 5, 3])).shape
TensorShape([2, 4])
>>> [w.shape.as_list() for w in layer.weights]
[[3, 12], [4, 12], [2, 12]]
"""

from .... import _core, linalg
from ... import activations
from .base_cell import _RecurrentCell
from .simple_rnn import _RecurrentLayer


class GRUCell(_RecurrentCell):
    """One step of a gated recurrent unit (Cho et al. 2014), gates in Keras's order
    ``z, r, h``: ``z, r = recurrent_activation(x W_z + h U_z + b, x W_r + h U_r + b)``, the
    candidate ``hh = activation(x W_h + r * (h U_h + b_h))`` with ``reset_after`` (Keras's
    default, CuDNN's form; the bias is ``[2, 3 * units]``: input and recurrent) or
    ``activation(x W_h + (r * h) U_h + b_h)`` without, and ``h = z * h_prev + (1 - z) * hh``."""

    _gates = 3

    def __init__(
        self,
        units,
        activation="tanh",
        recurrent_activation="sigmoid",
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
        reset_after=True,
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
        self.reset_after = bool(reset_after)

    def _bias_shape(self):
        return (2, 3 * self.units) if self.reset_after else (3 * self.units,)

    def call(self, inputs, states, training=False):
        h = states[0] if isinstance(states, (list, tuple)) else states
        inputs, h_in = self._dropped(inputs, h, training)
        units = self.units
        x = linalg.matmul(inputs, self.kernel)
        input_bias = recurrent_bias = None
        if self.bias is not None:
            if self.reset_after:
                input_bias, recurrent_bias = self.bias[0], self.bias[1]
            else:
                input_bias = self.bias
        if input_bias is not None:
            x = x + input_bias
        x_z, x_r, x_h = _core.split(x, 3, axis=-1)
        u_zr, u_h = self.recurrent_kernel[:, : 2 * units], self.recurrent_kernel[:, 2 * units :]
        inner_zr = linalg.matmul(h_in, u_zr)
        if recurrent_bias is not None:
            inner_zr = inner_zr + recurrent_bias[: 2 * units]
        r_z, r_r = _core.split(inner_zr, 2, axis=-1)
        z = self.recurrent_activation(x_z + r_z)
        r = self.recurrent_activation(x_r + r_r)
        if self.reset_after:
            inner_h = linalg.matmul(h_in, u_h)
            if recurrent_bias is not None:
                inner_h = inner_h + recurrent_bias[2 * units :]
            inner_h = r * inner_h
        else:
            inner_h = linalg.matmul(r * h_in, u_h)
        hh = self.activation(x_h + inner_h)
        output = z * h + (1.0 - z) * hh
        return output, [output] if isinstance(states, (list, tuple)) else output

    def get_config(self):
        return {
            **super().get_config(),
            "recurrent_activation": activations.serialize(self.recurrent_activation),
            "reset_after": self.reset_after,
        }


class GRU(_RecurrentLayer):
    """A gated recurrent unit layer over ``[batch, steps, features]``: ``GRUCell`` run by
    ``RNN`` (see there for ``return_sequences``, ``return_state``, masks, ...)."""

    _cell_class = GRUCell
    _cell_name = "gru"

    def __init__(
        self,
        units,
        activation="tanh",
        recurrent_activation="sigmoid",
        use_bias=True,
        kernel_initializer="glorot_uniform",
        recurrent_initializer="orthogonal",
        bias_initializer="zeros",
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
        reset_after=True,
        use_cudnn="auto",
        **kwargs,
    ):
        super().__init__(dict(locals()))
