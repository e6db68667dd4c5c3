"""Connectionist temporal classification (Graves et al., 2006) for ``ft.nn``.

The loss is the forward (alpha) recursion in log space written in tensor ops, so the tape
differentiates it (TensorFlow's dense ``ctc_loss`` hand-writes the same gradient,
``softmax - posterior``). ``keras.losses.ctc`` and ``keras.backend.ctc_batch_cost`` use the same
recursion. The decoders and the label helpers run in numpy: TensorFlow declares them not
differentiable.

TensorFlow returns the decoders' paths as ``SparseTensor``s; ferrotape's tensors are dense
(docs/unsupported.md, "Sparse tensors"), so each decoded path comes back as the dense
``(batch, max_decoded_length)`` int64 tensor that ``tf.sparse.to_dense(decoded, -1)`` gives:
entries past a sequence's end are -1, the padding Keras's own ``ctc_decode`` uses.
"""

import heapq
import itertools
import math

import numpy as np

from . import _core
from ._host_memory import check_host_size
from .array_ops import make_int
from .errors import InvalidArgumentError

# Stands in for log(0): exp() of it underflows to 0 and, unlike -inf, it keeps every
# gradient finite through the log-sum-exps.
_LOG_ZERO = -1e30


def _logsumexp(*terms):
    peak = _core.stop_gradient(_core.reduce_max(_core.stack(terms), axis=0))
    total = _core.add_n([_core.exp(t - peak) for t in terms])
    return peak + _core.log(total)


def ctc_negative_log_likelihood(labels, label_length, log_probs, input_length, blank):
    """``-log p(labels | log_probs)`` per sample, summed over every alignment.

    Args:
        labels: int array ``(batch, max_label_length)``; entries past ``label_length``
            are ignored.
        label_length: int array ``(batch,)``.
        log_probs: ``(batch, time, classes)`` log-probabilities (a tensor).
        input_length: int array ``(batch,)``: the steps of each sample that count.
        blank: the blank class index.

    Returns:
        A ``(batch,)`` tensor.
    """
    labels = np.asarray(labels, dtype=np.int64)
    label_length = np.asarray(label_length, dtype=np.int64).reshape(-1)
    input_length = np.asarray(input_length, dtype=np.int64).reshape(-1)
    batch, steps, classes = log_probs.shape
    width = labels.shape[1] if labels.ndim == 2 else 0
    # The extended sequence: blank, l1, blank, l2, ..., blank (2L + 1 states).
    states = 2 * width + 1
    extended = np.full((batch, states), blank, dtype=np.int64)
    for b in range(batch):
        extended[b, 1 : 2 * label_length[b] : 2] = labels[b, : label_length[b]]
    # A state may be entered from two back when it is a label unlike the one two back.
    skip = np.zeros((batch, states), dtype=bool)
    skip[:, 2:] = (extended[:, 2:] != blank) & (extended[:, 2:] != extended[:, :-2])
    valid = np.arange(states)[None, :] < (2 * label_length + 1)[:, None]
    dtype = log_probs.dtype
    # emissions[b, t, s] = log_probs[b, t, extended[b, s]]
    one_hot = _core.constant(np.eye(classes)[extended], dtype=dtype)  # (batch, states, classes)
    emissions = _core.linalg.matmul(log_probs, one_hot, transpose_b=True)
    log_zero = _core.fill([batch, states], _core.constant(_LOG_ZERO, dtype=dtype))
    valid_t = _core.constant(valid)
    skip_t = _core.constant(skip)
    start = np.zeros((batch, states), dtype=bool)
    start[:, :2] = True
    alpha = _core.select(_core.constant(start & valid), emissions[:, 0, :], log_zero)
    pad = log_zero[:, :1]
    alphas = [alpha]
    for t in range(1, steps):
        from_one = _core.concat([pad, alpha[:, :-1]], axis=1)
        from_two = _core.concat([pad, pad, alpha[:, :-2]], axis=1)
        from_two = _core.select(skip_t, from_two, log_zero)
        alpha = _logsumexp(alpha, from_one, from_two) + emissions[:, t, :]
        alpha = _core.select(valid_t, alpha, log_zero)
        alphas.append(alpha)
    # Each sample ends at its own last step, in the last or the second-to-last state.
    at_end = _core.reduce_sum(
        _core.stack(alphas, axis=1)
        * _core.constant(np.eye(steps)[input_length - 1][:, :, None], dtype=dtype),
        axis=1,
    )
    last = 2 * label_length
    final = np.zeros((batch, states))
    final[np.arange(batch), last] = 1.0
    second = np.zeros((batch, states))
    second[np.arange(batch), np.maximum(last - 1, 0)] = 1.0
    end_last = _core.reduce_sum(at_end * _core.constant(final, dtype=dtype), axis=1)
    end_second = _core.reduce_sum(at_end * _core.constant(second, dtype=dtype), axis=1)
    # An empty label sequence has one final state only.
    end_second = _core.select(_core.constant(label_length > 0), end_second, log_zero[:, 0])
    return -_logsumexp(end_last, end_second)


