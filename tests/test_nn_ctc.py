"""ft.nn's CTC names: ctc_loss against a brute-force sum over every alignment (values, blank
placement, time-major and batch-major logits, float64 finite-difference gradients), the greedy
and beam-search decoders against exhaustive references, collapse_repeated, ctc_unique_labels,
and bad input. Runs without TensorFlow (tests/test_nn_ctc_tf.py compares with it)."""

import itertools

import numpy as np
import pytest
from test_keras_layers import fd_grad

import ferrotape as ft

RNG = np.random.default_rng(13)


def log_softmax(x):
    x = x - x.max(-1, keepdims=True)
    return x - np.log(np.exp(x).sum(-1, keepdims=True))


def collapse(alignment, blank):
    """The label sequence an alignment reads as: repeats merged, then blanks removed."""
    merged = [c for i, c in enumerate(alignment) if i == 0 or c != alignment[i - 1]]
    return tuple(c for c in merged if c != blank)


def sequence_probs(log_probs, blank):
    """{label sequence: probability} over every alignment of (frames, classes) log-probs."""
    frames, classes = log_probs.shape
    probs = {}
    for alignment in itertools.product(range(classes), repeat=frames):
        p = np.exp(sum(log_probs[t, c] for t, c in enumerate(alignment)))
        key = collapse(alignment, blank)
        probs[key] = probs.get(key, 0.0) + p
    return probs


def brute_ctc(labels, logits_bt, label_length, logit_length, blank):
    """-log p(labels) per sample from (batch, frames, classes) logits."""
    out = []
    for b in range(len(labels)):
        lp = log_softmax(logits_bt[b, : logit_length[b]].astype(np.float64))
        target = tuple(int(v) for v in labels[b][: label_length[b]])
        out.append(-np.log(sequence_probs(lp, blank).get(target, 0.0)))
    return np.array(out)


LABELS = np.array([[1, 2, 2], [3, 1, 0], [2, 0, 0]])
LABEL_LENGTH = np.array([3, 2, 1])
LOGIT_LENGTH = np.array([5, 4, 3])


@pytest.mark.parametrize("blank_index", [None, 0, 2, -1])
@pytest.mark.parametrize("time_major", [True, False])
def test_ctc_loss_matches_the_sum_over_alignments(blank_index, time_major):
    logits = RNG.standard_normal((3, 5, 4))  # batch-major
    blank = {None: 0, -1: 3}.get(blank_index, blank_index)
    labels = LABELS.copy()
    if blank != 0:
        # Labels name classes other than the blank: move any that hit it.
        labels = np.where(labels == blank, 0, labels)
    want = brute_ctc(labels, logits, LABEL_LENGTH, LOGIT_LENGTH, blank)
    given = logits.transpose(1, 0, 2) if time_major else logits
    got = ft.nn.ctc_loss(
        labels,
        ft.constant(given.astype(np.float32)),
        LABEL_LENGTH,
        LOGIT_LENGTH,
        logits_time_major=time_major,
        blank_index=blank_index,
    )
    assert got.dtype == ft.float32 and got.shape == (3,)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-5)


def test_ctc_loss_hand_value_and_empty_labels():
    # Two uniform frames over {blank, a}: "a" has alignments a-, -a, aa (3/4); "" has -- (1/4).
    logits = np.zeros((2, 2, 2), np.float32)
    got = ft.nn.ctc_loss([[1], [0]], logits, [1, 0], [2, 2]).numpy()
    np.testing.assert_allclose(got, [-np.log(0.75), -np.log(0.25)], rtol=1e-6)


def test_ctc_loss_half_precision_keeps_its_dtype():
    logits = RNG.standard_normal((4, 2, 3)).astype(np.float16)
    got = ft.nn.ctc_loss([[1, 2], [2, 0]], logits, [2, 1], [4, 4])
    assert got.dtype == ft.float16
    want = ft.nn.ctc_loss([[1, 2], [2, 0]], logits.astype(np.float32), [2, 1], [4, 4])
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=2e-3)


@pytest.mark.parametrize("blank_index", [0, -1])
def test_ctc_loss_gradient_matches_finite_differences(blank_index):
    logits = RNG.standard_normal((5, 3, 4))
    labels = LABELS if blank_index == 0 else np.where(LABELS == 3, 1, LABELS)
    w = RNG.standard_normal(3)

    def loss(x):
        return float(
            ft.reduce_sum(
                ft.nn.ctc_loss(
                    labels, ft.constant(x), LABEL_LENGTH, LOGIT_LENGTH, blank_index=blank_index
                )
                * w
            )
        )

    x = ft.constant(logits)
    with ft.GradientTape() as tape:
        tape.watch(x)
        y = ft.reduce_sum(
            ft.nn.ctc_loss(labels, x, LABEL_LENGTH, LOGIT_LENGTH, blank_index=blank_index) * w
        )
    grad = tape.gradient(y, x).numpy()
    np.testing.assert_allclose(grad, fd_grad(loss, logits), rtol=1e-5, atol=1e-7)
    # Frames past a sample's logit_length get no gradient.
    assert not grad[4, 1].any() and not grad[3:, 2].any()


