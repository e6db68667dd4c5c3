"""``IndexLookup`` (Keras 3's ``keras.src.layers.preprocessing.index_lookup``), the base of
``IntegerLookup``: a vocabulary of tokens mapped to consecutive indices.

The index space is, in order: the mask token's index 0 (only with a ``mask_token`` and
``output_mode="int"``), ``num_oov_indices`` out-of-vocabulary indices, then the vocabulary's
tokens. A token not in the vocabulary gets the single OOV index, or with several OOV indices
``token mod num_oov_indices`` after the first; with none it is an error. ``invert=True`` maps
indices back to tokens. The lookup is integer work without gradients, so it is done with
numpy on the tokens' values.

ferrotape supports integer vocabularies (``IntegerLookup``); Keras's ``StringLookup`` is out
of scope (ferrotape has no string tensors).
"""

import collections
import os

import numpy as np

from .... import _core, errors
from ..layer import Layer
from .category_encoding import _encode

_MODES = ("int", "one_hot", "multi_hot", "count", "tf_idf")
_INT64_MAX = np.iinfo(np.int64).max


class IndexLookup(Layer):
    """Maps tokens to indices (or back, with ``invert``); see ``IntegerLookup``."""

    def __init__(
        self,
        max_tokens,
        num_oov_indices,
        mask_token,
        oov_token,
        vocabulary_dtype,
        vocabulary=None,
        idf_weights=None,
        invert=False,
        output_mode="int",
        sparse=False,
        pad_to_max_tokens=False,
        oov_method="floormod",
        name=None,
        salt=None,
        **kwargs,
    ):
        """Checks the arguments as Keras does and sets the vocabulary if one is given.

        Args:
            max_tokens: The largest vocabulary size (special tokens included), or None.
            num_oov_indices: How many indices unknown tokens share (0 makes them an error).
            mask_token: The token that means "no value" (index 0), or None.
            oov_token: The token that ``invert`` gives for unknown indices.
            vocabulary_dtype: ``"int64"``.
            vocabulary: A list or array of tokens, a file of one per line, or None (``adapt``).
            idf_weights: With ``output_mode="tf_idf"``, one weight per vocabulary entry.
            invert: Map indices to tokens.
            output_mode: ``"int"``, ``"one_hot"``, ``"multi_hot"``, ``"count"`` or
                ``"tf_idf"``.
            sparse: Must be False (ferrotape's tensors are dense).
            pad_to_max_tokens: Encode to ``max_tokens`` columns whatever the vocabulary size.
            oov_method: ``"floormod"`` (the hashing of several OOV indices).
            name: The layer's name.
            salt: Must be None (it belongs to ``oov_method="farmhash"``).
            **kwargs: ``vocabulary_size`` and ``has_input_vocabulary`` (from a config).
        """
        output_mode = {"binary": "multi_hot", "tf-idf": "tf_idf"}.get(output_mode, output_mode)
        _check_arguments(
            type(self).__name__, max_tokens, num_oov_indices, output_mode, invert, sparse,
            pad_to_max_tokens, idf_weights, oov_method, salt,
        )  # fmt: skip
        frozen = kwargs.pop("vocabulary_size", None)
        has_vocabulary = kwargs.pop("has_input_vocabulary", vocabulary is not None)
        kwargs.pop("trainable", None)
        kwargs.pop("dtype", None)
        if kwargs:
            raise ValueError(f"Unrecognized keyword argument(s): {kwargs}")
        super().__init__(name=name)
        self.invert = bool(invert)
        self.max_tokens = max_tokens
        self.num_oov_indices = int(num_oov_indices)
        self.mask_token = mask_token
        self.oov_token = oov_token
        self.output_mode = output_mode
        self.sparse = False
        self.pad_to_max_tokens = bool(pad_to_max_tokens)
        self.vocabulary_dtype = vocabulary_dtype
        self.oov_method = oov_method
        self.salt = None
        self.input_vocabulary = vocabulary if not isinstance(vocabulary, str) else None
        self.input_idf_weights = idf_weights
        self._frozen_vocab_size = frozen
        self._has_input_vocabulary = bool(has_vocabulary)
        self._tokens = np.zeros([0], np.int64)  # the vocabulary, special tokens excluded
        self._index = {}
        self._counts = collections.Counter()  # adapt's token counts
        self._document_counts = collections.Counter()
        self._documents = 0
        self.idf_weights = None
        if output_mode == "tf_idf" and self._has_input_vocabulary and idf_weights is None:
            raise ValueError(
                "When specifying the `vocabulary` argument, in TF-IDF output mode, the "
                "`idf_weights` argument must also be provided."
            )
        if vocabulary is not None:
            self.set_vocabulary(vocabulary, idf_weights)

    # ------------------------------------------------------------------ the index space
    def _oov_start_index(self):
        return 1 if self.mask_token is not None and self.output_mode == "int" else 0

    def _token_start_index(self):
        return self._oov_start_index() + self.num_oov_indices

    def vocabulary_size(self):
        """The number of indices: the vocabulary plus the mask and OOV indices.

        Returns:
            An int.
        """
        return len(self._tokens) + self._token_start_index()

    def get_vocabulary(self, include_special_tokens=True):
        """The token of every index, in index order.

        Args:
            include_special_tokens: Include the mask and OOV tokens at the front.

        Returns:
            A list of ints.
        """
        vocab = [self.oov_token] * self._token_start_index() + [int(t) for t in self._tokens]
        if self.mask_token is not None and self.output_mode == "int":
            vocab[0] = self.mask_token
        return vocab if include_special_tokens else vocab[self._token_start_index() :]

    # ------------------------------------------------------------------ setting the vocabulary
    def set_vocabulary(self, vocabulary, idf_weights=None):
        """Sets the vocabulary (and, for ``tf_idf``, its weights), replacing any other.

        Args:
            vocabulary: A list or array of tokens (the mask and OOV tokens may lead it, in
                the index order), or the path of a file of one token per line.
            idf_weights: With ``output_mode="tf_idf"``: a weight per entry of ``vocabulary``.
        """
        if self.output_mode == "tf_idf" and idf_weights is None:
            raise ValueError("`idf_weights` must be set if output_mode is 'tf_idf'.")
        if self.output_mode != "tf_idf" and idf_weights is not None:
            raise ValueError(
                "`idf_weights` should only be set if output_mode is `'tf_idf'`. Received: "
                f"output_mode={self.output_mode} and idf_weights={idf_weights}"
            )
        if isinstance(vocabulary, (str, os.PathLike)):
            vocabulary = _read_vocabulary_file(vocabulary, self.output_mode)
        vocabulary = _as_numpy(vocabulary)
        if vocabulary.size == 0:
            raise ValueError(f"Cannot set an empty vocabulary. Received: vocabulary={vocabulary}")
        start = self._token_start_index()
        special = [self.mask_token] * self._oov_start_index() + [self.oov_token] * (
            self.num_oov_indices
        )
        found_special = np.array_equal(special, vocabulary[:start])
        tokens = vocabulary[start:] if found_special else vocabulary
        _check_tokens(self, tokens, vocabulary, special)
        if self.max_tokens is not None and start + len(tokens) > self.max_tokens:
            raise ValueError(
                "Attempted to set a vocabulary larger than the maximum vocab size. Received "
                f"vocabulary size is {start + len(tokens)}; `max_tokens` is {self.max_tokens}."
            )
        self._set_tokens(tokens)
        if self.output_mode == "tf_idf":
            self._set_idf_weights(idf_weights, len(vocabulary), found_special)

    def _set_tokens(self, tokens):
        self._tokens = np.asarray(tokens, np.int64).reshape(-1)
        start = self._token_start_index()
        self._index = {int(t): i + start for i, t in enumerate(self._tokens)}
        self._record_vocabulary_size()

    def _set_idf_weights(self, idf_weights, vocabulary_length, found_special):
        weights = np.asarray(_as_numpy(idf_weights), np.float64)
        if weights.ndim != 1 or len(weights) != vocabulary_length:
            raise ValueError(
                "`idf_weights` must be the same length as vocabulary. len(idf_weights) is "
                f"{len(weights)}; len(vocabulary) is {vocabulary_length}"
            )
        # Without the special tokens in the vocabulary, their weights are the average one.
        front = 0 if found_special else self._token_start_index()
        fill = 0.0 if found_special else float(np.average(weights))
        back = 0
        if self.pad_to_max_tokens and self.max_tokens is not None:
            back = self.max_tokens - front - len(weights)
        self.idf_weights = np.pad(weights, (front, back), constant_values=(fill, 0.0))

    def _record_vocabulary_size(self):
        if self.output_mode != "int" and not self.pad_to_max_tokens:
            size = self.vocabulary_size()
            if self._frozen_vocab_size is not None and size != self._frozen_vocab_size:
                raise RuntimeError(
                    f"When using `output_mode={self.output_mode}` and "
                    "`pad_to_max_tokens=False`, the vocabulary size cannot be changed after "
                    f"the layer is called. Old vocab size is {self._frozen_vocab_size}, new "
                    f"vocab size is {size}"
                )
        self._frozen_vocab_size = self.vocabulary_size()

    # ------------------------------------------------------------------ adapt
    def adapt(self, data, steps=None):
        """Learns the vocabulary from ``data``: the tokens by decreasing frequency (ties: the
        larger token first), at most ``max_tokens`` indices in all, without the mask and OOV
        tokens; with ``tf_idf``, their inverse document frequencies ``log(1 + documents /
        (1 + documents containing the token))``.

        Args:
            data: An array or tensor (each row a document; a vector is one token per
                document), a ``Dataset`` or an iterable of batches.
            steps: With a dataset or iterable, the number of batches to read.
        """
        if self._has_input_vocabulary:
            raise ValueError(
                f"Cannot adapt layer '{self.name}' after setting a static vocabulary via "
                "`vocabulary` argument or `set_vocabulary()` method."
            )
        self.reset_state()
        if isinstance(data, (list, tuple, np.ndarray, _core.Tensor)):
            batch = _as_numpy(data)
            self.update_state(batch[:, None] if batch.ndim == 1 else batch)
        else:
            for i, batch in enumerate(data):
                if steps is not None and i >= steps:
                    break
                self.update_state(batch)
        self.finalize_state()

    def update_state(self, data):
        """Counts the tokens of one batch (each row a document).

        Args:
            data: An array or tensor of tokens.
        """
        data = _as_numpy(data)
        data = data.reshape(1, -1) if data.ndim <= 1 else data
        self._counts.update(data.ravel().tolist())
        if self.output_mode == "tf_idf":
            for document in data.reshape(len(data), -1):
                self._document_counts.update(np.unique(document).tolist())
            self._documents += len(data)

    def finalize_state(self):
        """Sets the vocabulary (and idf weights) from the counts, then clears them."""
        if not self._counts:
            self._record_vocabulary_size()
            return
        for special in (self.mask_token, self.oov_token):
            self._counts.pop(special, None)
        tokens = np.array(list(self._counts), np.int64)
        counts = np.array([self._counts[t] for t in tokens.tolist()], np.int64)
        order = np.lexsort((tokens, counts))[::-1]
        if self.max_tokens:
            order = order[: self.max_tokens - self._token_start_index()]
        tokens = tokens[order]
        self._set_tokens(tokens)
        if self.output_mode == "tf_idf":
            documents = np.array([self._document_counts[t] for t in tokens.tolist()])
            idf = np.log(1 + self._documents / (1 + documents)).astype(np.float32)
            front = np.full(self._token_start_index(), idf.mean() if idf.size else 0.0)
            weights = np.concatenate([front, idf])
            if self.pad_to_max_tokens and self.max_tokens is not None:
                weights = np.pad(weights, (0, self.max_tokens - len(weights)))
            self.idf_weights = weights
        self.reset_state()

    def reset_state(self):
        """Forgets the counts ``update_state`` gathered."""
        self._counts.clear()
        self._document_counts.clear()
        self._documents = 0

    # ------------------------------------------------------------------ the call
    def _lookup(self, values):
        if self.invert:
            start, end = self._token_start_index(), self.vocabulary_size()
            inside = (values >= start) & (values < end)
            picked = self._tokens[np.clip(values - start, 0, max(len(self._tokens) - 1, 0))]
            out = np.where(inside, picked if len(self._tokens) else 0, self.oov_token)
            if self.mask_token is not None:
                out = np.where(values == 0, self.mask_token, out)
            return out.astype(np.int64)
        default = self._oov_start_index() if self.num_oov_indices == 1 else -1
        out = np.array([self._index.get(v, default) for v in values.ravel().tolist()], np.int64)
        out = out.reshape(values.shape)
        if self.mask_token is not None:
            masked = values == self.mask_token
            out = np.where(masked, 0 if self.output_mode == "int" else _INT64_MAX, out)
        else:
            masked = np.zeros(values.shape, bool)
        unknown = (out == -1) & ~masked
        if self.num_oov_indices == 0 and unknown.any():
            raise errors.InvalidArgumentError(
                "When `num_oov_indices=0` all inputs should be in vocabulary, found OOV values "
                f"{values[unknown].tolist()}, consider setting `num_oov_indices=1`."
            )
        if self.num_oov_indices > 1:
            hashed = np.mod(values, self.num_oov_indices) + self._oov_start_index()
            out = np.where(unknown, hashed, out)
        return out

    def call(self, inputs):
        if self.output_mode != "int" and not self.pad_to_max_tokens:
            if self._frozen_vocab_size is None:
                raise RuntimeError(
                    f"When using `output_mode={self.output_mode}` and `pad_to_max_tokens=False`, "
                    "you must set the layer's vocabulary before calling it. Either pass a "
                    "`vocabulary` argument to the layer, or call `adapt` with some sample data."
                )
        values = _as_numpy(inputs)
        if values.dtype.kind not in "iu":
            raise ValueError(
                f"{type(self).__name__}: the inputs must be integers. Received dtype {values.dtype}"
            )
        lookups = _core.constant(self._lookup(values.astype(np.int64)), dtype="int64")
        if self.output_mode == "int":
            return lookups
        depth = self.max_tokens if self.pad_to_max_tokens else self._frozen_vocab_size
        mode = "count" if self.output_mode == "tf_idf" else self.output_mode
        encoded = _encode(lookups, depth, mode, "int64")
        if self.output_mode == "tf_idf":
            weights = _core.constant(self.idf_weights, dtype="float32")
            return _core.cast(encoded, "float32") * weights
        return encoded

    def compute_output_shape(self, input_shape):
        if self.output_mode == "int":
            return tuple(input_shape)
        depth = self.max_tokens if self.pad_to_max_tokens else self._frozen_vocab_size
        shape = tuple(input_shape)
        if self.output_mode == "one_hot" and not (len(shape) > 1 and shape[-1] == 1):
            return shape + (depth,)
        return shape[:-1] + (depth,)

    def get_config(self):
        vocabulary, idf_weights = self.input_vocabulary, self.input_idf_weights
        if vocabulary is None and len(self._tokens):
            # A learned vocabulary: Keras keeps it in the .keras file's assets, which
            # ferrotape's files do not have, so the config carries it (special tokens first,
            # as set_vocabulary reads them back).
            vocabulary = self.get_vocabulary()
            if self.output_mode == "tf_idf":
                idf_weights = self.idf_weights[: self.vocabulary_size()]
        return {
            **super().get_config(),
            "invert": self.invert,
            "max_tokens": self.max_tokens,
            "num_oov_indices": self.num_oov_indices,
            "oov_token": self.oov_token,
            "mask_token": self.mask_token,
            "output_mode": self.output_mode,
            "sparse": self.sparse,
            "pad_to_max_tokens": self.pad_to_max_tokens,
            "vocabulary_dtype": self.vocabulary_dtype,
            "idf_weights": _listed(idf_weights),
            "vocabulary": _listed(vocabulary),
            "vocabulary_size": self._frozen_vocab_size,
            "oov_method": self.oov_method,
            "salt": self.salt,
        }


