"""ft.summary writes TensorBoard event files that TensorBoard's own reader reads back: tags,
steps, values, plugin names, histogram buckets (hand-computed), PNG pixels, and TF's rules for
the default writer, step and ``record_if``. tests/test_summary_tf.py compares with TensorFlow.
"""

import io
import struct
import subprocess
import sys
import threading
import warnings
import wave
import zlib

import numpy as np
import pytest

# scripts/setup.sh installs tensorboard, so this runs in CI; the skip is for environments
# without the extra (such as a TensorFlow one used for the comparisons).
pytest.importorskip("tensorboard", reason="the tensorboard extra is not installed")

from tensorboard.backend.event_processing.event_accumulator import (  # noqa: E402
    EventAccumulator,
)
from tensorboard.util import tensor_util  # noqa: E402

import ferrotape as ft  # noqa: E402
from ferrotape.summary.encoders import encode_png, encode_wav  # noqa: E402
from ferrotape.summary.summaries import histogram_buckets  # noqa: E402


def read_events(logdir):
    """{tag: [(step, value as ndarray, plugin name), ...]} as TensorBoard loads them."""
    accumulator = EventAccumulator(str(logdir), size_guidance={"tensors": 0})
    accumulator.Reload()
    events = {}
    for tag in accumulator.Tags()["tensors"]:
        plugin = accumulator.SummaryMetadata(tag).plugin_data.plugin_name
        events[tag] = [
            (e.step, tensor_util.make_ndarray(e.tensor_proto), plugin)
            for e in accumulator.Tensors(tag)
        ]
    return events