def test_ctc_loss_gradient_is_softmax_minus_posterior():
    # One frame, label "a" (class 1): the only alignment is "a", so the posterior is one-hot.
    logits = np.array([[[0.5, -0.2, 1.0]]])
    x = ft.constant(logits)
    with ft.GradientTape() as tape:
        tape.watch(x)
        y = ft.nn.ctc_loss([[1]], x, [1], [1])
    softmax = np.exp(logits) / np.exp(logits).sum()
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), softmax - [0, 1, 0], rtol=1e-6)


def test_ctc_loss_bad_input():
    logits = np.zeros((3, 1, 3), np.float32)
    with pytest.raises(ValueError, match="label_length is required"):
        ft.nn.ctc_loss([[1]], logits, None, [3])
    with pytest.raises(ValueError, match="ctc_loss: logits must be a 3-D"):
        ft.nn.ctc_loss([[1]], np.zeros((3, 3), np.float32), [1], [3])
    with pytest.raises(ValueError, match="ctc_loss: labels .* must match"):
        ft.nn.ctc_loss([[1], [2]], logits, [1], [3])
    with pytest.raises(ValueError, match="ctc_loss: logit_length must lie in"):
        ft.nn.ctc_loss([[1]], logits, [1], [4])
    with pytest.raises(ValueError, match="ctc_loss: labels must lie in"):
        ft.nn.ctc_loss([[3]], logits, [1], [3])
    with pytest.raises(ValueError, match="ctc_loss: blank_index must lie in"):
        ft.nn.ctc_loss([[1]], logits, [1], [3], blank_index=3)


# ---------------------------------------------------------------- decoders


def test_greedy_decoder_merges_repeats_and_drops_blanks():
    # Classes {a, b, blank}: frames a a - a b b -, and a shorter second sample.
    best = [[0, 1], [0, 0], [2, 2], [0, 2], [1, 2], [1, 2], [2, 2]]
    x = np.full((7, 2, 3), -1.0, np.float32)
    for t, row in enumerate(best):
        for b, c in enumerate(row):
            x[t, b, c] = 2.0 + t
    decoded, neg = ft.nn.ctc_greedy_decoder(x, [7, 2])
    assert decoded[0].dtype == ft.int64
    np.testing.assert_array_equal(decoded[0].numpy(), [[0, 0, 1], [1, 0, -1]])
    np.testing.assert_allclose(neg.numpy(), [[-sum(2.0 + t for t in range(7))], [-5.0]])
    unmerged, _ = ft.nn.ctc_greedy_decoder(x, [7, 2], merge_repeated=False)
    np.testing.assert_array_equal(unmerged[0].numpy(), [[0, 0, 0, 1, 1], [1, 0, -1, -1, -1]])
    # blank_index=0 makes "a" the blank and class 2 a label.
    other, _ = ft.nn.ctc_greedy_decoder(x, [7, 2], blank_index=0)
    np.testing.assert_array_equal(other[0].numpy(), [[2, 1, 2], [1, -1, -1]])


def test_greedy_decoder_empty_and_zero_length():
    decoded, neg = ft.nn.ctc_greedy_decoder(np.zeros((2, 1, 3), np.float32), [0])
    assert decoded[0].shape == (1, 0)
    np.testing.assert_array_equal(neg.numpy(), [[0.0]])


@pytest.mark.parametrize("seed", range(4))
def test_beam_search_with_a_wide_beam_is_exact(seed):
    rng = np.random.default_rng(seed)
    frames, classes = 4, 3
    x = (rng.standard_normal((frames, 1, classes)) * 1.5).astype(np.float32)
    probs = sequence_probs(log_softmax(x[:, 0].astype(np.float64)), blank=classes - 1)
    ranked = sorted(probs.items(), key=lambda kv: -kv[1])[:3]
    # A beam holding every prefix loses nothing: the search is exact.
    decoded, log_p = ft.nn.ctc_beam_search_decoder(x, [frames], beam_width=64, top_paths=3)
    assert len(decoded) == 3 and log_p.shape == (1, 3)
    for j, (path, p) in enumerate(ranked):
        row = decoded[j].numpy()[0]
        assert tuple(row[row >= 0]) == path
        np.testing.assert_allclose(log_p.numpy()[0, j], np.log(p), rtol=1e-5)