def _as_numpy(values):
    if isinstance(values, (_core.Tensor, _core.Variable)):
        return values.numpy()
    return np.asarray(values)


def _listed(values):
    if values is None:
        return None
    return [v.item() if hasattr(v, "item") else v for v in _as_numpy(values).tolist()]


def _read_vocabulary_file(path, output_mode):
    if output_mode == "tf_idf":
        raise ValueError("output_mode `'tf_idf'` does not support loading a vocabulary from file.")
    if not os.path.exists(path):
        raise ValueError(f"Vocabulary file {path} does not exist.")
    with open(path, encoding="utf-8") as file:
        lines = file.read().splitlines()
    while lines and lines[-1] == "":
        lines.pop()
    return [int(line) for line in lines]


def _check_tokens(layer, tokens, vocabulary, special):
    repeated = [t for t, n in collections.Counter(tokens.tolist()).items() if n > 1]
    if repeated:
        raise ValueError(
            "The passed vocabulary has at least one repeated term. Please uniquify your "
            f"dataset. The repeated terms are: {repeated}"
        )
    for what, token, applies in (
        ("mask", layer.mask_token, True),
        ("OOV", layer.oov_token, layer.invert),
    ):
        if token is not None and applies and token in tokens.tolist():
            index = np.argwhere(vocabulary == token)[-1]
            raise ValueError(
                f"Found reserved {what} token at unexpected location in `vocabulary`. Note "
                "that passed `vocabulary` does not need to include the OOV and mask tokens. "
                "Either remove all mask and OOV tokens, or include them only at the start of "
                f"the vocabulary in precisely this order: {special}. Received: "
                f"{'mask_token' if what == 'mask' else 'oov_token'}={token} at vocabulary "
                f"index {index}"
            )


