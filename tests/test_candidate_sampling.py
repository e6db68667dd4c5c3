"""The candidate samplers (ft.random.*_candidate_sampler and their ft.nn aliases),
compute_accidental_hits, nce_loss and sampled_softmax_loss: distributions (empirical
frequencies), expected counts, seeds, the learned sampler's state, numpy references for the
losses and float64 finite-difference gradients. Runs without TensorFlow
(tests/test_candidate_sampling_tf.py compares with it)."""

import numpy as np
import pytest
from test_keras_layers import fd_grad

import ferrotape as ft

RNG = np.random.default_rng(17)
TRUE = np.array([[0, 1], [2, 3]], np.int64)


def log_uniform_probs(n):
    k = np.arange(n)
    return np.log((k + 2) / (k + 1)) / np.log(n + 1)


def test_the_nn_aliases_are_the_random_names():
    for name in ("uniform", "log_uniform", "learned_unigram", "fixed_unigram", "all"):
        attr = f"{name}_candidate_sampler"
        assert getattr(ft.nn, attr) is getattr(ft.random, attr)


def check_outputs(result, num_sampled, batch=2, num_true=2):
    sampled, true_count, sampled_count = result
    assert sampled.dtype == ft.int64 and sampled.shape == (num_sampled,)
    assert true_count.dtype == ft.float32 and true_count.shape == (batch, num_true)
    assert sampled_count.dtype == ft.float32 and sampled_count.shape == (num_sampled,)
    return sampled.numpy(), true_count.numpy(), sampled_count.numpy()


@pytest.mark.parametrize(
    "sampler, probs",
    [
        (ft.random.uniform_candidate_sampler, np.full(10, 0.1)),
        (ft.random.log_uniform_candidate_sampler, log_uniform_probs(10)),
    ],
)
def test_expected_counts_without_unique_are_p_times_num_sampled(sampler, probs):
    sampled, true_count, sampled_count = check_outputs(sampler(TRUE, 2, 6, False, 10, seed=3), 6)
    assert ((sampled >= 0) & (sampled < 10)).all()
    np.testing.assert_allclose(true_count, probs[TRUE] * 6, rtol=1e-6)
    np.testing.assert_allclose(sampled_count, probs[sampled] * 6, rtol=1e-6)


@pytest.mark.parametrize(
    "sampler, probs",
    [
        (ft.random.uniform_candidate_sampler, np.full(10, 0.1)),
        (ft.random.log_uniform_candidate_sampler, log_uniform_probs(10)),
    ],
)
def test_unique_draws_are_distinct_and_counted_by_tries(sampler, probs):
    for seed in range(8):
        sampled, true_count, sampled_count = check_outputs(
            sampler(TRUE, 2, 8, True, 10, seed=seed), 8
        )
        assert len(set(sampled.tolist())) == 8
        # One number of tries explains every expected count (8 when nothing repeated).
        counts = np.concatenate([true_count.ravel(), sampled_count])
        p = np.concatenate([probs[TRUE].ravel(), probs[sampled]])
        tries = np.log1p(-np.minimum(counts, 1 - 1e-7)) / np.log1p(-p)
        if np.allclose(counts, p * 8, rtol=1e-6):
            continue
        assert tries.min() > 8
        np.testing.assert_allclose(counts, -np.expm1(round(tries[0]) * np.log1p(-p)), rtol=1e-5)


def test_log_uniform_frequencies():
    sampled, _, _ = ft.random.log_uniform_candidate_sampler(TRUE, 2, 40000, False, 6, seed=1)
    freq = np.bincount(sampled.numpy(), minlength=6) / 40000
    np.testing.assert_allclose(freq, log_uniform_probs(6), atol=0.01)


def test_seeds_repeat_the_draws():
    ft.random.set_seed(5)
    first = ft.random.uniform_candidate_sampler(TRUE, 2, 5, True, 50, seed=7)[0].numpy()
    ft.random.set_seed(5)
    again = ft.random.uniform_candidate_sampler(TRUE, 2, 5, True, 50, seed=7)[0].numpy()
    np.testing.assert_array_equal(first, again)