def test_beam_search_keeps_repeats_and_narrow_beams_prune():
    # Frames b, -, b over {a, b, blank}: the best sequence is "b b" (not merged).
    p = np.array([[0.05, 0.9, 0.05], [0.05, 0.05, 0.9], [0.05, 0.9, 0.05]])
    x = np.log(p)[:, None, :].astype(np.float32)
    decoded, log_p = ft.nn.ctc_beam_search_decoder(x, [3], beam_width=1)
    np.testing.assert_array_equal(decoded[0].numpy(), [[1, 1]])
    # With one prefix per frame, "bb" carries only the paths the beam kept: b-b here.
    np.testing.assert_allclose(log_p.numpy(), [[np.log(0.9**3)]], rtol=1e-5)


def test_beam_search_bad_input():
    x = np.zeros((2, 1, 3), np.float32)
    with pytest.raises(ValueError, match="top_paths <= beam_width"):
        ft.nn.ctc_beam_search_decoder(x, [2], beam_width=2, top_paths=3)
    with pytest.raises(ValueError, match="fewer than top_paths"):
        ft.nn.ctc_beam_search_decoder(x, [0], beam_width=4, top_paths=2)
    with pytest.raises(ValueError, match="sequence_length must hold"):
        ft.nn.ctc_greedy_decoder(x, [3])
    with pytest.raises(ValueError, match="inputs must be a 3-D"):
        ft.nn.ctc_greedy_decoder(np.zeros((2, 3), np.float32), [2])


# ---------------------------------------------------------------- label helpers


def test_collapse_repeated():
    labels, lengths = ft.nn.collapse_repeated(
        ft.constant([[1, 1, 2, 2, 1], [1, 2, 3, 4, 5], [7, 7, 7, 0, 0]], dtype=ft.int64),
        ft.constant([5, 3, 3], dtype=ft.int64),
    )
    assert labels.dtype == ft.int64 and lengths.dtype == ft.int64
    np.testing.assert_array_equal(labels.numpy(), [[1, 2, 1], [1, 2, 3], [7, 0, 0]])
    np.testing.assert_array_equal(lengths.numpy(), [3, 3, 1])


def test_ctc_unique_labels():
    unique, idx = ft.nn.ctc_unique_labels([[3, 4, 4, 3], [1, 1, 0, 0], [5, 6, 7, 8]])
    assert unique.dtype == ft.int64 and idx.dtype == ft.int32
    np.testing.assert_array_equal(unique.numpy(), [[3, 4, 0, 0], [1, 0, 0, 0], [5, 6, 7, 8]])
    np.testing.assert_array_equal(idx.numpy(), [[0, 1, 1, 0], [0, 0, 1, 1], [0, 1, 2, 3]])
    # ctc_loss accepts them (TensorFlow's faster TPU path) with the same result.
    logits = RNG.standard_normal((6, 3, 9)).astype(np.float32)
    labels = np.array([[3, 4, 4, 3], [1, 1, 0, 0], [5, 6, 7, 8]])
    lengths = [4, 2, 4]
    np.testing.assert_array_equal(
        ft.nn.ctc_loss(labels, logits, lengths, [6, 6, 6], unique=(unique, idx)).numpy(),
        ft.nn.ctc_loss(labels, logits, lengths, [6, 6, 6]).numpy(),
    )


def test_decoders_read_int_arguments_as_tf():
    x = ft.zeros([3, 1, 2])
    # TensorFlow: top_paths makes 3 outputs each, past int32 a ValueError (ferrotape hung
    # allocating a list of 2**31 paths); a string is make_int's TypeError.
    with pytest.raises(ValueError, match="Number of outputs is too big: 6442450942"):
        ft.nn.ctc_beam_search_decoder(x, [3], beam_width=2**31 - 1, top_paths=2**31 - 1)
    with pytest.raises(TypeError, match="Expected int for argument 'beam_width'"):
        ft.nn.ctc_beam_search_decoder(x, [3], beam_width="a")
    with pytest.raises(TypeError, match="Expected int for argument 'blank_index'"):
        ft.nn.ctc_greedy_decoder(x, [3], blank_index="a")
    # More paths asked than the beam found: refused before anything of that size is made.
    with pytest.raises(ft.errors.InvalidArgumentError, match="fewer than top_paths=100000000"):
        ft.nn.ctc_beam_search_decoder(x, [3], beam_width=10**8, top_paths=10**8)
    # A float beam width truncates (TensorFlow's make_int): TF's value for these inputs.
    _, log_p = ft.nn.ctc_beam_search_decoder(x, [3], beam_width=2.5)
    np.testing.assert_allclose(log_p.numpy(), [[-0.28768206]], rtol=1e-6)
