"""ft.nn's CTC names run in TensorFlow 2.21 and in ferrotape and compared: ctc_loss values and
gradients (TensorFlow's dense ctc_loss computes in float32), the decoders' paths (TensorFlow's
SparseTensors made dense with -1) and scores over random inputs and beam widths small enough
to prune, collapse_repeated and ctc_unique_labels. Skipped without TensorFlow
(``pip install tensorflow-cpu``); tests/test_nn_ctc.py covers the same names without it."""

import os

import numpy as np
import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
tf = pytest.importorskip("tensorflow", reason="TensorFlow is not installed")

import ferrotape as ft  # noqa: E402 - after the skip

RNG = np.random.default_rng(29)


def dense(sparse):
    return tf.sparse.to_dense(sparse, default_value=-1).numpy()


@pytest.mark.parametrize("blank_index", [None, 2, -1])
@pytest.mark.parametrize("time_major", [True, False])
def test_ctc_loss_and_gradient_match(blank_index, time_major):
    x = RNG.standard_normal((6, 3, 5)).astype(np.float32)
    if not time_major:
        x = x.transpose(1, 0, 2).copy()
    labels = np.array([[1, 2, 2, 0], [3, 1, 0, 0], [4, 4, 4, 4]], np.int32)
    label_length = np.array([3, 2, 1], np.int32)
    logit_length = np.array([6, 5, 4], np.int32)
    weights = np.array([1.0, 2.0, 3.0], np.float32)
    results = []
    for lib in (tf, ft):
        xt = lib.constant(x)
        with lib.GradientTape() as tape:
            tape.watch(xt)
            loss = lib.nn.ctc_loss(
                lib.constant(labels),
                xt,
                lib.constant(label_length),
                lib.constant(logit_length),
                logits_time_major=time_major,
                blank_index=blank_index,
            )
            weighted = lib.reduce_sum(loss * weights)
        results.append((loss.numpy(), tape.gradient(weighted, xt).numpy()))
    (want, want_grad), (got, got_grad) = results
    np.testing.assert_allclose(got, want, rtol=1e-5)
    np.testing.assert_allclose(got_grad, want_grad, atol=2e-6)


@pytest.mark.parametrize("merge_repeated", [True, False])
@pytest.mark.parametrize("blank_index", [None, 0, 2])
def test_greedy_decoder_matches(merge_repeated, blank_index):
    # Few classes so that repeats and blanks are common.
    x = RNG.standard_normal((7, 3, 3)).astype(np.float32)
    lengths = [7, 3, 0]
    (want,), want_neg = tf.nn.ctc_greedy_decoder(
        x, lengths, merge_repeated=merge_repeated, blank_index=blank_index
    )
    (got,), got_neg = ft.nn.ctc_greedy_decoder(
        x, lengths, merge_repeated=merge_repeated, blank_index=blank_index
    )
    np.testing.assert_array_equal(got.numpy(), dense(want))
    np.testing.assert_allclose(got_neg.numpy(), want_neg.numpy(), rtol=1e-6)


@pytest.mark.parametrize("seed", range(30))
def test_beam_search_decoder_matches(seed):
    rng = np.random.default_rng(seed)
    frames, classes = int(rng.integers(1, 8)), int(rng.integers(2, 6))
    x = (rng.standard_normal((frames, 2, classes)) * rng.uniform(0.3, 3)).astype(np.float32)
    beam_width = int(rng.integers(1, 8))
    top_paths = int(rng.integers(1, beam_width + 1))
    lengths = [frames, int(rng.integers(0, frames + 1))]
    try:
        want, want_log_p = tf.nn.ctc_beam_search_decoder(
            x, lengths, beam_width=beam_width, top_paths=top_paths
        )
    except tf.errors.InvalidArgumentError:
        # Fewer prefixes than top_paths (a short sequence): both refuse.
        with pytest.raises(ValueError, match="fewer than top_paths"):
            ft.nn.ctc_beam_search_decoder(x, lengths, beam_width=beam_width, top_paths=top_paths)
        return
    got, got_log_p = ft.nn.ctc_beam_search_decoder(
        x, lengths, beam_width=beam_width, top_paths=top_paths
    )
    assert len(got) == len(want) == top_paths
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g.numpy(), dense(w))
    np.testing.assert_allclose(got_log_p.numpy(), want_log_p.numpy(), rtol=1e-5, atol=1e-5)


def test_label_helpers_match():
    labels = np.array([[1, 1, 2, 2, 1], [1, 2, 3, 4, 5], [3, 3, 0, 0, 0]], np.int32)
    lengths = np.array([5, 3, 4], np.int32)
    for want, got in zip(
        tf.nn.collapse_repeated(labels, lengths),
        ft.nn.collapse_repeated(labels, lengths),
        strict=True,
    ):
        assert got.dtype.name == want.dtype.name
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    for want, got in zip(
        tf.nn.ctc_unique_labels(labels), ft.nn.ctc_unique_labels(labels), strict=True
    ):
        assert got.dtype.name == want.dtype.name
        np.testing.assert_array_equal(got.numpy(), want.numpy())