def test_learned_unigram_counts_carry_over_between_calls():
    true = np.array([[1], [1]], np.int64)
    got = []
    for _ in range(3):
        _, true_count, _ = ft.random.learned_unigram_candidate_sampler(
            true, 1, 4, False, 10, seed=987
        )
        got.append(float(true_count[0, 0]))
    # Class 1 starts at 1 of 10, and each call adds 2 to it: 1/10, 3/12, 5/14 of 4 draws.
    np.testing.assert_allclose(got, [0.4, 1.0, 20 / 14], rtol=1e-6)


def test_fixed_unigram_reserved_distortion_and_shards(tmp_path):
    unigrams = [1.0, 4.0, 9.0]
    sampled, true_count, _ = ft.random.fixed_unigram_candidate_sampler(
        [[1]], 1, 3000, False, 4, unigrams=unigrams, distortion=0.5, num_reserved_ids=1, seed=2
    )
    # Weights 0, 1, 2, 3 (square roots); class 0 is reserved and never drawn.
    assert 0 not in set(sampled.numpy().tolist())
    np.testing.assert_allclose(true_count.numpy(), [[3000 / 6]], rtol=1e-6)
    freq = np.bincount(sampled.numpy(), minlength=4) / 3000
    np.testing.assert_allclose(freq, [0, 1 / 6, 2 / 6, 3 / 6], atol=0.03)
    # Two shards, shard 1, one reserved id: TensorFlow's kernel keeps unigram ids 1 and 3.
    _, true_count, _ = ft.random.fixed_unigram_candidate_sampler(
        [[0]], 1, 1, False, 2, unigrams=[1.0, 2.0, 3.0, 4.0, 5.0], num_reserved_ids=1,
        num_shards=2, shard=1, seed=2,
    )  # fmt: skip
    np.testing.assert_allclose(true_count.numpy(), [[2 / 6]], rtol=1e-6)
    vocab = tmp_path / "vocab.csv"
    vocab.write_text("a,1\nb,3\n")
    _, true_count, _ = ft.random.fixed_unigram_candidate_sampler(
        [[1]], 1, 1, False, 2, vocab_file=str(vocab), seed=2
    )
    np.testing.assert_allclose(true_count.numpy(), [[0.75]], rtol=1e-6)
    with pytest.raises(ValueError, match="range is 5 must be equal to weights size 4"):
        ft.random.fixed_unigram_candidate_sampler(
            [[1]], 1, 1, False, 5, unigrams=unigrams, num_reserved_ids=1
        )


def test_all_candidate_sampler():
    sampled, true_count, sampled_count = check_outputs(
        ft.random.all_candidate_sampler(TRUE, 2, 4, True), 4
    )
    np.testing.assert_array_equal(sampled, [0, 1, 2, 3])
    assert (true_count == 1).all() and (sampled_count == 1).all()


def test_sampler_bad_input():
    with pytest.raises(ValueError, match="range is too small"):
        ft.random.uniform_candidate_sampler(TRUE, 2, 11, True, 10)
    with pytest.raises(ValueError, match=r"true_classes must be .*num_true=3"):
        ft.random.log_uniform_candidate_sampler(TRUE, 3, 2, True, 10)
    with pytest.raises(ValueError, match=r"`true_candidate` out of range \[0, 10\), received 12"):
        ft.random.learned_unigram_candidate_sampler([[12]], 1, 2, False, 10)
    with pytest.raises(ValueError, match="nonzero probability"):
        ft.random.fixed_unigram_candidate_sampler(
            [[1]], 1, 3, True, 3, unigrams=[1.0, 1.0], num_reserved_ids=1
        )


def test_compute_accidental_hits():
    indices, ids, weights = ft.nn.compute_accidental_hits(TRUE, [1, 5, 2, 1, 3], 2)
    assert indices.dtype == ft.int32 and ids.dtype == ft.int64 and weights.dtype == ft.float32
    # Row 0's class 1 was drawn at 0 and 3 (the last counts); row 1's 2 and 3 at 2 and 4.
    np.testing.assert_array_equal(indices.numpy(), [0, 1, 1])
    np.testing.assert_array_equal(ids.numpy(), [3, 2, 4])
    np.testing.assert_array_equal(weights.numpy(), [-np.finfo(np.float32).max] * 3)


# ---------------------------------------------------------------- sampled losses

B, D, C, S, NT = 4, 3, 7, 5, 2
LABELS = np.array([[0, 1], [2, 3], [4, 1], [6, 5]], np.int64)
SAMPLED = np.array([1, 5, 2, 1, 0], np.int64)
TRUE_COUNT = RNG.uniform(0.2, 1.5, (B, NT))
SAMPLED_COUNT = RNG.uniform(0.2, 1.5, S)