def decode_png(data):
    """Pixels of a PNG written with filter 0 on every row (what encode_png writes)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    chunks, at = {}, 8
    while at < len(data):
        (length,) = struct.unpack(">I", data[at : at + 4])
        kind, body = data[at + 4 : at + 8], data[at + 8 : at + 8 + length]
        (crc,) = struct.unpack(">I", data[at + 8 + length : at + 12 + length])
        assert crc == zlib.crc32(kind + body)
        chunks[kind] = chunks.get(kind, b"") + body
        at += 12 + length
    width, height, depth, color = struct.unpack(">IIBB", chunks[b"IHDR"][:10])
    assert depth == 8
    channels = {0: 1, 4: 2, 2: 3, 6: 4}[color]
    rows = np.frombuffer(zlib.decompress(chunks[b"IDAT"]), np.uint8).reshape(height, -1)
    assert (rows[:, 0] == 0).all()
    return rows[:, 1:].reshape(height, width, channels)


@pytest.fixture(autouse=True)
def fresh_summary_state():
    """Each test starts with no default writer, step or condition (set_as_default lasts)."""
    from ferrotape.summary.writer import _state

    yield
    _state.writer = _state.step = _state.is_recording = None


def test_import_ferrotape_loads_neither_summary_nor_tensorboard():
    code = (
        "import sys, ferrotape as ft\n"
        "assert 'ferrotape.summary' not in sys.modules\n"
        "ft.summary.scalar('x', 1.0, step=0)\n"
        "ft.summary.histogram('h', [1.0], step=0)\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('tensorboard', 'google')))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[]"


def test_without_a_tensorboard_package_the_error_names_the_extra(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "tensorboard.compat.proto", None)
    with pytest.raises(ImportError, match=r"ferrotape\[tensorboard\]"):
        ft.summary.create_file_writer(tmp_path)


def test_summaries_without_a_default_writer_write_nothing_and_need_no_step():
    for result in (
        ft.summary.scalar("s", 1.0),
        ft.summary.histogram("h", [1.0, 2.0]),
        ft.summary.image("i", np.zeros((1, 2, 2, 1))),
        ft.summary.text("t", "x"),
    ):
        assert result.dtype == ft.bool and not bool(result)
    assert not bool(ft.summary.should_record_summaries())


def test_scalars_read_back_with_tags_steps_values_and_plugin(tmp_path):
    writer = ft.summary.create_file_writer(tmp_path)
    with writer.as_default():
        assert bool(ft.summary.scalar("loss", 0.5, step=1))
        ft.summary.scalar("loss", ft.constant(0.25, ft.float64), step=ft.constant(2))
        ft.summary.scalar("acc", np.int32(3), step=np.int64(7))
    events = read_events(tmp_path)
    assert sorted(events) == ["acc", "loss"]
    assert [(s, v.item(), p) for s, v, p in events["loss"]] == [
        (1, 0.5, "scalars"),
        (2, 0.25, "scalars"),
    ]
    assert events["acc"][0][:2] == (7, 3.0) and events["acc"][0][1].dtype == np.float32
    names = [p.name for p in tmp_path.iterdir()]
    assert len(names) == 1 and names[0].startswith("events.out.tfevents.")
    assert names[0].endswith(".v2")


def test_a_missing_step_raises_unless_nothing_is_recorded(tmp_path):
    writer = ft.summary.create_file_writer(tmp_path)
    with writer.as_default():
        with pytest.raises(ValueError, match="No step set"):
            ft.summary.scalar("loss", 1.0)
        with ft.summary.record_if(False):
            assert not bool(ft.summary.scalar("loss", 1.0))
    with pytest.raises(ValueError, match="must be a scalar"):
        ft.summary.scalar("v", [1.0, 2.0])  # checked with or without a writer, as in TF
    with pytest.raises(ValueError, match="step must be a scalar integer"):
        with writer.as_default():
            ft.summary.scalar("v", 1.0, step=1.5)


def test_default_steps_nest_and_restore(tmp_path):
    writer_a = ft.summary.create_file_writer(tmp_path / "a")
    writer_b = ft.summary.create_file_writer(tmp_path / "b")
    with writer_a.as_default(step=10):
        ft.summary.scalar("x", 1.0)
        with writer_b.as_default(step=20):
            assert ft.summary.experimental.get_step() == 20
            ft.summary.scalar("x", 2.0)
        ft.summary.scalar("x", 3.0)
    assert ft.summary.experimental.get_step() is None
    assert [(s, v.item()) for s, v, _ in read_events(tmp_path / "a")["x"]] == [(10, 1.0), (10, 3.0)]
    assert [(s, v.item()) for s, v, _ in read_events(tmp_path / "b")["x"]] == [(20, 2.0)]


def test_set_step_with_a_variable_follows_it(tmp_path):
    step = ft.Variable(0, dtype=ft.int64)
    writer = ft.summary.create_file_writer(tmp_path)
    ft.summary.experimental.set_step(step)
    try:
        with writer.as_default():
            for value in (1.0, 2.0, 3.0):
                ft.summary.scalar("loss", value)
                step.assign_add(5)
    finally:
        ft.summary.experimental.set_step(None)
    assert [s for s, _, _ in read_events(tmp_path)["loss"]] == [0, 5, 10]


def test_set_as_default_flush_and_close(tmp_path):
    writer = ft.summary.create_file_writer(tmp_path, max_queue=100, flush_millis=10**7)
    writer.set_as_default(step=3)
    ft.summary.create_noop_writer().set_as_default(step=8)  # changes neither writer nor step
    ft.summary.scalar("x", 1.0)
    # (Whether the event is on disk before the flush depends on tensorboard's writer thread
    # and file layer, so only the state after the flush is asserted.)
    ft.summary.flush()
    assert [s for s, _, _ in read_events(tmp_path)["x"]] == [3]
    writer.close()
    writer.close()  # closing twice is allowed, and so is flushing a closed writer
    writer.flush()
    with pytest.raises(RuntimeError, match="already closed"):
        writer.as_default()
    with pytest.raises(RuntimeError, match="already closed"):
        writer.set_as_default()
    # The closed writer is still the default: writing to it fails, as in TF.
    with pytest.raises(RuntimeError, match="cannot write 'x'.* is closed"):
        ft.summary.scalar("x", 2.0)
    assert [s for s, _, _ in read_events(tmp_path)["x"]] == [3]


def test_a_writer_never_closed_is_flushed_at_exit(tmp_path):
    code = (
        "import sys, ferrotape as ft\n"
        "writer = ft.summary.create_file_writer(sys.argv[1], max_queue=100, flush_millis=10**7)\n"
        "writer.set_as_default(step=4)\n"
        "ft.summary.scalar('x', 1.0)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert [s for s, _, _ in read_events(tmp_path)["x"]] == [4]


def test_leaving_as_default_flushes(tmp_path):
    writer = ft.summary.create_file_writer(tmp_path, max_queue=100, flush_millis=10**7)
    with writer.as_default(step=0):
        ft.summary.scalar("x", 1.0)
    assert "x" in read_events(tmp_path)
    writer.close()


def test_noop_writer_leaves_the_outer_writer_in_place(tmp_path):
    writer = ft.summary.create_file_writer(tmp_path)
    with writer.as_default(step=1):
        with ft.summary.create_noop_writer().as_default(step=9) as noop:
            assert isinstance(noop, ft.summary.SummaryWriter)
            ft.summary.scalar("x", 1.0)
    assert [s for s, _, _ in read_events(tmp_path)["x"]] == [1]


def test_record_if_with_a_callable_is_asked_each_time(tmp_path):
    writer = ft.summary.create_file_writer(tmp_path)
    with writer.as_default():
        for step in range(6):
            with ft.summary.record_if(lambda step=step: step % 3 == 0):
                assert bool(ft.summary.should_record_summaries()) == (step % 3 == 0)
                ft.summary.scalar("x", float(step), step=step)
    assert [s for s, _, _ in read_events(tmp_path)["x"]] == [0, 3]


def test_the_default_writer_is_per_thread(tmp_path):
    writer = ft.summary.create_file_writer(tmp_path)
    seen = []
    with writer.as_default(step=0):
        thread = threading.Thread(target=lambda: seen.append(bool(ft.summary.scalar("x", 1.0))))
        thread.start()
        thread.join()
    assert seen == [False]


def test_histogram_buckets_by_hand():
    np.testing.assert_array_equal(
        histogram_buckets([0.0, 1.0, 1.0, 4.0], 2), [[0, 2, 3], [2, 4, 1]]
    )
    # The maximum goes in the last bucket; 3.0 sits on an edge and goes to the right.
    np.testing.assert_array_equal(histogram_buckets([0.0, 3.0, 6.0], 2), [[0, 3, 1], [3, 6, 2]])
    single = [[2.5, 2.5, 0]] * 2 + [[2.5, 2.5, 4]]
    np.testing.assert_array_equal(histogram_buckets([2.5] * 4, 3), single)
    np.testing.assert_array_equal(histogram_buckets([], 3), np.zeros((3, 3)))
    assert histogram_buckets([1.0, 2.0], 0).shape == (0, 3)
    assert histogram_buckets([1.0, 2.0], -4).shape == (0, 3)
    data = np.random.default_rng(0).normal(size=(50, 7))
    buckets = histogram_buckets(data)
    assert buckets.shape == (30, 3) and buckets[:, 2].sum() == data.size
    assert buckets[0, 0] == data.min() and buckets[-1, 1] == data.max()
    np.testing.assert_allclose(buckets[1:, 0], buckets[:-1, 1])
    expected, _ = np.histogram(data, bins=30)  # NumPy also closes only the last bucket
    np.testing.assert_array_equal(buckets[:, 2], expected)


def test_histograms_read_back(tmp_path):
    writer = ft.summary.create_file_writer(tmp_path)
    data = ft.constant([[0.0, 1.0], [1.0, 4.0]])
    with writer.as_default(step=4):
        ft.summary.histogram("w", data, buckets=2)
        ft.summary.histogram("w", ft.Variable([5.0, 5.0]), step=5, buckets=ft.constant(30))
    (step4, value4, plugin), (step5, value5, _) = read_events(tmp_path)["w"]
    assert plugin == "histograms" and value4.dtype == np.float64
    assert (step4, step5) == (4, 5)
    np.testing.assert_array_equal(value4, [[0, 2, 3], [2, 4, 1]])
    assert value5.shape == (30, 3) and value5[-1].tolist() == [5.0, 5.0, 2.0]
    for bad in (2.5, True, [2]):
        with pytest.raises(TypeError, match="buckets must be an int"):
            ft.summary.histogram("w", [1.0], step=0, buckets=bad)
    # TensorFlow takes buckets as an int32 (a TypeError past it); a count that fits but whose
    # buckets cannot be allocated is ResourceExhaustedError, not numpy's MemoryError.
    for bad in (2**40, 2**62):
        with pytest.raises(TypeError, match="buckets must be an int32"):
            ft.summary.histogram("w", [1.0], step=0, buckets=bad)
    with pytest.raises(ft.errors.ResourceExhaustedError, match="histogram: OOM"):
        histogram_buckets([1.0, 2.0], 2**62)


def test_png_encoder_round_trips_every_channel_count():
    rng = np.random.default_rng(1)
    for channels in (1, 2, 3, 4):
        image = rng.integers(0, 256, size=(5, 7, channels), dtype=np.uint8)
        np.testing.assert_array_equal(decode_png(encode_png(image)), image)
    with pytest.raises(ValueError, match="1 to 4 channels"):
        encode_png(np.zeros((2, 2, 5), np.uint8))
    with pytest.raises(ValueError, match="uint8"):
        encode_png(np.zeros((2, 2, 3), np.float32))


def test_images_read_back_as_png(tmp_path):
    rng = np.random.default_rng(2)
    floats = rng.uniform(-0.2, 1.2, size=(5, 4, 3, 3)).astype(np.float32)
    pixels = rng.integers(0, 256, size=(2, 4, 3, 1), dtype=np.uint8)
    writer = ft.summary.create_file_writer(tmp_path)
    with writer.as_default(step=2):
        ft.summary.image("float", ft.constant(floats))
        ft.summary.image("uint8", pixels, max_outputs=5)
        ft.summary.image("rgba", np.ones((1, 2, 2, 4)), max_outputs=0)
    events = read_events(tmp_path)
    step, value, plugin = events["float"][0]
    assert (step, plugin) == (2, "images")
    assert value[:2].tolist() == [b"3", b"4"] and len(value) == 2 + 3  # max_outputs=3
    expected = np.clip(floats[:3].astype(np.float64) * 255.5, 0, 255).astype(np.uint8)
    for png, want in zip(value[2:], expected, strict=True):
        np.testing.assert_array_equal(decode_png(png), want)
    value = events["uint8"][0][1]
    assert len(value) == 2 + 2
    np.testing.assert_array_equal(decode_png(value[3]), pixels[1])
    assert events["rgba"][0][1].tolist() == [b"2", b"2"]


def test_bad_images_raise_only_when_recorded(tmp_path):
    writer = ft.summary.create_file_writer(tmp_path)
    assert not bool(ft.summary.image("bad", np.zeros((2, 2, 1)), step=0))
    with writer.as_default(step=0):
        with pytest.raises(ValueError, match=r"\[k, height, width, channels\]"):
            ft.summary.image("bad", np.zeros((2, 2, 1)))
        with pytest.raises(ValueError, match="1 to 4 channels"):
            ft.summary.image("bad", np.zeros((1, 2, 2, 5)))
        with pytest.raises(TypeError, match="float .* or uint8"):
            ft.summary.image("bad", np.zeros((1, 2, 2, 1), np.int32))
        with pytest.raises(ValueError, match="max_outputs"):
            ft.summary.image("bad", np.zeros((1, 2, 2, 1)), max_outputs=-1)


def read_wav(data):
    """(channels, sample rate, int16 samples [frames, channels]) of WAV bytes, via ``wave``."""
    with wave.open(io.BytesIO(data)) as clip:
        assert clip.getsampwidth() == 2
        samples = np.frombuffer(clip.readframes(clip.getnframes()), "<i2")
        return clip.getnchannels(), clip.getframerate(), samples.reshape(-1, clip.getnchannels())


def test_wav_encoder_scales_rounds_and_saturates():
    half = 0.5 / 32768  # exactly half a step: rounds away from zero, as TF's roundf
    audio = np.array([[0.5, -0.5], [1.0, -1.0], [1.5, -7.0], [half, -half], [3 * half, 0.0]])
    channels, rate, samples = read_wav(encode_wav(audio.astype(np.float32), 16000))
    assert (channels, rate) == (2, 16000)
    np.testing.assert_array_equal(
        samples, [[16384, -16384], [32767, -32768], [32767, -32768], [1, -1], [2, 0]]
    )
    with pytest.raises(ValueError, match="sample_rate must be a positive int"):
        encode_wav(audio, 0)
    with pytest.raises(ValueError, match=r"\[frames, channels\]"):
        encode_wav(audio[:, 0], 8000)


def test_audio_reads_back_as_wav(tmp_path):
    clips = np.random.default_rng(4).uniform(-1, 1, size=(4, 50, 1)).astype(np.float32)
    writer = ft.summary.create_file_writer(tmp_path)
    with writer.as_default(step=1):
        assert bool(ft.summary.audio("clips", ft.constant(clips), sample_rate=8000))
        ft.summary.audio("none", clips, 8000, max_outputs=0)
        with pytest.raises(ValueError, match=r"\[k, frames, channels\]"):
            ft.summary.audio("bad", clips[0], 8000)
    with pytest.raises(ValueError, match="only 'wav'"):
        ft.summary.audio("bad", clips, 8000, encoding="mp3")
    events = read_events(tmp_path)
    step, value, plugin = events["clips"][0]
    assert (step, plugin, value.shape) == (1, "audio", (3, 2))
    assert value[:, 1].tolist() == [b""] * 3
    for wav, clip in zip(value[:, 0], clips, strict=False):
        channels, rate, samples = read_wav(wav)
        assert (channels, rate) == (1, 8000)
        np.testing.assert_allclose(samples / 32768.0, clip, atol=1 / 32768)
    assert events["none"][0][1].shape == (0, 2)


def test_text_reads_back(tmp_path):
    writer = ft.summary.create_file_writer(tmp_path)
    with writer.as_default(step=1):
        ft.summary.text("note", "**bold** é")
        ft.summary.text("table", [["a", "b"], ["c", "d"]], step=2)
    events = read_events(tmp_path)
    step, value, plugin = events["note"][0]
    assert (step, plugin, value.shape) == (1, "text", ())
    assert value.item() == "**bold** é".encode()
    step, value, _ = events["table"][0]
    assert step == 2 and value.tolist() == [[b"a", b"b"], [b"c", b"d"]]
    with pytest.raises(TypeError, match="must be strings"):
        ft.summary.text("bad", [1, 2])


def test_write_takes_raw_tensors_and_metadata(tmp_path):
    from tensorboard.compat.proto import summary_pb2

    metadata = summary_pb2.SummaryMetadata()
    metadata.plugin_data.plugin_name = "custom"
    writer = ft.summary.create_file_writer(tmp_path, filename_suffix=".mine")
    with writer.as_default(step=0):
        assert bool(ft.summary.write("raw", lambda: np.arange(3), metadata=metadata))
        serialized = metadata.SerializeToString()
        ft.summary.write("raw", ft.constant([7, 8, 9]), step=1, metadata=serialized)
    events = read_events(tmp_path)["raw"]
    assert [(s, v.tolist(), p) for s, v, p in events] == [
        (0, [0, 1, 2], "custom"),
        (1, [7, 8, 9], "custom"),
    ]
    assert next(tmp_path.iterdir()).name.endswith(".mine")


def test_create_file_writer_checks_its_arguments(tmp_path):
    with pytest.raises(ValueError, match="logdir"):
        ft.summary.create_file_writer(None)
    with pytest.raises(ValueError, match="max_queue must be a positive int"):
        ft.summary.create_file_writer(tmp_path, max_queue=0)
    with pytest.raises(ValueError, match="flush_millis must be a positive int"):
        ft.summary.create_file_writer(tmp_path, flush_millis=-5)


def test_summary_scope_yields_the_name():
    with ft.summary.experimental.summary_scope(None, "fallback") as (tag, scope):
        assert (tag, scope) == ("fallback", "fallback")


def test_summaries_inside_a_traced_function_are_written_on_every_call(tmp_path):
    step = ft.Variable(0, dtype=ft.int64)
    writer = ft.summary.create_file_writer(tmp_path)

    @ft.function
    def train_step(x):
        loss = ft.reduce_sum(x * x)
        ft.summary.scalar("loss", loss, step=step)
        ft.summary.histogram("x", x, step=step)
        step.assign_add(1)
        return loss

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # traced, not run eagerly
        with writer.as_default():
            for scale in (1.0, 2.0, 3.0):
                train_step(ft.constant([scale, -scale]))
    writer.flush()
    assert train_step.experimental_get_tracing_count() == 1
    events = read_events(tmp_path)
    assert [(s, v.item()) for s, v, _ in events["loss"]] == [(0, 2.0), (1, 8.0), (2, 18.0)]
    assert [s for s, _, _ in events["x"]] == [0, 1, 2]
