"""``IntegerLookup`` (Keras 3's ``keras.src.layers.preprocessing.integer_lookup``).

>>> import ferrotape as ft
>>> layer = ft.keras.layers.IntegerLookup(vocabulary=[12, 36, 1138])
>>> layer(ft.constant([[12, 1138, 42], [42, 1000, 36]])).numpy().tolist()
[[1, 3, 0], [0, 0, 2]]
>>> layer.get_vocabulary()
[-1, 12, 36, 1138]
"""

from .index_lookup import IndexLookup


class IntegerLookup(IndexLookup):
    """Maps integer tokens to indices from a vocabulary (given, or learned with ``adapt``).

    Index 0 is the mask token's (with a ``mask_token`` and ``output_mode="int"``), the next
    ``num_oov_indices`` are for tokens outside the vocabulary (several of them share the
    unknown tokens by ``token mod num_oov_indices``), the rest are the vocabulary's tokens in
    order. The output is an int64 index per token (``"int"``), or per sample a vector of
    ``vocabulary_size()`` columns: ``"one_hot"`` (per token), ``"multi_hot"``, ``"count"``
    (int64), ``"tf_idf"`` (counts times ``idf_weights``, float32). ``invert=True`` maps
    indices back to tokens (unknown indices give ``oov_token``).

    Args:
        max_tokens: The largest vocabulary size (special tokens included), or None.
        num_oov_indices: The number of out-of-vocabulary indices (default 1; 0 makes an
            unknown token an error).
        mask_token: The token that means "no value", or None (default).
        oov_token: The token ``invert`` returns for unknown indices (default -1).
        vocabulary: A list or array of int tokens, a file of one per line, or None.
        vocabulary_dtype: ``"int64"`` (the only one Keras supports).
        idf_weights: With ``output_mode="tf_idf"`` and a ``vocabulary``: its weights.
        invert: Map indices to tokens.
        output_mode: ``"int"`` (default), ``"one_hot"``, ``"multi_hot"``, ``"count"`` or
            ``"tf_idf"``.
        sparse: Must be False.
        pad_to_max_tokens: Encode to ``max_tokens`` columns.
        oov_method: ``"floormod"``.
        salt: Must be None.
        name: The layer's name.

    Input shape: integers of any shape (at most rank 2 for the encoded modes). Output shape:
    the same (``"int"``), or with a last axis of the vocabulary's size.
    """

    def __init__(
        self,
        max_tokens=None,
        num_oov_indices=1,
        mask_token=None,
        oov_token=-1,
        vocabulary=None,
        vocabulary_dtype="int64",
        idf_weights=None,
        invert=False,
        output_mode="int",
        sparse=False,
        pad_to_max_tokens=False,
        oov_method="floormod",
        salt=None,
        name=None,
        **kwargs,
    ):
        if vocabulary_dtype != "int64":
            raise ValueError(
                "Only `vocabulary_dtype='int64'` is supported at this time. Received: "
                f"vocabulary_dtype={vocabulary_dtype}"
            )
        super().__init__(
            max_tokens=max_tokens,
            num_oov_indices=num_oov_indices,
            mask_token=mask_token,
            oov_token=oov_token,
            vocabulary=vocabulary,
            vocabulary_dtype=vocabulary_dtype,
            idf_weights=idf_weights,
            invert=invert,
            output_mode=output_mode,
            sparse=sparse,
            pad_to_max_tokens=pad_to_max_tokens,
            oov_method=oov_method,
            salt=salt,
            name=name,
            **kwargs,
        )
