"""``SimpleRNNCell`` and ``SimpleRNN`` (Keras 3's ``keras.src.layers.rnn.simple_rnn``).

>>> import ferrotape as ft
>>> layer = ft.keras.layers.SimpleRNN(4)
>>> layer(ft.ones([2, 5, 3])).shape
TensorShape([2, 4])
>>> [w.shape.as_list() for w in layer.weights]
[[3, 4], [4, 4], [4]]
"""

from .... import linalg
from .base_cell import _RecurrentCell
from .rnn import RNN


class SimpleRNNCell(_RecurrentCell):
    """One step of a fully connected RNN:
    ``h = activation(x @ kernel + bias + h_prev @ recurrent_kernel)``; the output is ``h``."""

    def call(self, inputs, states, training=False):
        h = states[0] if isinstance(states, (list, tuple)) else states
        inputs, h = self._dropped(inputs, h, training)
        z = linalg.matmul(inputs, self.kernel)
        if self.bias is not None:
            z = z + self.bias
        output = self.activation(z + linalg.matmul(h, self.recurrent_kernel))
        return output, [output] if isinstance(states, (list, tuple)) else output


# The arguments a recurrent layer hands to its cell.
_CELL_ARGS = (
    "units",
    "activation",
    "recurrent_activation",
    "use_bias",
    "kernel_initializer",
    "recurrent_initializer",
    "bias_initializer",
    "unit_forget_bias",
    "kernel_regularizer",
    "recurrent_regularizer",
    "bias_regularizer",
    "kernel_constraint",
    "recurrent_constraint",
    "bias_constraint",
    "dropout",
    "recurrent_dropout",
    "reset_after",
    "seed",
)
_RNN_ARGS = ("return_sequences", "return_state", "go_backwards", "stateful", "unroll")


class _RecurrentLayer(RNN):
    """A recurrent layer over its own cell: the cell's arguments are the layer's, and its
    weights, attributes and config read through."""

    _cell_class = None

    def __init__(self, arguments):
        cell_args = {k: arguments[k] for k in _CELL_ARGS if k in arguments}
        rest = dict(arguments["kwargs"])
        rest.pop("implementation", None)
        rest.pop("use_cudnn", None)
        cell = self._cell_class(
            **cell_args,
            dtype=rest.get("dtype"),
            trainable=rest.get("trainable", True),
            name=f"{self._cell_name}_cell",
        )
        super().__init__(
            cell,
            **{k: arguments[k] for k in _RNN_ARGS},
            activity_regularizer=arguments.get("activity_regularizer"),
            **rest,
        )

    def __getattr__(self, name):
        # units, activation, dropout... are the cell's (Keras exposes them as properties).
        if name in _CELL_ARGS and "cell" in self.__dict__:
            return getattr(self.__dict__["cell"], name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def get_config(self):
        config = self._rnn_config()
        cell = self.cell.get_config()
        for key in ("name", "trainable", "dtype"):
            cell.pop(key, None)
        return {**config, **cell}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        """The layer made from ``get_config``'s output.

        Args:
            config: The dict ``get_config`` returned.
            custom_objects: Unused (the cell is the layer's own).

        Returns:
            The new layer.
        """
        del custom_objects
        return cls(**config)


class SimpleRNN(_RecurrentLayer):
    """A fully connected RNN over ``[batch, steps, features]``: ``SimpleRNNCell`` run by
    ``RNN`` (see there for ``return_sequences``, ``return_state``, masks, ...)."""

    _cell_class = SimpleRNNCell
    _cell_name = "simple_rnn"

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
        activity_regularizer=None,
        kernel_constraint=None,
        recurrent_constraint=None,
        bias_constraint=None,
        dropout=0.0,
        recurrent_dropout=0.0,
        return_sequences=False,
        return_state=False,
        go_backwards=False,
        stateful=False,
        unroll=False,
        seed=None,
        **kwargs,
    ):
        super().__init__(dict(locals()))
