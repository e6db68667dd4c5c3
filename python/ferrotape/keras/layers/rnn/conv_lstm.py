"""``ConvLSTM1D``, ``ConvLSTM2D`` and ``ConvLSTM3D`` (Keras 3's
``keras.src.layers.rnn.conv_lstm*``): an LSTM whose products are convolutions, over
sequences of 1-, 2- or 3-D channels-last inputs.

>>> import ferrotape as ft
>>> layer = ft.keras.layers.ConvLSTM2D(4, 3, padding="same", return_sequences=True)
>>> layer(ft.ones([2, 5, 6, 6, 3])).shape
TensorShape([2, 5, 6, 6, 4])
"""

from .... import _core, nn
from ..convolutional.base_conv import _conv1d
from ..convolutional.conv3d import _conv3d
from ..layer_helpers import _channels_last, _expect_rank, _is_int, _known_dim, _ntuple, _padding
from .lstm import LSTMCell
from .rnn import RNN


def _conv(rank, x, kernel, strides, padding, dilation_rate):
    if rank == 1:
        return _conv1d(x, kernel, strides[0], padding, dilation_rate[0])
    if rank == 2:
        return nn.conv2d(x, kernel, strides, padding.upper(), dilations=dilation_rate)
    return _conv3d(x, kernel, strides, padding, dilation_rate)


class _ConvLSTMCell(LSTMCell):
    """One ConvLSTM step (Shi et al. 2015): ``LSTMCell``'s gates with ``x @ kernel`` a
    convolution (``strides``, ``padding``, ``dilation_rate``) and ``h @ recurrent_kernel`` a
    ``same`` convolution; the states ``h`` and ``c`` are feature maps
    ``[batch, *out_spatial, filters]``."""

    def __init__(self, rank, filters, kernel_size, strides, padding, dilation_rate, **kwargs):
        if not _is_int(filters) or filters < 1:
            raise ValueError(
                f"ConvLSTM{rank}D: filters must be a positive int. Received: filters={filters!r}"
            )
        super().__init__(filters, **kwargs)
        self.rank = rank
        self.filters = int(filters)
        self.kernel_size = _ntuple(self, "kernel_size", kernel_size, rank)
        self.strides = _ntuple(self, "strides", strides, rank)
        self.dilation_rate = _ntuple(self, "dilation_rate", dilation_rate, rank)
        self.padding = _padding(self, padding)
        self.spatial_out = None

    @property
    def state_size(self):
        """``[filters, filters]`` (each state is a feature map with that many channels)."""
        return [self.filters, self.filters]

    def build(self, input_shape):
        _expect_rank(self, input_shape, self.rank + 2)
        channels = _known_dim(self, input_shape, -1, "channel dimension")
        out = []
        for size, k, s, d in zip(
            input_shape[1:-1], self.kernel_size, self.strides, self.dilation_rate, strict=True
        ):
            span = d * (k - 1) + 1
            out.append(-(-size // s) if self.padding == "same" else (size - span) // s + 1)
        self.spatial_out = tuple(out)
        width = 4 * self.filters
        self.kernel = self.add_weight(
            shape=self.kernel_size + (channels, width),
            name="kernel",
            initializer=self.kernel_initializer,
            regularizer=self.kernel_regularizer,
            constraint=self.kernel_constraint,
        )
        self.recurrent_kernel = self.add_weight(
            shape=self.kernel_size + (self.filters, width),
            name="recurrent_kernel",
            initializer=self.recurrent_initializer,
            regularizer=self.recurrent_regularizer,
            constraint=self.recurrent_constraint,
        )
        self.bias = None
        if self.use_bias:
            self.bias = self.add_weight(
                shape=(width,),
                name="bias",
                initializer=self._bias_initializer(),
                regularizer=self.bias_regularizer,
                constraint=self.bias_constraint,
            )

    def get_initial_state(self, batch_size=None):
        """Zero feature maps ``[batch_size, *out_spatial, filters]`` for ``h`` and ``c``.

        Args:
            batch_size: The number of sequences.

        Returns:
            ``[h, c]``.
        """
        shape = [batch_size, *self.spatial_out, self.filters]
        return [_core.zeros(shape, dtype=self.compute_dtype) for _ in range(2)]

    def call(self, inputs, states, training=False):
        h, c = states[0], states[1]
        inputs, h_in = self._dropped(inputs, h, training)
        ones = (1,) * self.rank
        z = _conv(self.rank, inputs, self.kernel, self.strides, self.padding, self.dilation_rate)
        z = z + _conv(self.rank, h_in, self.recurrent_kernel, ones, "same", ones)
        if self.bias is not None:
            z = z + self.bias
        z_i, z_f, z_c, z_o = _core.split(z, 4, axis=-1)
        i = self.recurrent_activation(z_i)
        f = self.recurrent_activation(z_f)
        c = f * c + i * self.activation(z_c)
        h = self.recurrent_activation(z_o) * self.activation(c)
        return h, [h, c]

    def get_config(self):
        config = super().get_config()
        del config["units"]
        return {
            **config,
            "filters": self.filters,
            "kernel_size": self.kernel_size,
            "strides": self.strides,
            "padding": self.padding,
            "data_format": "channels_last",
            "dilation_rate": self.dilation_rate,
        }


class _ConvLSTM(RNN):
    _rank = None

    def __init__(
        self,
        filters,
        kernel_size,
        strides=1,
        padding="valid",
        data_format=None,
        dilation_rate=1,
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
        **kwargs,
    ):
        # The eager loop is always unrolled; the flags are Keras's config.
        kwargs.pop("unroll", None)
        kwargs.pop("zero_output_for_mask", None)
        cell = _ConvLSTMCell(
            self._rank,
            filters,
            kernel_size,
            strides,
            padding,
            dilation_rate,
            activation=activation,
            recurrent_activation=recurrent_activation,
            use_bias=use_bias,
            kernel_initializer=kernel_initializer,
            recurrent_initializer=recurrent_initializer,
            bias_initializer=bias_initializer,
            unit_forget_bias=unit_forget_bias,
            kernel_regularizer=kernel_regularizer,
            recurrent_regularizer=recurrent_regularizer,
            bias_regularizer=bias_regularizer,
            kernel_constraint=kernel_constraint,
            recurrent_constraint=recurrent_constraint,
            bias_constraint=bias_constraint,
            dropout=dropout,
            recurrent_dropout=recurrent_dropout,
            seed=seed,
            name="conv_lstm_cell",
            dtype=kwargs.get("dtype"),
        )
        super().__init__(
            cell,
            return_sequences=return_sequences,
            return_state=return_state,
            go_backwards=go_backwards,
            stateful=stateful,
            activity_regularizer=activity_regularizer,
            **kwargs,
        )
        _channels_last(self, data_format)

    def build(self, sequences_shape, initial_state_shape=None):
        _expect_rank(self, sequences_shape, self._rank + 3)
        super().build(sequences_shape, initial_state_shape)

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
            custom_objects: Unused.

        Returns:
            The new layer.
        """
        del custom_objects
        return cls(**config)


class ConvLSTM1D(_ConvLSTM):
    """A convolutional LSTM over ``[batch, time, steps, channels]`` sequences."""

    _rank = 1


class ConvLSTM2D(_ConvLSTM):
    """A convolutional LSTM over ``[batch, time, height, width, channels]`` sequences."""

    _rank = 2


class ConvLSTM3D(_ConvLSTM):
    """A convolutional LSTM over ``[batch, time, depth, height, width, channels]``
    sequences."""

    _rank = 3