def _check_arguments(
    who, max_tokens, num_oov, output_mode, invert, sparse, pad, idf_weights, oov_method, salt
):
    if max_tokens is not None and max_tokens <= 1:
        raise ValueError(
            f"If `max_tokens` is set for `{who}`, it must be greater than 1. "
            f"Received: max_tokens={max_tokens}"
        )
    if pad and max_tokens is None:
        raise ValueError(
            "If pad_to_max_tokens is True, must set `max_tokens`. "
            f"Received: max_tokens={max_tokens}"
        )
    if num_oov < 0:
        raise ValueError(
            f"The value of `num_oov_indices` argument for `{who}` must >= 0. "
            f"Received: num_oov_indices={num_oov}"
        )
    if output_mode not in _MODES:
        raise ValueError(
            f"Unknown `output_mode` argument passed to {who}. Allowed values are {_MODES}. "
            f"Received: output_mode={output_mode!r}"
        )
    if invert and output_mode != "int":
        raise ValueError(
            f"`output_mode` must be `'int'` when `invert` is true. Received: "
            f"output_mode={output_mode}"
        )
    if sparse:
        raise ValueError(f"{who}: sparse=True is not supported (ferrotape's tensors are dense)")
    if idf_weights is not None and output_mode != "tf_idf":
        raise ValueError(
            "`idf_weights` should only be set if `output_mode` is `'tf_idf'`. Received: "
            f"idf_weights={idf_weights} and output_mode={output_mode}"
        )
    if oov_method != "floormod" or salt is not None:
        raise ValueError(
            f"{who}: only oov_method='floormod' (without salt) is supported for integer "
            f"tokens. Received: oov_method={oov_method!r}, salt={salt!r}"
        )
