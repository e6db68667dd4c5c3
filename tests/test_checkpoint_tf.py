"""Checkpoints cross between ferrotape and TensorFlow 2.21 with Keras 3, both ways, in one
process: the same program trained in each library, written by one, listed and restored by the
other, keys and values compared. Skipped without TensorFlow (``pip install tensorflow-cpu``)."""

import os

import numpy as np
import pytest
import tf_model_programs as programs

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
tf = pytest.importorskip("tensorflow", reason="TensorFlow is not installed")
keras = pytest.importorskip("keras")

import ferrotape as ft  # noqa: E402 - after the skip

LIBRARIES = {"tensorflow": (tf, keras), "ferrotape": (ft, ft.keras)}


def trained(lib, kind):
    tf_like, keras_like = LIBRARIES[lib]
    model = programs.MODELS[kind](keras_like)
    programs.set_weights(model)
    optimizer = keras_like.optimizers.Adam(0.05)
    for _ in range(3):
        programs.train_step(tf_like, model, optimizer)
    return model, optimizer


@pytest.mark.parametrize("kind", sorted(programs.MODELS))
@pytest.mark.parametrize("writer", ["tensorflow", "ferrotape"])
def test_models_cross_both_ways(kind, writer, tmp_path):
    reader = "ferrotape" if writer == "tensorflow" else "tensorflow"
    model, optimizer = trained(writer, kind)
    w_lib, _ = LIBRARIES[writer]
    path = w_lib.train.CheckpointManager(
        w_lib.train.Checkpoint(model=model, optimizer=optimizer), str(tmp_path), max_to_keep=1
    ).save()
    # Keys: the same program trained in the reader's library writes the same ones.
    other_model, other_optimizer = trained(reader, kind)
    r_lib, r_keras = LIBRARIES[reader]
    other_path = r_lib.train.Checkpoint(model=other_model, optimizer=other_optimizer).write(
        str(tmp_path / "other")
    )
    listed = [(k, list(s)) for k, s in tf.train.list_variables(path) if "save_counter" not in k]
    assert listed == [(k, list(s)) for k, s in tf.train.list_variables(other_path)]
    assert ft.train.list_variables(path) == [(k, list(s)) for k, s in tf.train.list_variables(path)]
    # Values: the reader restores into a fresh model, then one more step agrees.
    fresh = programs.MODELS[kind](r_keras)
    fresh_optimizer = r_keras.optimizers.Adam(0.05)
    status = r_lib.train.Checkpoint(model=fresh, optimizer=fresh_optimizer).restore(path)
    for want, got in zip(model.weights, fresh.weights, strict=True):
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    programs.train_step(w_lib, model, optimizer)
    programs.train_step(r_lib, fresh, fresh_optimizer)
    status.assert_consumed()
    for want, got in zip(model.weights, fresh.weights, strict=True):
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=2e-5, atol=1e-6)
    assert int(fresh_optimizer.iterations.numpy()) == 4


@pytest.mark.parametrize("writer", ["tensorflow", "ferrotape"])
def test_modules_cross_both_ways(writer, tmp_path):
    reader = "ferrotape" if writer == "tensorflow" else "tensorflow"
    module, step, ckpt = programs.module_program(LIBRARIES[writer][0])
    step.assign(5)
    module.extra[1]["scale"].assign(-1.0)
    path = ckpt.save(str(tmp_path / "ckpt"))
    fresh, fresh_step, fresh_ckpt = programs.module_program(LIBRARIES[reader][0])
    fresh_ckpt.restore(path).assert_consumed()
    assert int(fresh_step.numpy()) == 5
    assert float(fresh.extra[1]["scale"].numpy()) == -1.0
    assert fresh.extra[1]["scale"].dtype.name == module.extra[1]["scale"].dtype.name == "float64"
    assert ft.train.list_variables(path) == [(k, list(s)) for k, s in tf.train.list_variables(path)]


def test_tensorflow_reads_ferrotape_object_graph(tmp_path):
    model, optimizer = trained("ferrotape", "functional")
    path = ft.train.Checkpoint(model=model, optimizer=optimizer).write(str(tmp_path / "c"))
    mine = ft.train.CheckpointView(path)
    theirs = tf.train.CheckpointView(path)
    assert mine.descendants() == theirs.descendants()
    for node in theirs.descendants():
        assert mine.children(node) == theirs.children(node)


def test_tensorflow_restores_around_a_ferrotape_iterator(tmp_path):
    # ferrotape saves an iterator's position one node below the iterator, so TensorFlow's
    # iterator (whose own state ferrotape cannot write) is skipped, the rest restored.
    iterator = iter(ft.data.Dataset.range(10).batch(2))
    next(iterator)
    path = ft.train.Checkpoint(iterator=iterator, step=ft.Variable(np.int64(3))).write(
        str(tmp_path / "c")
    )
    tf_iterator = iter(tf.data.Dataset.range(10).batch(2))
    step = tf.Variable(np.int64(0))
    status = tf.train.Checkpoint(iterator=tf_iterator, step=step).read(path)
    status.expect_partial()
    assert int(step.numpy()) == 3
    assert next(tf_iterator).numpy().tolist() == [0, 1]