def _int_array(op, name, value, ndim):
    array = np.asarray(value.numpy() if hasattr(value, "numpy") else value)
    if array.ndim != ndim or (array.size and not np.issubdtype(array.dtype, np.integer)):
        raise InvalidArgumentError(
            f"{op}: {name} must be a {ndim}-D integer tensor; received shape "
            f"{list(array.shape)} and dtype {array.dtype}"
        )
    return array.astype(np.int64)


def _blank(op, blank_index, classes, default):
    blank = default if blank_index is None else make_int(op, "blank_index", blank_index)
    if blank < 0:
        blank += classes
    if not 0 <= blank < classes:
        raise InvalidArgumentError(
            f"{op}: blank_index must lie in [-{classes}, {classes}) for {classes} classes; "
            f"received blank_index={blank_index}"
        )
    return blank


def ctc_loss(
    labels,
    logits,
    label_length,
    logit_length,
    logits_time_major=True,
    unique=None,
    blank_index=None,
    name=None,
):
    """The CTC loss: ``-log p(labels | logits)`` per sample, summed over every alignment.

    A softmax over the classes is applied to ``logits``. An alignment is one class per frame;
    it reads as the label sequence once repeated classes are merged and blanks removed. The
    probability of the labels is the sum over their alignments (within each sample's first
    ``logit_length`` frames) of the product of the per-frame probabilities.

    Args:
        labels: int ``[batch, max_label_length]``, zero-padded; ferrotape has no
            ``SparseTensor`` labels.
        logits: float ``[frames, batch, num_classes]``, or ``[batch, frames, num_classes]``
            with ``logits_time_major=False``.
        label_length: int ``[batch]``: how many of each row's ``labels`` count.
        logit_length: int ``[batch]``: how many frames of each sample count.
        logits_time_major: Whether ``logits`` has frames first (the default) or batch first.
        unique: Optional ``ctc_unique_labels(labels)``: TensorFlow's faster path on TPU, with
            the same result; accepted and not needed here.
        blank_index: The blank class; default 0, negative values count from ``num_classes``.
        name: Ignored (TensorFlow's op name).

    Returns:
        A float ``[batch]`` tensor of negative log-likelihoods (an impossible alignment, labels
        longer than the frames allow, gives a huge value rather than TensorFlow's arbitrary
        large one).

    Raises:
        ValueError: for ``label_length=None`` (sparse labels), mismatched shapes, or a
            ``blank_index`` outside the classes.

    Gradient (w.r.t. ``logits``): ``softmax(logits) - posterior`` in the counted frames, where
    the posterior is each class's share of the alignments at that frame; zero past
    ``logit_length``.

    >>> import numpy as np, ferrotape as ft
    >>> logits = np.zeros((2, 1, 2), np.float32)  # two frames, classes {blank, a}, uniform
    >>> ft.nn.ctc_loss([[1]], logits, [1], [2]).numpy().round(4)  # "a-", "-a", "aa": 3/4
    array([0.2877], dtype=float32)
    """
    del unique, name
    op = "ctc_loss"
    if label_length is None:
        raise ValueError(
            f"{op}: label_length is required: labels must be dense and zero-padded "
            "(ferrotape has no SparseTensor labels)"
        )
    logits = _core.convert_to_tensor(logits)
    if logits.ndim != 3 or not logits.dtype.is_floating:
        raise InvalidArgumentError(
            f"{op}: logits must be a 3-D floating tensor; received shape "
            f"{list(logits.shape)} and dtype {logits.dtype.name}"
        )
    if logits_time_major:
        logits = _core.transpose(logits, [1, 0, 2])
    batch, frames, classes = logits.shape
    labels = _int_array(op, "labels", labels, 2)
    label_length = _int_array(op, "label_length", label_length, 1)
    logit_length = _int_array(op, "logit_length", logit_length, 1)
    if labels.shape[0] != batch or label_length.shape != (batch,) or logit_length.shape != (batch,):
        raise InvalidArgumentError(
            f"{op}: labels [batch, max_label_length], label_length [batch] and logit_length "
            f"[batch] must match the logits' batch of {batch}; received labels "
            f"{list(labels.shape)}, label_length {list(label_length.shape)}, logit_length "
            f"{list(logit_length.shape)}"
        )
    if np.any((label_length < 0) | (label_length > labels.shape[1])):
        raise InvalidArgumentError(
            f"{op}: label_length must lie in [0, {labels.shape[1]}]; received "
            f"{label_length.tolist()}"
        )
    if np.any((logit_length < 1) | (logit_length > frames)):
        raise InvalidArgumentError(
            f"{op}: logit_length must lie in [1, {frames}]; received {logit_length.tolist()}"
        )
    counted = np.arange(labels.shape[1])[None, :] < label_length[:, None]
    if np.any(counted & ((labels < 0) | (labels >= classes))):
        raise InvalidArgumentError(f"{op}: labels must lie in [0, {classes}); received {labels}")
    blank = _blank(op, blank_index, classes, 0)
    if blank != 0:
        # TensorFlow moves the blank's column to the front and shifts labels below it up by
        # one, which leaves every other label naming its own class; a label equal to the
        # blank ends up naming the class just below it.
        labels = np.where(labels == blank, blank - 1, labels)
    dtype = logits.dtype
    if dtype.name in ("float16", "bfloat16"):
        # -1e30 (log 0) does not fit a half float: as TensorFlow does, work in float32.
        logits = _core.cast(logits, "float32")
    log_probs = _core.nn.log_softmax(logits, axis=-1)
    loss = ctc_negative_log_likelihood(labels, label_length, log_probs, logit_length, blank)
    return _core.cast(loss, dtype) if loss.dtype != dtype else loss