def reference_logits(w, b, x, remove_hits):
    true = np.einsum("bd,btd->bt", x, w[LABELS]) + b[LABELS] - np.log(TRUE_COUNT)
    sampled = x @ w[SAMPLED].T + b[SAMPLED]
    if remove_hits:
        for row in range(B):
            for col, c in enumerate(SAMPLED):
                last = max(j for j, s in enumerate(SAMPLED) if s == c)
                if c in LABELS[row] and col == last:
                    sampled[row, col] += -np.finfo(np.float32).max
    sampled = sampled - np.log(SAMPLED_COUNT)
    targets = np.concatenate([np.full((B, NT), 1 / NT), np.zeros((B, S))], axis=1)
    return np.concatenate([true, sampled], axis=1), targets


def reference_nce(w, b, x, remove_hits):
    z, t = reference_logits(w, b, x, remove_hits)
    return (np.maximum(z, 0) - z * t + np.log1p(np.exp(-np.abs(z)))).sum(axis=1)


def reference_softmax(w, b, x, remove_hits):
    z, t = reference_logits(w, b, x, remove_hits)
    z = z - z.max(axis=1, keepdims=True)
    return -(t * (z - np.log(np.exp(z).sum(axis=1, keepdims=True)))).sum(axis=1)


LOSSES = [(ft.nn.nce_loss, reference_nce), (ft.nn.sampled_softmax_loss, reference_softmax)]


def call(loss, w, b, x, remove_hits):
    values = (SAMPLED, TRUE_COUNT, SAMPLED_COUNT)
    return loss(
        w, b, LABELS, x, S, C, num_true=NT, sampled_values=values,
        remove_accidental_hits=remove_hits,
    )  # fmt: skip


@pytest.mark.parametrize("loss, reference", LOSSES)
@pytest.mark.parametrize("remove_hits", [False, True])
def test_sampled_losses_match_numpy(loss, reference, remove_hits):
    w, b, x = RNG.standard_normal((C, D)), RNG.standard_normal(C), RNG.standard_normal((B, D))
    got = call(loss, ft.constant(w), ft.constant(b), ft.constant(x), remove_hits)
    assert got.shape == (B,) and got.dtype == ft.float64
    np.testing.assert_allclose(got.numpy(), reference(w, b, x, remove_hits), rtol=1e-10)
    # Weights given as row shards (TensorFlow's "div" partitioning) read the same.
    shards = [ft.constant(w[:3]), ft.constant(w[3:])]
    np.testing.assert_allclose(
        call(loss, shards, ft.constant(b), ft.constant(x), remove_hits).numpy(), got.numpy()
    )


@pytest.mark.parametrize("loss, reference", LOSSES)
def test_sampled_losses_gradients_match_finite_differences(loss, reference):
    w, b, x = RNG.standard_normal((C, D)), RNG.standard_normal(C), RNG.standard_normal((B, D))
    weights = RNG.standard_normal(B)
    ts = [ft.constant(v) for v in (w, b, x)]
    with ft.GradientTape() as tape:
        tape.watch(ts)
        y = ft.reduce_sum(call(loss, *ts, True) * weights)
    grads = tape.gradient(y, ts)
    args = [w, b, x]
    for i in range(3):

        def f(v, i=i):
            vals = list(args)
            vals[i] = v
            return float((reference(*vals, True) * weights).sum())

        np.testing.assert_allclose(grads[i].numpy(), fd_grad(f, args[i]), rtol=1e-5, atol=1e-7)


def test_sampled_losses_draw_their_own_samples():
    ft.random.set_seed(1)
    w, b = ft.constant(RNG.standard_normal((50, 4))), ft.zeros([50], dtype=ft.float64)
    x = ft.constant(RNG.standard_normal((3, 4)))
    for loss in (ft.nn.nce_loss, ft.nn.sampled_softmax_loss):
        got = loss(w, b, [[1], [2], [3]], x, 10, 50)
        assert got.shape == (3,) and np.isfinite(got.numpy()).all()
    with pytest.raises(ValueError, match=r"nce_loss: labels must be \[batch_size, num_true=1\]"):
        ft.nn.nce_loss(w, b, [[1, 2]], x, 10, 50)
