"""``ft.keras.layers``: Keras's layers, computing in Rust.

Each layer here follows Keras's protocol through :class:`~ferrotape.keras.engine.Layer` (names,
``build`` on the first call, ``add_weight`` with initializers and regularizers) and, once built,
hands its variables to a core object from ``ferrotape._core.keras`` (the ``ferrotape-keras``
crate) that computes the whole call in one Rust call. Layers with no weights and no state
(``Flatten``, ``Reshape``, pooling, merging) call a single ferrotape op.

>>> import ferrotape as ft
>>> layer = ft.keras.layers.Dense(3, activation="relu")
>>> layer(ft.ones([2, 4])).shape
TensorShape([2, 3])
>>> [w.shape.as_list() for w in layer.weights]
[[4, 3], [3]]
"""

import inspect
import reprlib

import numpy as np

from .. import _core, nn
from .. import random as ft_random
from . import activations, initializers, regularizers
from .engine import Input, InputLayer, Layer
from .layers_activation import ELU, LeakyReLU, PReLU, ReLU
from .layers_reshaping import Cropping2D, UpSampling2D, ZeroPadding2D

# The activations the Rust cores apply inside their call (see ferrotape-keras's Activation).
_CORE_ACTIVATIONS = {
    "linear",
    "relu",
    "relu6",
    "sigmoid",
    "tanh",
    "softmax",
    "log_softmax",
    "elu",
    "selu",
    "gelu",
    "softplus",
    "swish",
    "silu",
}


def _split_activation(activation):
    """``(name the Rust core applies, Python callable applied after it or None)``: Keras's
    named activations and ferrotape's own ``ft.nn`` functions run inside the core; any other
    callable runs after a linear core call."""
    fn = activations.get(activation)
    name = activations._NATIVE_NAMES.get(id(fn))
    if name is None:
        candidate = getattr(fn, "__name__", None)
        if candidate in activations._BY_NAME and activations._BY_NAME[candidate] is fn:
            name = candidate
    if name in _CORE_ACTIVATIONS:
        return name, None
    return "linear", fn


def _pair(layer, what, value):
    """Keras's int-or-tuple spatial arguments as a pair of positive ints."""
    pair = (value, value) if _is_int(value) else value
    if (
        not isinstance(pair, (tuple, list))
        or len(pair) != 2
        or not all(_is_int(v) and v >= 1 for v in pair)
    ):
        raise ValueError(
            f"{type(layer).__name__}: {what} must be a positive int or a pair of them. "
            f"Received: {what}={reprlib.repr(value)}"
        )
    return (int(pair[0]), int(pair[1]))


def _float_arg(who, name, value):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.number)):
        raise ValueError(f"{who}: {name} must be a number. Received: {name}={reprlib.repr(value)}")
    return float(value)


def _is_int(value):
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _padding(layer, padding):
    padding = str(padding).lower()
    if padding not in ("same", "valid"):
        raise ValueError(
            f"{type(layer).__name__}: padding must be 'same' or 'valid'. "
            f"Received: padding={padding!r}"
        )
    return padding


def _channels_last(layer, data_format):
    if data_format not in (None, "channels_last"):
        raise ValueError(
            f"{type(layer).__name__}: only data_format='channels_last' (NHWC) is supported, "
            f"received {data_format!r}"
        )


def _expect_rank(layer, input_shape, rank):
    if len(input_shape) != rank:
        raise ValueError(
            f"Input 0 of layer {layer.name!r} ({type(layer).__name__}) is incompatible with the "
            f"layer: expected ndim={rank}, found ndim={len(input_shape)}. "
            f"Full shape received: {tuple(input_shape)}"
        )


def _known_dim(layer, input_shape, axis, what):
    if len(input_shape) < 2:
        raise ValueError(
            f"Input 0 of layer {layer.name!r} ({type(layer).__name__}) is incompatible with the "
            f"layer: expected min_ndim=2, found ndim={len(input_shape)}. "
            f"Full shape received: {tuple(input_shape)}"
        )
    dim = input_shape[axis]
    if dim is None:
        raise ValueError(
            f"{type(layer).__name__}: the {what} of the input must be known, received input "
            f"shape {tuple(input_shape)}"
        )
    return int(dim)