def _decoder_inputs(op, inputs, sequence_length):
    inputs = np.asarray(inputs.numpy() if hasattr(inputs, "numpy") else inputs)
    if inputs.ndim != 3 or not np.issubdtype(inputs.dtype, np.floating):
        raise InvalidArgumentError(
            f"{op}: inputs must be a 3-D floating tensor [max_time, batch, num_classes]; "
            f"received shape {list(inputs.shape)} and dtype {inputs.dtype}"
        )
    lengths = _int_array(op, "sequence_length", sequence_length, 1)
    frames, batch, _ = inputs.shape
    if lengths.shape != (batch,) or np.any((lengths < 0) | (lengths > frames)):
        raise InvalidArgumentError(
            f"{op}: sequence_length must hold {batch} lengths in [0, {frames}]; received "
            f"{lengths.tolist()}"
        )
    return inputs, lengths


def _dense_paths(paths):
    """Rows of class lists as the ``(batch, longest)`` int64 tensor, padded with -1."""
    width = max((len(p) for p in paths), default=0)
    dense = np.full((len(paths), width), -1, dtype=np.int64)
    for row, path in enumerate(paths):
        dense[row, : len(path)] = path
    return _core.constant(dense)


def ctc_greedy_decoder(inputs, sequence_length, merge_repeated=True, blank_index=None):
    """Best-path decoding: each frame's most likely class, repeats merged, blanks removed.

    Args:
        inputs: float ``[max_time, batch, num_classes]`` logits.
        sequence_length: int ``[batch]``: the frames of each sample that count.
        merge_repeated: If true, a class repeated in consecutive frames is emitted once
            (``A B B * B * B`` gives ``A B B B``, ``*`` the blank).
        blank_index: The blank class; default ``num_classes - 1``, negative values count
            from ``num_classes``.

    Returns:
        ``(decoded, neg_sum_logits)``: ``decoded`` is a one-element list holding the
        ``(batch, max_decoded_length)`` int64 paths padded with -1 (TensorFlow's
        ``SparseTensor`` made dense); ``neg_sum_logits`` ``(batch, 1)`` is minus the sum of
        each counted frame's largest logit.

    Raises:
        ValueError: for inputs that are not 3-D, lengths outside ``[0, max_time]``, or a
            ``blank_index`` outside the classes.

    >>> import numpy as np, ferrotape as ft
    >>> x = np.log(np.array([[[0.6, 0.4]], [[0.6, 0.4]], [[0.1, 0.9]]], np.float32))
    >>> decoded, _ = ft.nn.ctc_greedy_decoder(x, [3])  # classes {a, blank}: "a a -"
    >>> decoded[0].numpy()
    array([[0]])
    """
    op = "ctc_greedy_decoder"
    x, lengths = _decoder_inputs(op, inputs, sequence_length)
    blank = _blank(op, blank_index, x.shape[2], x.shape[2] - 1)
    best = x.argmax(axis=-1)  # the first largest at ties, as Eigen's maxCoeff
    paths, scores = [], np.zeros((x.shape[1], 1), dtype=x.dtype)
    for b, length in enumerate(lengths):
        frames = best[:length, b]
        scores[b, 0] = -x[np.arange(length), b, frames].sum()
        kept = [
            int(c)
            for t, c in enumerate(frames)
            if c != blank and not (merge_repeated and t > 0 and c == frames[t - 1])
        ]
        paths.append(kept)
    return [_dense_paths(paths)], _core.constant(scores)


