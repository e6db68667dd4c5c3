"""The same summary program run with TensorFlow's ``tf.summary`` and with ``ft.summary``; the
event files are read back with TensorBoard's reader and compared tag by tag: steps, plugins,
dtypes, shapes and values (histogram buckets exactly, images as decoded pixels).

TensorFlow (whose pip package brings tensorboard) is only needed here; without it the module is
skipped.
"""

import os

import numpy as np
import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
real_tf = pytest.importorskip(
    "tensorflow", reason="TensorFlow is not installed (pip install tensorflow-cpu)"
)

from test_summary import read_events  # noqa: E402

import ferrotape  # noqa: E402 - after the skip, so that a missing TensorFlow skips cleanly

RNG = np.random.default_rng(7)
NORMAL = RNG.normal(size=(40, 25)).astype(np.float32)
INTS = RNG.integers(-5, 6, size=200).astype(np.int32)
FLOAT_IMAGES = RNG.uniform(-0.3, 1.3, size=(4, 5, 6, 3)).astype(np.float32)
GREY_IMAGES = RNG.integers(0, 256, size=(2, 3, 4, 1)).astype(np.uint8)
RGBA_IMAGES = RNG.uniform(0, 1, size=(1, 4, 4, 4))
CLIPS = RNG.uniform(-1.2, 1.2, size=(4, 30, 2)).astype(np.float32)


def summary_program(tf, logdir):
    """Writes every kind of summary; returns the results of the calls that return one."""
    results = [bool(tf.summary.scalar("no_writer", 1.0, step=0))]
    writer = tf.summary.create_file_writer(logdir)
    with writer.as_default(step=3):
        tf.summary.scalar("scalar/float", 0.1)
        tf.summary.scalar("scalar/int", np.int64(7), step=4)
        tf.summary.scalar("scalar/tensor", tf.constant(2.5, tf.float64), step=5)
        tf.summary.histogram("hist/normal", NORMAL)
        tf.summary.histogram("hist/ints", INTS, buckets=7)
        tf.summary.histogram("hist/edges", [0.0, 1.0, 2.0, 3.0, 4.0, 5.0], buckets=5)
        tf.summary.histogram("hist/single", [3.0, 3.0, 3.0], buckets=4)
        tf.summary.histogram("hist/empty", np.zeros([0], np.float32), buckets=3)
        tf.summary.histogram("hist/none", [1.0, 2.0], buckets=0)
        tf.summary.image("image/float", FLOAT_IMAGES)
        tf.summary.image("image/grey", GREY_IMAGES, max_outputs=1)
        tf.summary.image("image/rgba", RGBA_IMAGES, step=6)
        tf.summary.audio("audio/clips", CLIPS, sample_rate=22050)
        tf.summary.audio("audio/two", CLIPS[:, :, :1], 8000, max_outputs=2)
        tf.summary.text("text/scalar", "**markdown** text")
        tf.summary.text("text/table", [["a", "b"], ["c", "d"]])
        with tf.summary.record_if(False):
            results.append(bool(tf.summary.scalar("skipped", 1.0)))
        results.append(bool(tf.summary.should_record_summaries()))
    with writer.as_default():
        try:
            tf.summary.scalar("no_step", 1.0)
            results.append("no error")
        except ValueError as error:
            results.append(str(error))
    writer.close()
    return results


def test_the_event_files_match_tensorflows(tmp_path):
    tf_results = summary_program(real_tf, str(tmp_path / "tf"))
    ft_results = summary_program(ferrotape, str(tmp_path / "ft"))
    assert ft_results == tf_results
    tf_events, ft_events = read_events(tmp_path / "tf"), read_events(tmp_path / "ft")
    assert sorted(ft_events) == sorted(tf_events)
    for tag, tf_series in tf_events.items():
        ft_series = ft_events[tag]
        assert [(s, p) for s, _, p in ft_series] == [(s, p) for s, _, p in tf_series], tag
        for (_, ft_value, _), (_, tf_value, _) in zip(ft_series, tf_series, strict=True):
            assert ft_value.dtype == tf_value.dtype and ft_value.shape == tf_value.shape, tag
            if tag.startswith("image/"):
                assert ft_value[:2].tolist() == tf_value[:2].tolist(), tag
                for ours, theirs in zip(ft_value[2:], tf_value[2:], strict=True):
                    decoded = [real_tf.io.decode_png(png).numpy() for png in (ours, theirs)]
                    np.testing.assert_array_equal(decoded[0], decoded[1], err_msg=tag)
            else:
                np.testing.assert_array_equal(ft_value, tf_value, err_msg=tag)


def test_the_histogram_bucketing_matches_tensorflows_on_awkward_data():
    from tensorboard.plugins.histogram.summary_v2 import _buckets

    from ferrotape.summary.summaries import histogram_buckets

    rng = np.random.default_rng(3)
    cases = [
        rng.normal(size=1000) * 1e-3 + 1e6,  # a range tiny next to the values
        rng.uniform(-1, 1, size=500).astype(np.float32),
        np.array([1e-300, 2e-300, 3e-300]),
        np.arange(100.0),
    ]
    for data in cases:
        for count in (1, 3, 30, 64):
            expected = _buckets(real_tf.constant(data), real_tf.constant(count)).numpy()
            np.testing.assert_array_equal(histogram_buckets(data, count), expected)


def traced_summaries_program(tf, logdir):
    """Summaries inside compiled functions called under different default writers: each writes
    where the writer was when it was traced (none: never), as TensorFlow's trace captures it."""
    first, second = (tf.summary.create_file_writer(f"{logdir}/{n}") for n in ("a", "b"))

    @tf.function
    def log(x):
        tf.summary.scalar("x", x, step=0)
        return x

    with first.as_default():
        log(tf.constant(1.0))
    with second.as_default():
        log(tf.constant(2.0))
    log(tf.constant(3.0))

    @tf.function
    def traced_without_a_writer(x):
        tf.summary.scalar("y", x, step=0)
        return x

    traced_without_a_writer(tf.constant(1.0))
    with second.as_default():
        traced_without_a_writer(tf.constant(5.0))
    step = tf.Variable(0, dtype=tf.int64)

    @tf.function
    def at_the_default_step(x):
        step.assign_add(1)
        tf.summary.scalar("z", x)
        return x

    with first.as_default(step=step):
        for v in (4.0, 6.0):
            at_the_default_step(tf.constant(v))
    first.close()
    second.close()


def test_summaries_in_compiled_functions_write_where_tensorflows_do(tmp_path):
    traced_summaries_program(real_tf, str(tmp_path / "tf"))
    traced_summaries_program(ferrotape, str(tmp_path / "ft"))
    for writer in ("a", "b"):
        theirs, ours = (read_events(tmp_path / fw / writer) for fw in ("tf", "ft"))
        assert {tag: [(s, v.tolist()) for s, v, _ in series] for tag, series in ours.items()} == {
            tag: [(s, v.tolist()) for s, v, _ in series] for tag, series in theirs.items()
        }, writer
