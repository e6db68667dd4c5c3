"""The legacy backend's functions that loop over an axis (Keras 3's
``keras.src.legacy.backend``): ``map_fn``, ``foldl``/``foldr``, ``cumsum``/``cumprod`` and
``rnn``. They run eagerly as Python loops over the slices, so gradients flow through every
step with the ops that compute it.

>>> import ferrotape as ft
>>> ft.keras.backend.cumsum(ft.constant([1.0, 2.0, 3.0])).numpy().tolist()
[1.0, 3.0, 6.0]
"""

import ferrotape as ft

from .backend_math import _tensor, reverse


def _running(x, axis, combine):
    """The running ``combine`` of ``x``'s slices along ``axis`` (inclusive)."""
    x = _tensor(x)
    size = x.shape[axis]
    if size == 0:
        return x
    slices = ft.split(x, size, axis=axis)
    running, acc = [slices[0]], slices[0]
    for piece in slices[1:]:
        acc = combine(acc, piece)
        running.append(acc)
    return ft.concat(running, axis)


def cumsum(x, axis=0):
    """The cumulative sum along ``axis``."""
    return _running(x, axis, lambda a, b: a + b)


def cumprod(x, axis=0):
    """The cumulative product along ``axis``."""
    return _running(x, axis, lambda a, b: a * b)


def map_fn(fn, elems, name=None, dtype=None):
    """``fn`` applied to each slice of ``elems`` along the first axis, the results stacked."""
    del name
    elems = _tensor(elems)
    results = ft.stack([fn(elems[i]) for i in range(elems.shape[0])])
    return results if dtype is None else ft.cast(results, dtype)


def foldl(fn, elems, initializer=None, name=None):
    """``fn(acc, x)`` folded over the slices of ``elems`` from the first; the accumulator
    starts at ``initializer`` (default: the first slice)."""
    del name
    elems = _tensor(elems)
    items = [elems[i] for i in range(elems.shape[0])]
    acc = items.pop(0) if initializer is None else initializer
    for item in items:
        acc = fn(acc, item)
    return acc


def foldr(fn, elems, initializer=None, name=None):
    """``fn(acc, x)`` folded over the slices of ``elems`` from the last."""
    del name
    elems = _tensor(elems)
    return foldl(fn, reverse(elems, 0), initializer)


def rnn(
    step_function,
    inputs,
    initial_states,
    go_backwards=False,
    mask=None,
    constants=None,
    unroll=False,
    input_length=None,
    time_major=False,
    zero_output_for_mask=False,
    return_all_outputs=True,
):
    """Runs ``step_function`` over the time axis of ``inputs``, threading its states.

    At each step ``output, new_states = step_function(inputs_t, states + constants)``. Where
    ``mask`` is False for a sample, its states keep their previous values and its output
    repeats the previous one (0 with ``zero_output_for_mask``).

    Args:
        step_function: ``(inputs_t, states) -> (output_t, new_states)``.
        inputs: a tensor (or nest of tensors) of shape ``(batch, time, ...)``, or
            ``(time, batch, ...)`` with ``time_major``.
        initial_states: a list of state tensors ``(batch, ...)``.
        go_backwards: iterate from the last step to the first.
        mask: a bool tensor ``(batch, time)`` (or ``(time, batch)`` with ``time_major``).
        constants: tensors passed to every step after the states.
        unroll: kept for TF-Keras compatibility (the loop is always a Python loop).
        input_length: kept for TF-Keras compatibility (unused without graph mode).
        time_major: whether the time axis comes first.
        zero_output_for_mask: give masked steps a zero output.
        return_all_outputs: return every step's output, or only the last one's.

    Returns:
        ``(last_output, outputs, new_states)``: ``outputs`` has the time axis where
        ``inputs`` had it (of length 1 without ``return_all_outputs``).
    """
    del unroll, input_length
    flat_inputs = [_tensor(t) for t in ft.nest.flatten(inputs)]
    for tensor in flat_inputs:
        if len(tensor.shape) < 3:
            raise ValueError(
                f"rnn: inputs must have rank >= 3 (batch, time, features). Received shape "
                f"{tuple(tensor.shape)}"
            )
    time_axis = 0 if time_major else 1
    steps = flat_inputs[0].shape[time_axis]
    if mask is not None:
        mask = _tensor(mask)
        if mask.dtype != ft.bool:
            mask = ft.cast(mask, ft.bool)
    constants = tuple(constants or ())
    states = tuple(initial_states)
    order = range(steps - 1, -1, -1) if go_backwards else range(steps)
    outputs, previous = [], None
    for t in order:
        step_inputs = [ft.gather(x, t, axis=time_axis) for x in flat_inputs]
        step_inputs = ft.nest.pack_sequence_as(inputs, step_inputs)
        output, new_states = step_function(step_inputs, states + constants)
        new_states = tuple(ft.nest.flatten(new_states))
        if mask is not None:
            keep = ft.gather(mask, t, axis=time_axis)
            fallback = (
                ft.zeros_like(output) if previous is None or zero_output_for_mask else previous
            )
            output = ft.where(_like(keep, output), output, fallback)
            new_states = tuple(
                ft.where(_like(keep, new), new, old)
                for new, old in zip(new_states, ft.nest.flatten(states), strict=True)
            )
        states = tuple(ft.nest.pack_sequence_as(list(states), list(new_states)))
        previous = output
        outputs.append(output)
    stacked = ft.stack(outputs if return_all_outputs else outputs[-1:], axis=time_axis)
    return outputs[-1], stacked, states


def _like(mask_t, tensor):
    """A ``(batch,)`` or ``(batch, 1)`` step mask broadcast to ``tensor``'s shape."""
    mask_t = ft.reshape(mask_t, [mask_t.shape[0]] + [1] * (len(tensor.shape) - 1))
    return ft.broadcast_to(mask_t, tensor.shape)