class _Beam:
    """A label prefix in the beam search's tree: its probability (in logs) of ending in a
    blank, in its last label, and in total, at this frame (``new``) and the last (``old``)."""

    __slots__ = ("parent", "label", "children", "new", "old")

    def __init__(self, parent, label):
        self.parent, self.label, self.children = parent, label, {}
        self.new = [-math.inf, -math.inf, -math.inf]  # blank, label, total
        self.old = [-math.inf, -math.inf, -math.inf]

    def active(self):
        return self.new[2] != -math.inf

    def path(self):
        labels, node = [], self
        while node.parent is not None:
            labels.append(node.label)
            node = node.parent
        return labels[::-1]


def _lse(a, b):
    if a == -math.inf:
        return b
    if b == -math.inf:
        return a
    top = max(a, b)
    return top + math.log1p(math.exp(min(a, b) - top))


def _beam_step(leaves, log_probs, beam_width, blank):
    """One frame of TensorFlow's CTC prefix beam search over one frame's ``log_probs``; returns
    the new leaves."""
    branches = sorted(leaves, key=lambda e: e.new[2], reverse=True)
    for b in branches:
        b.old = list(b.new)
    for b in branches:
        if b.parent is not None:
            if b.parent.active():
                # A repeated label needs a blank in between: only the parent's blank paths.
                previous = b.parent.old[0] if b.label == b.parent.label else b.parent.old[2]
                b.new[1] = _lse(b.new[1], previous)
            b.new[1] += log_probs[b.label]
        b.new[0] = b.old[2] + log_probs[blank]
        b.new[2] = _lse(b.new[0], b.new[1])
    # The leaves as a min-heap on total probability: the bottom is the one a new prefix evicts.
    order = itertools.count()
    heap = [(b.new[2], next(order), b) for b in branches]
    heapq.heapify(heap)

    def candidate(total):
        return total > -math.inf and (len(heap) < beam_width or total > heap[0][0])

    for b in branches:
        if not candidate(b.old[2]):
            continue
        # Every extension's score at once. Only those above the bottom of a full beam can
        # enter it (the bottom only rises while this branch extends); the others matter only
        # for the nodes they would reset, so the loop visits those two sets, in label order.
        scores = log_probs + b.old[2]
        if b.label >= 0:
            scores[b.label] = log_probs[b.label] + b.old[0]
        scores[blank] = -math.inf
        floor = heap[0][0] if len(heap) == beam_width else -math.inf
        above = set(np.flatnonzero(scores > floor).tolist())
        for label in sorted(above.union(b.children)):
            c = b.children.get(label)
            if c is not None and c.active():
                continue
            total = float(scores[label])
            if label in above and candidate(total):
                if c is None:
                    c = b.children[label] = _Beam(b, label)
                c.new = [-math.inf, total, total]
                if len(heap) == beam_width:
                    heapq.heappop(heap)[2].new = [-math.inf, -math.inf, -math.inf]
                heapq.heappush(heap, (total, next(order), c))
            elif c is not None:
                # TensorFlow resets a prefix it declines, old probabilities included: one
                # evicted earlier in this frame then no longer extends as a branch.
                c.old = [-math.inf, -math.inf, -math.inf]
                c.new = [-math.inf, -math.inf, -math.inf]
    leaves = [entry for _, _, entry in heap]
    return leaves