class _KernelLayer(Layer):
    """What Dense and the convolutions share: a ``kernel`` and an optional ``bias`` (created in
    that order, Keras's), and a call that runs the Rust core then any activation it cannot
    apply itself."""

    def _add_kernel_and_bias(self, kernel_shape, units):
        """Creates the weights; returns the activation name the core applies."""
        self.kernel = self.add_weight(
            shape=kernel_shape,
            initializer=self.kernel_initializer,
            regularizer=self.kernel_regularizer,
            constraint=self.kernel_constraint,
            name="kernel",
        )
        self.bias = None
        if self.use_bias:
            self.bias = self.add_weight(
                shape=(units,),
                initializer=self.bias_initializer,
                regularizer=self.bias_regularizer,
                constraint=self.bias_constraint,
                name="bias",
            )
        core_activation, self._after = _split_activation(self.activation)
        return core_activation

    def call(self, inputs):
        outputs = self._core(inputs)
        return outputs if self._after is None else self._after(outputs)


class Dense(_KernelLayer):
    """``activation(inputs @ kernel + bias)`` on the last axis of ``inputs``."""

    def __init__(
        self,
        units,
        activation=None,
        use_bias=True,
        kernel_initializer="glorot_uniform",
        bias_initializer="zeros",
        kernel_regularizer=None,
        bias_regularizer=None,
        activity_regularizer=None,
        kernel_constraint=None,
        bias_constraint=None,
        **kwargs,
    ):
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        if not _is_int(units) or units < 1:
            raise ValueError(
                f"{type(self).__name__}: received an invalid value for `units`, expected a "
                f"positive integer. Received: units={reprlib.repr(units)}"
            )
        self.units = int(units)
        self.activation = activations.get(activation)
        self.use_bias = bool(use_bias)
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.kernel_regularizer = regularizers.get(kernel_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.kernel_constraint = kernel_constraint
        self.bias_constraint = bias_constraint

    def build(self, input_shape):
        features = _known_dim(self, input_shape, -1, "last dimension")
        core_activation = self._add_kernel_and_bias((features, self.units), self.units)
        self._core = _core.keras.Dense(self.kernel, self.bias, core_activation)

    def get_config(self):
        return {
            **super().get_config(),
            "units": self.units,
            "activation": activations.serialize(self.activation),
            "use_bias": self.use_bias,
        }


class _Conv2DBase(_KernelLayer):
    _core_class = None

    def __init__(
        self,
        kernel_size,
        strides,
        padding,
        data_format,
        dilation_rate,
        activation,
        use_bias,
        kernel_initializer,
        bias_initializer,
        kernel_regularizer,
        bias_regularizer,
        activity_regularizer,
        kernel_constraint,
        bias_constraint,
        **kwargs,
    ):
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        _channels_last(self, data_format)
        self.kernel_size = _pair(self, "kernel_size", kernel_size)
        self.strides = _pair(self, "strides", strides)
        self.dilation_rate = _pair(self, "dilation_rate", dilation_rate)
        if self.strides != (1, 1) and self.dilation_rate != (1, 1):
            raise ValueError(
                f"{type(self).__name__}: strides > 1 are not supported together with "
                f"dilation_rate > 1 (received strides={self.strides}, "
                f"dilation_rate={self.dilation_rate})"
            )
        self.padding = _padding(self, padding)
        self.data_format = "channels_last"
        self.activation = activations.get(activation)
        self.use_bias = bool(use_bias)
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.kernel_regularizer = regularizers.get(kernel_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.kernel_constraint = kernel_constraint
        self.bias_constraint = bias_constraint

    def _kernel_shape(self, channels):
        raise NotImplementedError

    def _output_channels(self, channels):
        raise NotImplementedError

    def build(self, input_shape):
        _expect_rank(self, input_shape, 4)
        channels = _known_dim(self, input_shape, -1, "channel dimension")
        core_activation = self._add_kernel_and_bias(
            self._kernel_shape(channels), self._output_channels(channels)
        )
        self._core = self._core_class(
            self.kernel,
            self.bias,
            self.strides,
            self.dilation_rate,
            self.padding,
            core_activation,
        )

    def get_config(self):
        return {
            **super().get_config(),
            "kernel_size": self.kernel_size,
            "strides": self.strides,
            "padding": self.padding,
            "dilation_rate": self.dilation_rate,
            "activation": activations.serialize(self.activation),
            "use_bias": self.use_bias,
        }


class Conv2D(_Conv2DBase):
    """2-D convolution over NHWC images: ``activation(conv2d(inputs, kernel) + bias)`` with an
    HWIO kernel ``kernel_size + (input channels, filters)``."""

    _core_class = _core.keras.Conv2D

    def __init__(
        self,
        filters,
        kernel_size,
        strides=(1, 1),
        padding="valid",
        data_format=None,
        dilation_rate=(1, 1),
        groups=1,
        activation=None,
        use_bias=True,
        kernel_initializer="glorot_uniform",
        bias_initializer="zeros",
        kernel_regularizer=None,
        bias_regularizer=None,
        activity_regularizer=None,
        kernel_constraint=None,
        bias_constraint=None,
        **kwargs,
    ):
        if not _is_int(filters) or filters < 1:
            raise ValueError(
                f"{type(self).__name__}: received an invalid value for `filters`, expected a "
                f"positive integer. Received: filters={reprlib.repr(filters)}"
            )
        if groups != 1:
            raise ValueError(f"Conv2D: only groups=1 is supported. Received: groups={groups!r}")
        self.filters = int(filters)
        self.groups = 1
        super().__init__(
            kernel_size,
            strides,
            padding,
            data_format,
            dilation_rate,
            activation,
            use_bias,
            kernel_initializer,
            bias_initializer,
            kernel_regularizer,
            bias_regularizer,
            activity_regularizer,
            kernel_constraint,
            bias_constraint,
            **kwargs,
        )

    def _kernel_shape(self, channels):
        return self.kernel_size + (channels, self.filters)

    def _output_channels(self, channels):
        return self.filters

    def get_config(self):
        return {**super().get_config(), "filters": self.filters}


class DepthwiseConv2D(_Conv2DBase):
    """Each input channel convolved with its own ``depth_multiplier`` filters; output channel
    ``c * depth_multiplier + q``."""

    _core_class = _core.keras.DepthwiseConv2D

    def __init__(
        self,
        kernel_size,
        strides=(1, 1),
        padding="valid",
        depth_multiplier=1,
        data_format=None,
        dilation_rate=(1, 1),
        activation=None,
        use_bias=True,
        depthwise_initializer="glorot_uniform",
        bias_initializer="zeros",
        depthwise_regularizer=None,
        bias_regularizer=None,
        activity_regularizer=None,
        depthwise_constraint=None,
        bias_constraint=None,
        **kwargs,
    ):
        if not _is_int(depth_multiplier) or depth_multiplier < 1:
            raise ValueError(
                f"DepthwiseConv2D: depth_multiplier must be a positive integer. "
                f"Received: depth_multiplier={depth_multiplier!r}"
            )
        self.depth_multiplier = int(depth_multiplier)
        super().__init__(
            kernel_size,
            strides,
            padding,
            data_format,
            dilation_rate,
            activation,
            use_bias,
            depthwise_initializer,
            bias_initializer,
            depthwise_regularizer,
            bias_regularizer,
            activity_regularizer,
            depthwise_constraint,
            bias_constraint,
            **kwargs,
        )

    def _kernel_shape(self, channels):
        return self.kernel_size + (channels, self.depth_multiplier)

    def _output_channels(self, channels):
        return channels * self.depth_multiplier

    def get_config(self):
        return {**super().get_config(), "depth_multiplier": self.depth_multiplier}


class _Pooling2D(Layer):
    _op = None

    def __init__(self, pool_size=(2, 2), strides=None, padding="valid", data_format=None, **kwargs):
        super().__init__(**kwargs)
        _channels_last(self, data_format)
        self.pool_size = _pair(self, "pool_size", pool_size)
        self.strides = self.pool_size if strides is None else _pair(self, "strides", strides)
        self.padding = _padding(self, padding)
        self.data_format = "channels_last"

    def build(self, input_shape):
        _expect_rank(self, input_shape, 4)

    def call(self, inputs):
        return type(self)._op(inputs, self.pool_size, self.strides, self.padding.upper())

    def get_config(self):
        return {
            **super().get_config(),
            "pool_size": self.pool_size,
            "strides": self.strides,
            "padding": self.padding,
        }


class MaxPooling2D(_Pooling2D):
    """The maximum of each ``pool_size`` window (strides default to ``pool_size``)."""

    _op = staticmethod(nn.max_pool2d)


class AveragePooling2D(_Pooling2D):
    """The mean of each ``pool_size`` window (``same`` padding averages only real pixels)."""

    _op = staticmethod(nn.avg_pool2d)


class _GlobalPooling2D(Layer):
    _reduce = None

    def __init__(self, data_format=None, keepdims=False, **kwargs):
        super().__init__(**kwargs)
        _channels_last(self, data_format)
        self.data_format = "channels_last"
        self.keepdims = bool(keepdims)

    def build(self, input_shape):
        _expect_rank(self, input_shape, 4)

    def call(self, inputs):
        return type(self)._reduce(inputs, [1, 2], keepdims=self.keepdims)

    def get_config(self):
        return {**super().get_config(), "keepdims": self.keepdims}


class GlobalAveragePooling2D(_GlobalPooling2D):
    """The mean over height and width: ``[n, h, w, c] -> [n, c]``."""

    _reduce = staticmethod(_core.reduce_mean)


class GlobalMaxPooling2D(_GlobalPooling2D):
    """The maximum over height and width: ``[n, h, w, c] -> [n, c]``."""

    _reduce = staticmethod(_core.reduce_max)


class _Normalization(Layer):
    """What BatchNormalization and LayerNormalization share: the optional scale ``gamma`` and
    offset ``beta``, created in that order (Keras's)."""

    def _add_scale_and_offset(self, shape):
        self.gamma = None
        self.beta = None
        if self.scale:
            self.gamma = self.add_weight(
                shape=shape,
                initializer=self.gamma_initializer,
                regularizer=self.gamma_regularizer,
                constraint=self.gamma_constraint,
                name="gamma",
            )
        if self.center:
            self.beta = self.add_weight(
                shape=shape,
                initializer=self.beta_initializer,
                regularizer=self.beta_regularizer,
                constraint=self.beta_constraint,
                name="beta",
            )


class BatchNormalization(_Normalization):
    """Normalises each feature along ``axis``: with the batch's mean and (biased) variance when
    ``training=True``, updating the moving averages as ``moving * momentum + batch * (1 -
    momentum)``; with the moving averages otherwise (Keras 3: calls without ``training`` run in
    inference mode)."""

    def __init__(
        self,
        axis=-1,
        momentum=0.99,
        epsilon=1e-3,
        center=True,
        scale=True,
        beta_initializer="zeros",
        gamma_initializer="ones",
        moving_mean_initializer="zeros",
        moving_variance_initializer="ones",
        beta_regularizer=None,
        gamma_regularizer=None,
        beta_constraint=None,
        gamma_constraint=None,
        synchronized=False,
        **kwargs,
    ):
        super().__init__(**kwargs)
        if isinstance(axis, (list, tuple)):
            if len(axis) != 1:
                raise ValueError(
                    f"BatchNormalization: only one axis is supported. Received: axis={axis!r}"
                )
            axis = axis[0]
        if not _is_int(axis):
            raise ValueError(f"BatchNormalization: axis must be an int. Received: axis={axis!r}")
        self.axis = int(axis)
        self.momentum = _float_arg("BatchNormalization", "momentum", momentum)
        self.epsilon = _float_arg("BatchNormalization", "epsilon", epsilon)
        if not 0.0 <= self.momentum <= 1.0:
            raise ValueError(
                f"BatchNormalization: momentum must be in [0, 1]. Received: momentum={momentum!r}"
            )
        if not self.epsilon > 0:  # NaN too
            raise ValueError(
                f"BatchNormalization: epsilon must be positive. Received: epsilon={epsilon!r}"
            )
        self.center = bool(center)
        self.scale = bool(scale)
        self.beta_initializer = initializers.get(beta_initializer)
        self.gamma_initializer = initializers.get(gamma_initializer)
        self.moving_mean_initializer = initializers.get(moving_mean_initializer)
        self.moving_variance_initializer = initializers.get(moving_variance_initializer)
        self.beta_regularizer = regularizers.get(beta_regularizer)
        self.gamma_regularizer = regularizers.get(gamma_regularizer)
        self.beta_constraint = beta_constraint
        self.gamma_constraint = gamma_constraint
        del synchronized  # one device: nothing to synchronise

    def build(self, input_shape):
        rank = len(input_shape)
        if not -rank <= self.axis < rank:
            raise ValueError(
                f"BatchNormalization: axis {self.axis} is out of range for input shape "
                f"{tuple(input_shape)}"
            )
        features = _known_dim(self, input_shape, self.axis, f"axis {self.axis}")
        shape = (features,)
        self._add_scale_and_offset(shape)
        self.moving_mean = self.add_weight(
            shape=shape,
            initializer=self.moving_mean_initializer,
            trainable=False,
            name="moving_mean",
        )
        self.moving_variance = self.add_weight(
            shape=shape,
            initializer=self.moving_variance_initializer,
            trainable=False,
            name="moving_variance",
        )
        self._core = _core.keras.BatchNormalization(
            self.gamma,
            self.beta,
            self.moving_mean,
            self.moving_variance,
            self.axis,
            self.momentum,
            self.epsilon,
        )

    def call(self, inputs, training=False):
        # A frozen layer (trainable=False) always runs in inference mode, as in Keras.
        return self._core(inputs, training=bool(training) and self.trainable)

    def get_config(self):
        return {
            **super().get_config(),
            "axis": self.axis,
            "momentum": self.momentum,
            "epsilon": self.epsilon,
            "center": self.center,
            "scale": self.scale,
        }


class LayerNormalization(_Normalization):
    """Normalises each sample over ``axis`` (the last by default) with its own statistics,
    then scales by ``gamma`` and shifts by ``beta``."""

    def __init__(
        self,
        axis=-1,
        epsilon=1e-3,
        center=True,
        scale=True,
        rms_scaling=False,
        beta_initializer="zeros",
        gamma_initializer="ones",
        beta_regularizer=None,
        gamma_regularizer=None,
        beta_constraint=None,
        gamma_constraint=None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        if rms_scaling:
            raise ValueError("LayerNormalization: rms_scaling=True is not supported")
        self.axis = list(axis) if isinstance(axis, (list, tuple)) else [int(axis)]
        self.epsilon = float(epsilon)
        self.center = bool(center)
        self.scale = bool(scale)
        self.beta_initializer = initializers.get(beta_initializer)
        self.gamma_initializer = initializers.get(gamma_initializer)
        self.beta_regularizer = regularizers.get(beta_regularizer)
        self.gamma_regularizer = regularizers.get(gamma_regularizer)
        self.beta_constraint = beta_constraint
        self.gamma_constraint = gamma_constraint

    def build(self, input_shape):
        rank = len(input_shape)
        for a in self.axis:
            if not -rank <= a < rank:
                raise ValueError(
                    f"LayerNormalization: axis {a} is out of range for input shape "
                    f"{tuple(input_shape)}"
                )
        shape = tuple(
            _known_dim(self, input_shape, a, f"axis {a}")
            for a in sorted(a % rank for a in self.axis)
        )
        self._add_scale_and_offset(shape)
        self._core = _core.keras.LayerNormalization(
            self.gamma, self.beta, [int(a) for a in self.axis], self.epsilon
        )

    def call(self, inputs):
        return self._core(inputs)

    def get_config(self):
        return {
            **super().get_config(),
            "axis": self.axis,
            "epsilon": self.epsilon,
            "center": self.center,
            "scale": self.scale,
        }


class Dropout(Layer):
    """Sets a fraction ``rate`` of the inputs to 0 in training and scales the rest by
    ``1 / (1 - rate)``; the identity otherwise. With ``seed`` the mask stream is reproducible;
    without, it is drawn from ``ft.random``'s global seed at build time."""

    def __init__(self, rate, noise_shape=None, seed=None, **kwargs):
        super().__init__(**kwargs)
        if not isinstance(rate, (int, float, np.number)) or not 0 <= rate <= 1:
            raise ValueError(
                f"Invalid value received for argument `rate`. Expected a float value between "
                f"0 and 1. Received: rate={rate}"
            )
        self.rate = float(rate)
        self.noise_shape = None if noise_shape is None else tuple(noise_shape)
        self.seed = seed

    def build(self, input_shape):
        del input_shape
        if self.seed is not None:
            seed = int(self.seed)
        else:
            seed = int(ft_random.uniform([], maxval=2**31 - 1, dtype="int32"))
        # A rate of 1 drops everything: the core's scale 1 / (1 - rate) would divide by zero.
        rate = min(self.rate, 1.0 - 1e-7)
        self._core = _core.keras.Dropout(
            rate,
            seed,
            None
            if self.noise_shape is None
            else [None if d is None else int(d) for d in self.noise_shape],
        )

    def call(self, inputs, training=False):
        if training and self.rate >= 1.0:
            return inputs * 0.0
        return self._core(inputs, training=bool(training))

    def get_config(self):
        return {
            **super().get_config(),
            "rate": self.rate,
            "noise_shape": self.noise_shape,
            "seed": self.seed,
        }


class Flatten(Layer):
    """``[n, d1, d2, ...] -> [n, d1 * d2 * ...]``."""

    def __init__(self, data_format=None, **kwargs):
        super().__init__(**kwargs)
        _channels_last(self, data_format)

    def call(self, inputs):
        shape = inputs.shape.as_list()
        if not shape:
            raise ValueError("Flatten: the input must have a batch axis, received a scalar")
        return _core.reshape(inputs, [shape[0], int(np.prod(shape[1:], dtype=np.int64))])


class Reshape(Layer):
    """Reshapes each sample to ``target_shape`` (one entry may be -1)."""

    def __init__(self, target_shape, **kwargs):
        super().__init__(**kwargs)
        if not isinstance(target_shape, (tuple, list)) or not all(
            _is_int(d) and (d >= 1 or d == -1) for d in target_shape
        ):
            raise ValueError(
                f"Reshape: target_shape must be a tuple of positive ints (one may be -1). "
                f"Received: target_shape={reprlib.repr(target_shape)}"
            )
        self.target_shape = tuple(int(d) for d in target_shape)
        if sum(d == -1 for d in self.target_shape) > 1:
            raise ValueError(
                f"Reshape: at most one dimension of target_shape may be -1, "
                f"received {self.target_shape}"
            )

    def call(self, inputs):
        return _core.reshape(inputs, [inputs.shape[0], *self.target_shape])

    def get_config(self):
        return {**super().get_config(), "target_shape": self.target_shape}


class Activation(Layer):
    """Applies an activation function (a Keras name or a callable)."""

    def __init__(self, activation, **kwargs):
        super().__init__(**kwargs)
        self.activation = activations.get(activation)
        self._core_name, self._after = _split_activation(self.activation)

    def call(self, inputs):
        if self._after is not None:
            return self._after(inputs)
        return _core.keras.activation(self._core_name, inputs)

    def get_config(self):
        return {**super().get_config(), "activation": activations.serialize(self.activation)}


class Softmax(Layer):
    """softmax along ``axis``."""

    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        self.axis = int(axis)

    def call(self, inputs):
        return nn.softmax(inputs, axis=self.axis)


class Embedding(Layer):
    """Maps integer ids in ``[0, input_dim)`` to rows of an ``[input_dim, output_dim]`` table."""

    def __init__(
        self,
        input_dim,
        output_dim,
        embeddings_initializer="uniform",
        embeddings_regularizer=None,
        embeddings_constraint=None,
        mask_zero=False,
        **kwargs,
    ):
        kwargs.pop("input_length", None)  # Keras 2's argument: the shape comes from the call
        super().__init__(**kwargs)
        if mask_zero:
            raise ValueError("Embedding: mask_zero=True is not supported (ferrotape has no masks)")
        if not (_is_int(input_dim) and _is_int(output_dim) and input_dim > 0 and output_dim > 0):
            raise ValueError(
                "Embedding: both `input_dim` and `output_dim` should be positive integers. "
                f"Received: input_dim={reprlib.repr(input_dim)} and "
                f"output_dim={reprlib.repr(output_dim)}"
            )
        self.input_dim = int(input_dim)
        self.output_dim = int(output_dim)
        self.embeddings_initializer = initializers.get(embeddings_initializer)
        self.embeddings_regularizer = regularizers.get(embeddings_regularizer)
        self.embeddings_constraint = embeddings_constraint
        self._autocast = False  # ids stay integers

    def build(self, input_shape):
        del input_shape
        self.embeddings = self.add_weight(
            shape=(self.input_dim, self.output_dim),
            initializer=self.embeddings_initializer,
            regularizer=self.embeddings_regularizer,
            constraint=self.embeddings_constraint,
            name="embeddings",
        )
        self._core = _core.keras.Embedding(self.embeddings)

    def call(self, inputs):
        return self._core(inputs)

    def get_config(self):
        return {**super().get_config(), "input_dim": self.input_dim, "output_dim": self.output_dim}


class _Merge(Layer):
    def call(self, inputs):
        if not isinstance(inputs, (list, tuple)) or len(inputs) < 1:
            raise ValueError(
                f"{type(self).__name__}: expected a list of input tensors, received {inputs!r}"
            )
        return self._merge(list(inputs))


class Add(_Merge):
    """The elementwise sum of a list of inputs."""

    def _merge(self, inputs):
        return _core.add_n(inputs) if len(inputs) > 1 else inputs[0]


class Subtract(_Merge):
    """``inputs[0] - inputs[1]``."""

    def _merge(self, inputs):
        if len(inputs) != 2:
            raise ValueError(f"Subtract: expected exactly 2 inputs, received {len(inputs)}")
        return inputs[0] - inputs[1]


class Multiply(_Merge):
    """The elementwise product of a list of inputs."""

    def _merge(self, inputs):
        out = inputs[0]
        for x in inputs[1:]:
            out = out * x
        return out


class Average(_Merge):
    """The elementwise mean of a list of inputs."""

    def _merge(self, inputs):
        return _core.add_n(inputs) / float(len(inputs))


class Concatenate(_Merge):
    """Joins a list of inputs along ``axis``."""

    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        self.axis = int(axis)

    def _merge(self, inputs):
        return _core.concat(inputs, self.axis)

    def get_config(self):
        return {**super().get_config(), "axis": self.axis}


class Conv2DTranspose(_KernelLayer):
    """The transpose of ``Conv2D`` (its input gradient), as used to upsample in decoders and
    GAN generators: ``activation(conv2d_transpose(inputs, kernel) + bias)`` with a kernel of
    shape ``kernel_size + (filters, input channels)``. The output's height is
    ``height * stride`` with ``same`` padding and ``height * stride + max(k - stride, 0)`` with
    ``valid`` padding (Keras's rule, ``k`` the dilated kernel size); likewise the width."""

    def __init__(
        self,
        filters,
        kernel_size,
        strides=(1, 1),
        padding="valid",
        data_format=None,
        dilation_rate=(1, 1),
        activation=None,
        use_bias=True,
        kernel_initializer="glorot_uniform",
        bias_initializer="zeros",
        kernel_regularizer=None,
        bias_regularizer=None,
        activity_regularizer=None,
        kernel_constraint=None,
        bias_constraint=None,
        output_padding=None,
        **kwargs,
    ):
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        if not isinstance(filters, (int, np.integer)) or filters < 1:
            raise ValueError(
                "Conv2DTranspose: filters must be a positive integer. "
                f"Received: filters={filters!r}"
            )
        if output_padding is not None:
            raise ValueError(
                "Conv2DTranspose: only output_padding=None is supported. "
                f"Received: output_padding={output_padding!r}"
            )
        _channels_last(self, data_format)
        self.filters = int(filters)
        self.kernel_size = _pair(self, "kernel_size", kernel_size)
        self.strides = _pair(self, "strides", strides)
        self.dilation_rate = _pair(self, "dilation_rate", dilation_rate)
        self.padding = _padding(self, padding)
        self.data_format = "channels_last"
        self.output_padding = None
        self.activation = activations.get(activation)
        self.use_bias = bool(use_bias)
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.kernel_regularizer = regularizers.get(kernel_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.kernel_constraint = kernel_constraint
        self.bias_constraint = bias_constraint

    def build(self, input_shape):
        _expect_rank(self, input_shape, 4)
        channels = _known_dim(self, input_shape, -1, "channel dimension")
        self._add_kernel_and_bias(self.kernel_size + (self.filters, channels), self.filters)
        # The whole activation runs after the transposed convolution (no fused core here).
        self._after = None if self.activation is activations.get(None) else self.activation

    def _output_length(self, length, axis):
        kernel = self.kernel_size[axis] + (self.kernel_size[axis] - 1) * (
            self.dilation_rate[axis] - 1
        )
        stride = self.strides[axis]
        if self.padding == "same":
            return length * stride
        return length * stride + max(kernel - stride, 0)

    def call(self, inputs):
        n, height, width, _ = inputs.shape
        output_shape = [
            n,
            self._output_length(height, 0),
            self._output_length(width, 1),
            self.filters,
        ]
        outputs = nn.conv2d_transpose(
            inputs,
            self.kernel,
            output_shape,
            self.strides,
            padding=self.padding.upper(),
            dilations=self.dilation_rate,
        )
        if self.bias is not None:
            outputs = nn.bias_add(outputs, self.bias)
        return outputs if self._after is None else self._after(outputs)

    def get_config(self):
        return {
            **super().get_config(),
            "filters": self.filters,
            "kernel_size": self.kernel_size,
            "strides": self.strides,
            "padding": self.padding,
            "dilation_rate": self.dilation_rate,
            "activation": activations.serialize(self.activation),
            "use_bias": self.use_bias,
        }


class Lambda(Layer):
    """Wraps a function of the inputs as a layer: ``function(inputs, **arguments)`` (with
    ``training=`` passed on when the function takes it). Variables the function creates are
    not tracked; write a ``Layer`` subclass for weights."""

    def __init__(self, function, output_shape=None, mask=None, arguments=None, **kwargs):
        super().__init__(**kwargs)
        if not callable(function):
            raise ValueError(f"Lambda: function must be callable. Received: function={function!r}")
        if mask is not None:
            raise ValueError("Lambda: mask is not supported (ferrotape has no masks)")
        self.function = function
        self.output_shape_arg = output_shape
        self.arguments = dict(arguments or {})
        try:
            self._takes_training = "training" in inspect.signature(function).parameters
        except (TypeError, ValueError):  # builtins without a signature
            self._takes_training = False

    def call(self, inputs, training=None):
        if self._takes_training:
            return self.function(inputs, training=training, **self.arguments)
        return self.function(inputs, **self.arguments)

    def get_config(self):
        return {
            **super().get_config(),
            "function": getattr(self.function, "__name__", repr(self.function)),
            "arguments": self.arguments,
        }


MaxPool2D = MaxPooling2D
AvgPool2D = AveragePooling2D
GlobalAvgPool2D = GlobalAveragePooling2D
GlobalMaxPool2D = GlobalMaxPooling2D

__all__ = [
    "Activation",
    "Add",
    "Average",
    "AveragePooling2D",
    "AvgPool2D",
    "BatchNormalization",
    "Concatenate",
    "Conv2D",
    "Conv2DTranspose",
    "Cropping2D",
    "Dense",
    "DepthwiseConv2D",
    "Dropout",
    "ELU",
    "Embedding",
    "Flatten",
    "GlobalAveragePooling2D",
    "GlobalAvgPool2D",
    "GlobalMaxPool2D",
    "GlobalMaxPooling2D",
    "Input",
    "InputLayer",
    "Lambda",
    "Layer",
    "LayerNormalization",
    "LeakyReLU",
    "MaxPool2D",
    "MaxPooling2D",
    "Multiply",
    "PReLU",
    "ReLU",
    "Reshape",
    "Softmax",
    "Subtract",
    "UpSampling2D",
    "ZeroPadding2D",
]
