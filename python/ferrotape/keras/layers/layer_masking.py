"""Keras 3's masks: a boolean tensor ``[batch, steps]`` riding on a layer's output as its
``_keras_mask`` attribute (as on TensorFlow's eager tensors), saying which steps are real and
which are padding. A mixin of ``Layer`` (kept apart to keep ``layer.py`` short).

A layer whose ``call`` takes ``mask`` receives the mask of its input unless one is passed; with
several tensor arguments, ``<argument>_mask`` receives that argument's mask
(``MultiHeadAttention``'s ``query_mask``/``value_mask``). A layer that ``supports_masking``
puts ``compute_mask(inputs, previous_mask)`` on its outputs (by default the input's mask passes
through unchanged); a layer that does not drops the mask, with a warning. Sequential and
functional models and subclassed models calling their layers all carry masks this way, as
they run the layers eagerly on tensors.

>>> import ferrotape as ft
>>> embed = ft.keras.layers.Embedding(5, 2, mask_zero=True)
>>> vectors = embed(ft.constant([[3, 1, 0, 0]]))
>>> vectors._keras_mask.numpy().tolist()
[[True, True, False, False]]
>>> pooled = ft.keras.layers.GlobalAveragePooling1D()(vectors)  # averages the first two steps
"""

import inspect
import warnings

from ... import _core, nest

_PARAMETERS = {}  # call function -> its parameter names (self excluded)


def get_keras_mask(x):
    """The mask attached to a tensor (Keras 3's ``backend.get_keras_mask``).

    Args:
        x: A tensor (or any value).

    Returns:
        Its ``_keras_mask``, or None.
    """
    return getattr(x, "_keras_mask", None)


def set_keras_mask(x, mask):
    """Attaches a mask to a tensor (Keras 3's ``backend.set_keras_mask``).

    Args:
        x: The tensor; other values are left alone.
        mask: The boolean mask, or None to clear it.
    """
    if isinstance(x, _core.Tensor):
        x._keras_mask = mask


def _keep_mask(source, converted):
    """``converted`` (a cast of ``source``) with ``source``'s mask, as Keras keeps it."""
    mask = get_keras_mask(source)
    if mask is not None:
        set_keras_mask(converted, mask)
    return converted


def _parameter_names(call):
    names = _PARAMETERS.get(call)
    if names is None:
        try:
            names = tuple(inspect.signature(call).parameters)[1:]
        except (TypeError, ValueError):
            names = ()
        _PARAMETERS[call] = names
    return names


def _masks_of(value):
    if isinstance(value, _core.Tensor):
        return get_keras_mask(value)
    return nest.map_structure(get_keras_mask, value)


def _any_mask(masks):
    return any(m is not None for m in nest.flatten(masks))


class LayerMasking:
    """``supports_masking``, ``compute_mask`` and the mask bookkeeping of ``Layer.__call__``."""

    @property
    def supports_masking(self):
        """Whether the layer puts ``compute_mask``'s result on its outputs: true when set so
        (on the layer or its class), or when the layer's class overrides ``compute_mask``."""
        explicit = getattr(self, "_supports_masking", None)
        if explicit is not None:
            return explicit
        return type(self).compute_mask is not LayerMasking.compute_mask

    @supports_masking.setter
    def supports_masking(self, value):
        object.__setattr__(self, "_supports_masking", bool(value))

    def compute_mask(self, inputs, previous_mask):
        """The mask of the layer's output for ``inputs`` whose mask is ``previous_mask``.

        Args:
            inputs: The layer's inputs.
            previous_mask: Their mask (or a structure of masks), or None.

        Returns:
            The output's mask; by default ``previous_mask`` unchanged.
        """
        del inputs
        return previous_mask

    def _fill_mask_arguments(self, inputs, rest, kwargs):
        """Keras 3's mask arguments: ``mask`` (one tensor argument) or ``<name>_mask`` (several)
        taken from the arguments' attached masks where the caller passed none. Returns the
        input mask that ``compute_mask`` is given."""
        names = _parameter_names(type(self).call)
        if not any(name.endswith("mask") for name in names):
            return _masks_of(inputs)
        arguments = dict(zip(names, (inputs, *rest), strict=False))
        arguments.update(kwargs)
        if "mask" in names and arguments.get("mask") is not None:
            return arguments["mask"]
        tensors = {
            name: value
            for name, value in arguments.items()
            if value is not None
            and not name.endswith("mask")
            and any(isinstance(v, _core.Tensor) for v in nest.flatten(value))
        }
        if len(tensors) == 1 and "mask" in names:
            mask = _masks_of(next(iter(tensors.values())))
            if _any_mask(mask):
                kwargs["mask"] = mask
                return mask
        elif len(tensors) > 1:
            for name, value in tensors.items():
                key = f"{name}_mask"
                if key in names and arguments.get(key) is None:
                    mask = _masks_of(value)
                    if _any_mask(mask):
                        kwargs[key] = mask
        return _masks_of(inputs)

    def _set_mask_metadata(self, inputs, outputs, previous_mask):
        """Attaches ``compute_mask``'s masks to the outputs that carry none yet."""
        if not self.supports_masking:
            if _any_mask(previous_mask):
                warnings.warn(
                    f"Layer '{self.name}' (of type {type(self).__name__}) was passed an input "
                    "with a mask attached to it. However, this layer does not support masking "
                    "and will therefore destroy the mask information. Downstream layers will "
                    "not see the mask.",
                    stacklevel=3,
                )
            return
        flat_outputs = nest.flatten(outputs)
        if all(get_keras_mask(x) is not None for x in flat_outputs):
            return
        output_masks = self.compute_mask(inputs, previous_mask)
        if output_masks is None:
            return
        for tensor, mask in zip(flat_outputs, nest.flatten(output_masks), strict=False):
            if mask is not None and get_keras_mask(tensor) is None:
                set_keras_mask(tensor, mask)