def ctc_beam_search_decoder(inputs, sequence_length, beam_width=100, top_paths=1):
    """Prefix beam search: the ``top_paths`` most probable label sequences found when keeping
    the ``beam_width`` best prefixes at each frame (the last class is the blank).

    Unlike ``ctc_greedy_decoder``, a prefix's probability sums over all its alignments (the
    softmax of ``inputs`` per frame), and repeated labels are not merged in the output.

    Args:
        inputs: float ``[max_time, batch, num_classes]`` logits.
        sequence_length: int ``[batch]``: the frames of each sample that count.
        beam_width: How many prefixes to keep per frame (at least 1).
        top_paths: How many paths to return, at most ``beam_width``.

    Returns:
        ``(decoded, log_probabilities)``: ``decoded`` is a list of ``top_paths`` int64
        ``(batch, max_decoded_length_j)`` paths padded with -1 (TensorFlow's
        ``SparseTensor``s made dense), best first; ``log_probabilities`` ``(batch,
        top_paths)`` holds each path's log-probability.

    Raises:
        ValueError: for inputs that are not 3-D, lengths outside ``[0, max_time]``, or
            ``top_paths`` outside ``[1, beam_width]`` or above the prefixes found.

    >>> import numpy as np, ferrotape as ft
    >>> x = np.log(np.array([[[0.6, 0.4]], [[0.6, 0.4]], [[0.1, 0.9]]], np.float32))
    >>> decoded, log_p = ft.nn.ctc_beam_search_decoder(x, [3], beam_width=2)
    >>> decoded[0].numpy(), round(float(np.exp(log_p[0, 0])), 3)  # six alignments read "a"
    (array([[0]]), 0.832)
    """
    op = "ctc_beam_search_decoder"
    x, lengths = _decoder_inputs(op, inputs, sequence_length)
    beam_width = make_int(op, "beam_width", beam_width)
    top_paths = make_int(op, "top_paths", top_paths)
    if 3 * top_paths + 1 >= 2**31:  # TensorFlow's limit on an op's outputs (3 per path)
        raise ValueError(f"{op}: Number of outputs is too big: {3 * top_paths + 1}")
    if beam_width < 1 or not 1 <= top_paths <= beam_width:
        raise InvalidArgumentError(
            f"{op}: need 1 <= top_paths <= beam_width; received beam_width={beam_width}, "
            f"top_paths={top_paths}"
        )
    blank = x.shape[2] - 1
    # Log-softmax per frame in float64: the search compares sums of these.
    logs = x.astype(np.float64)
    logs = logs - logs.max(-1, keepdims=True)
    logs = logs - np.log(np.exp(logs).sum(-1, keepdims=True))
    bests = []
    for b, length in enumerate(lengths):
        root = _Beam(None, -1)
        root.new = [0.0, -math.inf, 0.0]
        leaves = [root]
        for t in range(length):
            leaves = _beam_step(leaves, logs[t, b], beam_width, blank)
        # Checked before anything of top_paths' size is allocated: a huge top_paths ends here.
        if len(leaves) < top_paths:
            raise InvalidArgumentError(
                f"{op}: the beam holds {len(leaves)} prefixes, fewer than top_paths={top_paths}"
            )
        bests.append(sorted(leaves, key=lambda e: e.new[2], reverse=True)[:top_paths])
    check_host_size(op, [x.shape[1], top_paths], x.dtype)
    paths = [[best[j].path() for best in bests] for j in range(top_paths)]
    scores = np.array([[e.new[2] for e in best] for best in bests], x.dtype)
    scores = scores.reshape(x.shape[1], top_paths)
    return [_dense_paths(p) for p in paths], _core.constant(scores)


