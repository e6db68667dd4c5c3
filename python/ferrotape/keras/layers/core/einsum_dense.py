"""``EinsumDense`` (Keras 3's ``keras.src.layers.core.einsum_dense``).

>>> import ferrotape as ft
>>> layer = ft.keras.layers.EinsumDense("abc,cde->abde", output_shape=(None, 4, 8), bias_axes="de")
>>> layer(ft.ones([2, 5, 16])).shape
TensorShape([2, 5, 4, 8])
>>> [w.shape.as_list() for w in layer.weights]
[[16, 4, 8], [4, 8]]
"""

import re

from .... import einsum
from ... import activations, initializers, regularizers
from ..layer import Layer
from ..layer_helpers import _weight_settings


def _shapes(equation, bias_axes, input_shape, output_shape):
    """Keras's analysis of ``equation``: the kernel shape and the bias shape (None without
    ``bias_axes``). ``output_shape`` leaves out the batch axis and any axes under ``...``."""
    plain = equation.replace("...", "0")
    left = False
    match = re.fullmatch(r"([a-zA-Z]+),([a-zA-Z]+)->([a-zA-Z]+)", plain)
    if match is None:
        match = re.fullmatch(r"0([a-zA-Z]+),([a-zA-Z]+)->0([a-zA-Z]+)", plain)
        left = match is not None
    if match is None:
        match = re.fullmatch(r"([a-zA-Z]{2,})0,([a-zA-Z]+)->([a-zA-Z]+)0", plain)
    if match is None:
        raise ValueError(
            f"Invalid einsum equation '{equation}'. Equations must be in the form "
            "[X],[Y]->[Z], ...[X],[Y]->...[Z], or [X]...,[Y]->[Z]...."
        )
    input_spec, weight_spec, output_spec = match.groups()
    elided = len(input_shape) - len(input_spec)
    output = [input_shape[0], *output_shape]
    if elided > 0 and left:
        for i in range(1, elided):
            output.insert(1, input_shape[i])
    elif elided > 0:
        output.extend(input_shape[len(input_shape) - elided :])
    shift = elided if left else 0
    input_at = {c: (i + elided - len(input_shape) if left else i) for i, c in enumerate(input_spec)}
    output_at = {c: i + shift for i, c in enumerate(output_spec)}
    for c in input_spec:
        if c in output_at and output[output_at[c]] not in (None, input_shape[input_at[c]]):
            raise ValueError(
                f"Input shape and output shape do not match at shared dimension '{c}'. Input "
                f"shape is {input_shape[input_at[c]]}, and output shape is {output[output_at[c]]}."
            )
    kernel = []
    for c in weight_spec:
        if c in output_at:
            kernel.append(output[output_at[c]])
        elif c in input_at:
            kernel.append(input_shape[input_at[c]])
        else:
            raise ValueError(
                f"Weight dimension '{c}' did not have a match in either the input spec "
                f"'{input_spec}' or the output spec '{output_spec}'. For this layer, the weight "
                "must be fully specified."
            )
    if bias_axes is None:
        return kernel, None
    for c in bias_axes:
        if c not in output_spec:
            raise ValueError(
                f"Bias dimension '{c}' was requested, but is not part of the output spec "
                f"'{output_spec}'"
            )
    first = min(output_spec.find(c) for c in bias_axes)
    bias = [output[output_at[c]] if c in bias_axes else 1 for c in output_spec[first:]]
    if not left:
        bias.extend([1] * elided)
    return kernel, bias


class EinsumDense(Layer):
    """A dense layer whose product is any ``einsum`` of the inputs and a kernel:
    ``activation(einsum(equation, inputs, kernel) + bias)``. The kernel's shape follows from
    ``equation`` and ``output_shape`` (the output without its batch axis; None keeps an input
    size); ``bias_axes`` names the output axes the bias spans."""

    # Keras 3's attribute for the kernel, the name checkpoints give it (ferrotape.trackable).
    _checkpoint_names = {"kernel": "_kernel"}

    def __init__(
        self,
        equation,
        output_shape,
        activation=None,
        bias_axes=None,
        kernel_initializer="glorot_uniform",
        bias_initializer="zeros",
        kernel_regularizer=None,
        bias_regularizer=None,
        kernel_constraint=None,
        bias_constraint=None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        if not isinstance(equation, str):
            raise ValueError(f"EinsumDense: equation must be a string. Received: {equation!r}")
        self.equation = equation
        if isinstance(output_shape, int):
            output_shape = (output_shape,)
        self.partial_output_shape = tuple(output_shape)
        self.bias_axes = bias_axes
        self.activation = activations.get(activation)
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.kernel_regularizer = regularizers.get(kernel_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.kernel_constraint = kernel_constraint
        self.bias_constraint = bias_constraint

    def build(self, input_shape):
        kernel_shape, bias_shape = _shapes(
            self.equation, self.bias_axes, tuple(input_shape), self.partial_output_shape
        )
        if any(d is None for d in kernel_shape + (bias_shape or [])):
            raise ValueError(
                f"EinsumDense: the kernel and bias sizes must be known; equation "
                f"{self.equation!r} with input shape {tuple(input_shape)} gives kernel "
                f"{kernel_shape} and bias {bias_shape}"
            )
        self.kernel = self.add_weight(
            name="kernel",
            shape=tuple(kernel_shape),
            initializer=self.kernel_initializer,
            regularizer=self.kernel_regularizer,
            constraint=self.kernel_constraint,
        )
        self.bias = None
        if bias_shape is not None:
            self.bias = self.add_weight(
                name="bias",
                shape=tuple(bias_shape),
                initializer=self.bias_initializer,
                regularizer=self.bias_regularizer,
                constraint=self.bias_constraint,
            )

    def call(self, inputs):
        outputs = einsum(self.equation, inputs, self.kernel)
        if self.bias is not None:
            outputs = outputs + self.bias
        return self.activation(outputs)

    def get_config(self):
        return {
            **super().get_config(),
            "equation": self.equation,
            "output_shape": self.partial_output_shape,
            "activation": activations.serialize(self.activation),
            "bias_axes": self.bias_axes,
            **_weight_settings(self, "kernel", "bias"),
        }
