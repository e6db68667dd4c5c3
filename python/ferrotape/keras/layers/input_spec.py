"""``InputSpec`` (Keras 3's ``keras.src.layers.input_spec``): what a layer's inputs must look
like, checked on every call when a layer sets ``self.input_spec``.

>>> import ferrotape as ft
>>> class Images(ft.keras.layers.Layer):
...     def __init__(self):
...         super().__init__()
...         self.input_spec = ft.keras.layers.InputSpec(ndim=4, axes={-1: 3})
...     def call(self, inputs):
...         return inputs
>>> Images()(ft.ones([2, 8, 8, 3])).shape
TensorShape([2, 8, 8, 3])
"""

from ..backend_dtypes import as_dtype


class InputSpec:
    """The rank (``ndim``, ``min_ndim``, ``max_ndim``), ``shape`` (None for any size),
    ``dtype`` and sizes of given ``axes`` (``{axis: size}``) one input must have."""

    def __init__(
        self,
        dtype=None,
        shape=None,
        ndim=None,
        max_ndim=None,
        min_ndim=None,
        axes=None,
        allow_last_axis_squeeze=False,
        name=None,
        optional=False,
    ):
        self.dtype = None if dtype is None else as_dtype(dtype).name
        if shape is not None:
            self.shape = tuple(None if d is None else int(d) for d in shape)
            self.ndim = len(self.shape)
        else:
            self.shape = None
            self.ndim = ndim
        self.max_ndim = max_ndim
        self.min_ndim = min_ndim
        self.name = name
        self.optional = bool(optional)
        self.allow_last_axis_squeeze = bool(allow_last_axis_squeeze)
        try:
            self.axes = {int(k): v for k, v in (axes or {}).items()}
        except (ValueError, TypeError, AttributeError):
            raise TypeError(
                f"Argument `axes` must be a dict with integer keys. Received: axes={axes}"
            ) from None
        top = self.ndim if self.ndim is not None else self.max_ndim
        if self.axes and top is not None and max(self.axes) > top - 1:
            raise ValueError(
                f"Axis {max(self.axes)} is greater than the maximum allowed value: {top - 1}"
            )

    def __repr__(self):
        parts = [
            f"{key}={value}"
            for key, value in (
                ("dtype", self.dtype),
                ("shape", self.shape),
                ("ndim", self.ndim),
                ("max_ndim", self.max_ndim),
                ("min_ndim", self.min_ndim),
                ("axes", self.axes),
            )
            if value
        ]
        return f"InputSpec({', '.join(parts)})"

    def get_config(self):
        """The spec's arguments.

        Returns:
            A dict that ``from_config`` turns back into the spec.
        """
        return {
            "dtype": self.dtype,
            "shape": self.shape,
            "ndim": self.ndim,
            "max_ndim": self.max_ndim,
            "min_ndim": self.min_ndim,
            "axes": self.axes,
            "optional": self.optional,
        }

    @classmethod
    def from_config(cls, config):
        """A spec made from ``get_config``'s output.

        Args:
            config: The dict ``get_config`` returned.

        Returns:
            The new ``InputSpec``.
        """
        return cls(**config)


def _incompatible(index, spec, layer_name, what, shape):
    return ValueError(
        f"Input {index} with name '{spec.name}' of layer '{layer_name}' is incompatible with "
        f"the layer: {what}. Full shape received: {shape}"
    )


def assert_input_compatibility(input_spec, inputs, layer_name):
    """Raises a ValueError naming the layer when ``inputs`` do not meet ``input_spec``.

    Args:
        input_spec: An ``InputSpec``, or a list of them (one per input; None: anything).
        inputs: The call's (converted) inputs: a tensor or a list of them.
        layer_name: The layer's name, for the message.
    """
    specs = input_spec if isinstance(input_spec, (list, tuple)) else [input_spec]
    values = list(inputs.values()) if isinstance(inputs, dict) else inputs
    values = list(values) if isinstance(values, (list, tuple)) else [values]
    if len(values) != len(specs):
        raise ValueError(
            f'Layer "{layer_name}" expects {len(specs)} input(s), but it received '
            f"{len(values)} input tensors. Inputs received: {inputs}"
        )
    for index, (x, spec) in enumerate(zip(values, specs, strict=True)):
        if spec is None or (x is None and spec.optional):
            continue
        if not hasattr(x, "shape"):
            raise ValueError(
                f"Inputs to a layer should be tensors. Got '{x}' (of type {type(x)}) as input "
                f"for layer '{layer_name}'."
            )
        shape = tuple(x.shape)
        ndim = len(shape)
        if spec.ndim is not None and not spec.allow_last_axis_squeeze and ndim != spec.ndim:
            raise _incompatible(
                index, spec, layer_name, f"expected ndim={spec.ndim}, found ndim={ndim}", shape
            )
        if spec.max_ndim is not None and ndim > spec.max_ndim:
            raise _incompatible(
                index,
                spec,
                layer_name,
                f"expected max_ndim={spec.max_ndim}, found ndim={ndim}",
                shape,
            )
        if spec.min_ndim is not None and ndim < spec.min_ndim:
            raise _incompatible(
                index,
                spec,
                layer_name,
                f"expected min_ndim={spec.min_ndim}, found ndim={ndim}",
                shape,
            )
        if spec.dtype is not None and x.dtype.name != spec.dtype:
            raise ValueError(
                f"Input {index} with name '{spec.name}' of layer '{layer_name}' is incompatible "
                f"with the layer: expected dtype={spec.dtype}, found dtype={x.dtype.name}"
            )
        for axis, size in spec.axes.items():
            if size is not None and -ndim <= axis < ndim and shape[axis] not in (size, None):
                raise _incompatible(
                    index,
                    spec,
                    layer_name,
                    f"expected axis {axis} of input shape to have value {size}",
                    shape,
                )
        if spec.shape is not None:
            dims = shape[: len(spec.shape)] if spec.allow_last_axis_squeeze else shape
            for want, got in zip(spec.shape, dims, strict=False):
                if want is not None and got is not None and want != got:
                    raise _incompatible(
                        index,
                        spec,
                        layer_name,
                        f"expected shape={spec.shape}, found shape={shape}",
                        shape,
                    )