def collapse_repeated(labels, seq_length, name=None):
    """Merges runs of a repeated label into one: ``[A, A, B, B, A] -> [A, B, A]``.

    Args:
        labels: int ``[batch, max_length]``.
        seq_length: int ``[batch]``: how many of each row's labels count.
        name: Ignored (TensorFlow's op name).

    Returns:
        ``(collapsed_labels, new_seq_length)``: the collapsed rows zero-padded to the longest
        (``labels``' dtype), and their lengths (``seq_length``'s dtype).

    >>> import ferrotape as ft
    >>> labels, lengths = ft.nn.collapse_repeated([[1, 1, 2, 2, 1], [3, 4, 5, 5, 5]], [5, 3])
    >>> labels.numpy(), lengths.numpy()
    (array([[1, 2, 1],
           [3, 4, 5]], dtype=int32), array([3, 3], dtype=int32))
    """
    del name
    labels, seq_length = _core.convert_to_tensor(labels), _core.convert_to_tensor(seq_length)
    values = _int_array("collapse_repeated", "labels", labels, 2)
    lengths = _int_array("collapse_repeated", "seq_length", seq_length, 1)
    keep = np.ones(values.shape, dtype=bool)
    keep[:, 1:] = values[:, 1:] != values[:, :-1]
    keep &= np.arange(values.shape[1])[None, :] < lengths[:, None]
    new_lengths = keep.sum(axis=1)
    out = np.zeros((values.shape[0], int(new_lengths.max(initial=0))), dtype=np.int64)
    for row in range(values.shape[0]):
        out[row, : new_lengths[row]] = values[row][keep[row]]
    return (
        _core.cast(_core.constant(out), labels.dtype),
        _core.cast(_core.constant(new_lengths), seq_length.dtype),
    )


def ctc_unique_labels(labels, name=None):
    """Each row's distinct labels in order of first appearance, and where each label is in
    that list (``tf.unique`` per row), for ``ctc_loss``'s ``unique`` argument.

    Args:
        labels: int ``[batch, max_label_length]``, zero-padded (the padding counts as a label).
        name: Ignored (TensorFlow's op name).

    Returns:
        ``(unique_labels, indices)``: int64 ``[batch, max_label_length]`` distinct labels
        zero-padded, and int32 ``[batch, max_label_length]`` positions in them.

    >>> import ferrotape as ft
    >>> unique, idx = ft.nn.ctc_unique_labels([[3, 4, 4, 3]])
    >>> unique.numpy(), idx.numpy()
    (array([[3, 4, 0, 0]]), array([[0, 1, 1, 0]], dtype=int32))
    """
    del name
    values = _int_array("ctc_unique_labels", "labels", labels, 2)
    unique = np.zeros(values.shape, dtype=np.int64)
    idx = np.zeros(values.shape, dtype=np.int32)
    for row, line in enumerate(values):
        seen = {}
        for col, value in enumerate(line.tolist()):
            idx[row, col] = seen.setdefault(value, len(seen))
        unique[row, : len(seen)] = list(seen)
    return _core.constant(unique), _core.constant(idx)
