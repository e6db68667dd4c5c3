"""The candidate samplers, compute_accidental_hits, nce_loss and sampled_softmax_loss run in
TensorFlow 2.21 and in ferrotape and compared. The draws come from different generators, so
the samplers are compared where they are deterministic: expected counts of the true classes
without ``unique``, and of each library's own draws; the losses are compared given the same
``sampled_values`` (values and float64 gradients). Skipped without TensorFlow
(``pip install tensorflow-cpu``); tests/test_candidate_sampling.py covers the same names."""

import os

import numpy as np
import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
tf = pytest.importorskip("tensorflow", reason="TensorFlow is not installed")

import ferrotape as ft  # noqa: E402 - after the skip

RNG = np.random.default_rng(31)
TRUE = np.array([[0, 1], [2, 9]], np.int64)


def dense(grad):
    """A gradient as numpy: ferrotape's are dense, TensorFlow's may be IndexedSlices."""
    return grad.numpy() if isinstance(grad, ft.Tensor) else tf.convert_to_tensor(grad).numpy()


SAMPLERS = [
    ("uniform_candidate_sampler", {"range_max": 10}),
    ("log_uniform_candidate_sampler", {"range_max": 10}),
    (
        "fixed_unigram_candidate_sampler",
        {"range_max": 10, "unigrams": [float(i) for i in range(1, 9)], "num_reserved_ids": 2},
    ),
    (
        "fixed_unigram_candidate_sampler",
        {"range_max": 10, "unigrams": [3.0] * 10, "distortion": 0.0},
    ),
]


@pytest.mark.parametrize("name, kwargs", SAMPLERS)
def test_expected_counts_match(name, kwargs):
    want = getattr(tf.random, name)(tf.constant(TRUE), 2, 6, False, seed=4, **kwargs)
    got = getattr(ft.random, name)(TRUE, 2, 6, False, seed=4, **kwargs)
    np.testing.assert_allclose(got[1].numpy(), want[1].numpy(), rtol=1e-6)
    # Each library's own draws: the same function of the class.
    per_class = dict(zip(want[0].numpy().tolist(), want[2].numpy().tolist(), strict=True))
    per_class_ft = dict(zip(got[0].numpy().tolist(), got[2].numpy().tolist(), strict=True))
    probe = ft.random.all_candidate_sampler(TRUE, 2, 10, False)[0]
    full = getattr(ft.random, name)(probe.numpy()[:, None], 1, 6, False, seed=1, **kwargs)[1]
    for c, count in {**per_class, **per_class_ft}.items():
        np.testing.assert_allclose(count, full.numpy()[c, 0], rtol=1e-6)


def test_unique_expected_counts_follow_the_tries():
    # Uniform over 10 with 8 unique draws: both report 1 - 0.9 ** tries for every class.
    for lib in (tf, ft):
        _, true_count, sampled_count = lib.random.uniform_candidate_sampler(
            lib.constant(TRUE), 2, 8, True, 10, seed=9
        )
        counts = np.concatenate([true_count.numpy().ravel(), sampled_count.numpy()])
        assert np.allclose(counts, counts[0])
        tries = np.log1p(-counts[0]) / np.log1p(-0.1) if counts[0] != 0.8 else 8
        assert tries >= 8 and abs(tries - round(tries)) < 1e-3


def test_learned_unigram_state_matches():
    true = np.array([[1], [1]], np.int64)
    want = [
        tf.random.learned_unigram_candidate_sampler(true, 1, 4, False, 10, seed=4321)[1].numpy()
        for _ in range(3)
    ]
    got = [
        ft.random.learned_unigram_candidate_sampler(true, 1, 4, False, 10, seed=4321)[1].numpy()
        for _ in range(3)
    ]
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_out_of_range_true_classes_are_refused_by_both():
    for lib in (tf, ft):
        with pytest.raises((tf.errors.InvalidArgumentError, ValueError), match="out of range"):
            lib.random.log_uniform_candidate_sampler([[12]], 1, 2, False, 10)


def test_all_candidate_sampler_and_accidental_hits_match():
    for want, got in zip(
        tf.random.all_candidate_sampler(TRUE, 2, 10, True),
        ft.random.all_candidate_sampler(TRUE, 2, 10, True),
        strict=True,
    ):
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    sampled = np.array([1, 9, 0, 1, 4], np.int64)
    for want, got in zip(
        tf.nn.compute_accidental_hits(TRUE, sampled, 2),
        ft.nn.compute_accidental_hits(TRUE, sampled, 2),
        strict=True,
    ):
        assert got.dtype.name == want.dtype.name
        np.testing.assert_array_equal(got.numpy(), want.numpy())


@pytest.mark.parametrize("name", ["nce_loss", "sampled_softmax_loss"])
@pytest.mark.parametrize("remove_hits", [False, True])
def test_sampled_losses_match_given_the_samples(name, remove_hits):
    b, d, c, s, nt = 4, 3, 7, 5, 2
    w, bias, x = RNG.standard_normal((c, d)), RNG.standard_normal(c), RNG.standard_normal((b, d))
    labels = np.array([[0, 1], [2, 3], [4, 1], [6, 5]], np.int64)
    values = (
        np.array([1, 5, 2, 1, 0], np.int64),
        RNG.uniform(0.2, 1.5, (b, nt)),
        RNG.uniform(0.2, 1.5, s),
    )
    results = []
    for lib in (tf, ft):
        shards = [lib.constant(w[:4]), lib.constant(w[4:])]
        bt, xt = lib.constant(bias), lib.constant(x)
        with lib.GradientTape() as tape:
            tape.watch([shards, bt, xt])
            loss = getattr(lib.nn, name)(
                shards, bt, lib.constant(labels), xt, s, c, num_true=nt,
                sampled_values=tuple(lib.constant(v) for v in values),
                remove_accidental_hits=remove_hits,
            )  # fmt: skip
        grads = tape.gradient(loss, [shards[0], shards[1], bt, xt])
        results.append([loss.numpy()] + [dense(g) for g in grads])
    for want, got in zip(*results, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
