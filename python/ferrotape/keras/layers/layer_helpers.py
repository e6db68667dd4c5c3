"""Argument checks and the kernel/bias base shared by the built-in layers (Keras 3 spreads
these over ``keras.src.utils.argument_validation`` and each layer).
"""

import reprlib

import numpy as np

from ... import _core
from .. import activations, object_registration
from .layer import Layer

# Keras's activations that a native layer call applies itself: the Rust table's names.
_FUSED_ACTIVATIONS = frozenset(_core.keras.FUSED_ACTIVATIONS)


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
    if name in _FUSED_ACTIVATIONS:
        return name, None
    return "linear", fn


def _current_activation(layer):
    """``_split_activation`` of ``layer.activation`` as it is now: Keras reads the attribute on
    every call, so a new activation set after the build takes effect. The split is remembered
    while the attribute holds the same object."""
    activation = layer.activation
    remembered = layer.__dict__.get("_activation_split")
    if remembered is None or remembered[0] is not activation:
        remembered = (activation, *_split_activation(activation))
        object.__setattr__(layer, "_activation_split", remembered)
    return remembered[1], remembered[2]


def _ntuple(layer, what, value, n):
    """Keras's int-or-tuple spatial arguments as a tuple of ``n`` positive ints."""
    values = (value,) * n if _is_int(value) else value
    if (
        not isinstance(values, (tuple, list))
        or len(values) != n
        or not all(_is_int(v) and v >= 1 for v in values)
    ):
        raise ValueError(
            f"{type(layer).__name__}: {what} must be a positive int or a tuple of {n} of them. "
            f"Received: {what}={reprlib.repr(value)}"
        )
    return tuple(int(v) for v in values)


def _pair(layer, what, value):
    """Keras's int-or-tuple spatial arguments as a pair of positive ints."""
    return _ntuple(layer, what, value, 2)


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
    that order, Keras's), and a call that runs the layer's native form with the current
    settings (``_call_settings``), then any activation it cannot apply itself."""

    # Keras's class name of the layer's native form (None: the subclass computes with ops).
    _native_class = None

    def _add_kernel_and_bias(self, kernel_shape, units):
        """Creates the weights and the native form over them."""
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
        if self._native_class is not None:
            self._make_native()

    def _make_native(self):
        self._native = _core.keras.NativeLayer(
            self._native_class, {"kernel": self.kernel, "bias": self.bias}
        )

    def _call_settings(self):
        """The settings other than ``activation`` that the native call reads."""
        return {}

    def call(self, inputs):
        fused, after = _current_activation(self)
        outputs = self._native(inputs, activation=fused, **self._call_settings())
        return outputs if after is None else after(outputs)


def _weight_settings(layer, *weights):
    """Keras's config entries for the named weights' ``*_initializer``, ``*_regularizer`` and
    ``*_constraint`` arguments (those the layer has), serialized as Keras writes them."""
    config = {}
    for weight in weights:
        for part in ("initializer", "regularizer", "constraint"):
            key = f"{weight}_{part}"
            if hasattr(layer, key):
                config[key] = object_registration.serialize_keras_object(getattr(layer, key))
    return config
