"""``ft.train``'s checkpoint utilities (``get_checkpoint_state``, ``load_checkpoint``,
``checkpoints_iterator``) and ``ExponentialMovingAverage``, with hand-computed values; the
same programs run in TensorFlow when it is installed."""

import os
import tempfile
import threading

import numpy as np
import pytest

import ferrotape as ft


def saved_directory(count=2):
    """A directory with ``count`` checkpoints of ``w`` (``[1 + i, 2]`` in the i-th), and
    their manager."""
    directory = tempfile.mkdtemp()
    w = ft.Variable([1.0, 2.0])
    manager = ft.train.CheckpointManager(ft.train.Checkpoint(w=w), directory, max_to_keep=5)
    for i in range(count):
        w.assign([1.0 + i, 2.0])
        manager.save()
    return directory, manager


def test_get_checkpoint_state_reads_the_state_file():
    directory, _ = saved_directory(3)
    state = ft.train.get_checkpoint_state(directory)
    names = [os.path.relpath(p, directory) for p in state.all_model_checkpoint_paths]
    assert names == ["ckpt-1", "ckpt-2", "ckpt-3"]
    assert state.model_checkpoint_path == os.path.join(directory, "ckpt-3")
    assert len(state.all_model_checkpoint_timestamps) == 3
    assert ft.train.get_checkpoint_state(tempfile.mkdtemp()) is None


def test_load_checkpoint_reads_values_shapes_and_dtypes():
    directory, _ = saved_directory(2)
    reader = ft.train.load_checkpoint(directory)  # the newest: w = [2, 2]
    key = "w/.ATTRIBUTES/VARIABLE_VALUE"
    assert reader.has_tensor(key) and not reader.has_tensor("w")
    np.testing.assert_array_equal(reader.get_tensor(key), [2.0, 2.0])
    assert reader.get_variable_to_shape_map()[key] == [2]
    assert reader.get_variable_to_dtype_map()[key] == ft.float32
    first = ft.train.load_checkpoint(os.path.join(directory, "ckpt-1"))
    np.testing.assert_array_equal(first.get_tensor(key), [1.0, 2.0])
    with pytest.raises(ft.errors.NotFoundError, match="Key nope not found"):
        reader.get_tensor("nope")
    with pytest.raises(ValueError, match="Couldn't find 'checkpoint' file"):
        ft.train.load_checkpoint(tempfile.mkdtemp())


def test_checkpoints_iterator_yields_new_checkpoints_until_the_timeout():
    directory, manager = saved_directory(1)
    assert list(ft.train.checkpoints_iterator(directory, timeout=0.2)) == [
        os.path.join(directory, "ckpt-1")
    ]
    # A checkpoint written while the iterator waits is yielded too.
    timer = threading.Timer(0.3, manager.save)
    timer.start()
    seen = list(ft.train.checkpoints_iterator(directory, timeout=2.5))
    timer.join()
    assert [os.path.basename(p) for p in seen] == ["ckpt-1", "ckpt-2"]
    calls = []
    assert (
        list(ft.train.checkpoints_iterator(tempfile.mkdtemp(), 0, 0.1, lambda: not calls.append(1)))
        == []
    )
    assert calls == [1]


def ema_program(tf):
    w = tf.Variable([1.0, -2.0], name="w")
    b = tf.Variable(3.0, name="dense/b")
    step = tf.Variable(0)
    ema = tf.train.ExponentialMovingAverage(0.99, num_updates=step)
    half = tf.train.ExponentialMovingAverage(0.5, name="Half")
    out = []
    for i in range(4):
        w.assign(w * 1.5 + float(i))
        b.assign_add(1.0)
        step.assign_add(1)
        ema.apply([w])
        half.apply([w, b])
        out.append(np.concatenate([ema.average(w).numpy(), [half.average(b).numpy()]]))
    names = [ema.average_name(w), ema.average(w).name, half.average_name(b), ema.average(b)]
    return np.array(out), names, sorted(half.variables_to_restore([w, b]))


def test_exponential_moving_average_by_hand():
    values, names, restore = ema_program(ft)
    # A shadow starts at its variable's value at the first apply: w = [1.5, -3], b = 4.
    np.testing.assert_allclose(values[0], [1.5, -3.0, 4.0])
    # Then num_updates caps the decay at (1 + n) / (10 + n) = 3/12 at n = 2: the shadow moves
    # 3/4 of the way to w = [3.25, -3.5].
    np.testing.assert_allclose(values[1, :2], [1.5 + 0.75 * 1.75, -3 - 0.75 * 0.5])
    # Half: the shadow of b halves its distance to b (5, 6, 7) at every step.
    np.testing.assert_allclose(values[:, 2], [4.0, 4.5, 5.25, 6.125])
    assert names == [
        "w/ExponentialMovingAverage",
        "w/ExponentialMovingAverage:0",
        "dense/b/Half",
        None,
    ]
    assert restore == ["dense/b/Half", "w/Half"]
    ema = ft.train.ExponentialMovingAverage(0.9)
    with pytest.raises(TypeError, match="non-Variable"):
        ema.apply([ft.constant(1.0)])
    with pytest.raises(TypeError, match="floating point"):
        ema.apply([ft.Variable(1)])


def test_exponential_moving_average_matches_tensorflow():
    tf = pytest.importorskip("tensorflow", reason="TensorFlow is not installed")
    ours, our_names, our_restore = ema_program(ft)
    theirs, their_names, their_restore = ema_program(tf)
    np.testing.assert_allclose(ours, theirs, rtol=1e-6)
    assert our_names == their_names and our_restore == their_restore


def test_checkpoint_options_callbacks_and_accepted_settings():
    seen = []
    options = ft.train.CheckpointOptions(
        enable_async=True,
        experimental_io_device="/job:localhost",
        experimental_write_callbacks=[lambda path: seen.append(path), lambda: seen.append("x")],
    )
    ckpt = ft.train.Checkpoint(v=ft.Variable(2.0))
    directory = tempfile.mkdtemp()
    saved = ckpt.save(os.path.join(directory, "ckpt"), options=options)
    assert seen == [saved, "x"] and ft.train.latest_checkpoint(directory) == saved
    written = ckpt.write(os.path.join(directory, "w"), options)
    manager = ft.train.CheckpointManager(ckpt, directory, max_to_keep=2)
    managed = manager.save(options=options)
    assert seen[2:] == [written, "x", managed, "x"]
    ckpt.v.assign(5.0)
    ckpt.restore(saved, options=options).assert_consumed()
    assert float(ckpt.v) == 2.0
    with pytest.raises(ft.errors.UnimplementedError, match="skip_slot_variables"):
        ft.train.CheckpointOptions(experimental_skip_slot_variables=True)
    with pytest.raises(TypeError, match="CheckpointOptions"):
        ckpt.write(os.path.join(directory, "bad"), options={"enable_async": True})
