"""Padding of variable-length sequences (Keras 3's ``keras.src.utils.sequence_utils``).

>>> pad_sequences([[1, 2], [3], [4, 5, 6]])
array([[0, 1, 2],
       [0, 0, 3],
       [4, 5, 6]], dtype=int32)
"""

import numpy as np


def pad_sequences(
    sequences, maxlen=None, dtype="int32", padding="pre", truncating="pre", value=0.0
):
    """Pads (or truncates) each sequence to ``maxlen`` and stacks them into one array.

    Args:
        sequences: a list of sequences (each a list or array; items may be arrays of one
            shape).
        maxlen: the length of the result; None takes the longest sequence's.
        dtype: the result's dtype (``object`` for variable-length strings).
        padding: "pre" or "post": where the ``value`` entries go.
        truncating: "pre" or "post": which end of a longer sequence is cut.
        value: the padding value.

    Returns:
        A numpy array of shape ``(len(sequences), maxlen) + item_shape``.
    """
    if not hasattr(sequences, "__len__"):
        raise ValueError("pad_sequences: `sequences` must be iterable.")
    lengths, item_shape = [], ()
    found_item_shape = False
    for sequence in sequences:
        try:
            lengths.append(len(sequence))
        except TypeError:
            raise ValueError(
                "pad_sequences: `sequences` must be a list of iterables. Found non-iterable: "
                f"{sequence!r}"
            ) from None
        if not found_item_shape and len(sequence):
            item_shape = np.asarray(sequence).shape[1:]
            found_item_shape = True
    if maxlen is None:
        maxlen = max(lengths, default=0)
    is_string_dtype = np.issubdtype(dtype, np.str_) or np.issubdtype(dtype, np.bytes_)
    if isinstance(value, str) and dtype is not object and not is_string_dtype:
        raise ValueError(
            f"pad_sequences: `dtype` {dtype} is not compatible with `value`'s type: "
            f"{type(value)}\nYou should set `dtype=object` for variable length strings."
        )
    if padding not in ("pre", "post"):
        raise ValueError(f'pad_sequences: padding type "{padding}" not understood')
    if truncating not in ("pre", "post"):
        raise ValueError(f'pad_sequences: truncating type "{truncating}" not understood')
    out = np.full((len(sequences), maxlen) + item_shape, value, dtype=dtype)
    for index, sequence in enumerate(sequences):
        if not len(sequence) or not maxlen:
            continue
        kept = sequence[-maxlen:] if truncating == "pre" else sequence[:maxlen]
        kept = np.asarray(kept, dtype=dtype)
        if kept.shape[1:] != item_shape:
            raise ValueError(
                f"pad_sequences: shape of sample {kept.shape[1:]} of sequence at position "
                f"{index} is different from expected shape {item_shape}"
            )
        if padding == "post":
            out[index, : len(kept)] = kept
        else:
            out[index, -len(kept) :] = kept
    return out
