"""``tf.train.Checkpoint`` restores what was trained, as TensorFlow 2.21 does: after training in
another process, before the variables exist (deferred restoration), from checkpoints TensorFlow
wrote, and with TensorFlow's status checks, manager and warnings."""

import logging
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import tf_model_programs as programs

import ferrotape as ft

HERE = os.path.dirname(os.path.abspath(__file__))
TF_FILES = os.path.join(HERE, "data", "tf_model_checkpoints")
keras = ft.keras


def _run_python(code):
    """Runs ``code`` in a fresh interpreter (as a new process of the user's would)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([HERE, *sys.path]))
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


# ---------------------------------------------------------------- the two scenarios


@pytest.mark.parametrize("kind", sorted(programs.MODELS))
def test_trained_model_restores_in_a_fresh_process(kind, tmp_path):
    model = programs.MODELS[kind](keras)
    optimizer = keras.optimizers.Adam(0.05)
    for _ in range(3):
        programs.train_step(ft, model, optimizer)
    manager = ft.train.CheckpointManager(
        ft.train.Checkpoint(model=model, optimizer=optimizer), str(tmp_path), max_to_keep=2
    )
    manager.save()
    saved = [w.numpy() for w in model.weights]
    programs.train_step(ft, model, optimizer)
    after_next_step = [w.numpy() for w in model.weights]

    out = _run_python(
        f"""
        import numpy as np
        import ferrotape as tf
        import tf_model_programs as programs
        model = programs.MODELS[{kind!r}](tf.keras)
        optimizer = tf.keras.optimizers.Adam(0.05)
        ckpt = tf.train.Checkpoint(model=model, optimizer=optimizer)
        manager = tf.train.CheckpointManager(ckpt, {str(tmp_path)!r}, max_to_keep=2)
        status = ckpt.restore(manager.latest_checkpoint)
        status.assert_existing_objects_matched()
        restored = [w.numpy() for w in model.weights]
        programs.train_step(tf, model, optimizer)
        status.assert_consumed()
        np.savez({str(tmp_path / "out.npz")!r},
                 *restored, *[w.numpy() for w in model.weights],
                 iterations=optimizer.iterations.numpy())
        print("ok")
        """
    )
    assert out.strip() == "ok"
    result = np.load(tmp_path / "out.npz")
    n = len(saved)
    for i in range(n):
        np.testing.assert_array_equal(result[f"arr_{i}"], saved[i])
        np.testing.assert_allclose(result[f"arr_{n + i}"], after_next_step[i], rtol=1e-6)
    assert int(result["iterations"]) == 4


def test_module_restores_before_its_variables_exist(tmp_path):
    # TensorFlow's checkpoint guide: a module that makes its variables on its first call.
    class FlexibleDense(ft.Module):
        def __init__(self, units):
            super().__init__()
            self.units = units
            self.built = False

        def __call__(self, x):
            if not self.built:
                self.w = ft.Variable(ft.random.normal([x.shape[-1], self.units]), name="w")
                self.b = ft.Variable(ft.zeros([self.units]), name="b")
                self.built = True
            return ft.matmul(x, self.w) + self.b

    trained = FlexibleDense(3)
    x = ft.ones([2, 4])
    want = trained(x).numpy()
    path = ft.train.Checkpoint(net=trained).save(str(tmp_path / "flex"))

    fresh = FlexibleDense(3)
    status = ft.train.Checkpoint(net=fresh).restore(path)
    with pytest.raises(AssertionError):
        status.assert_consumed()  # nothing to restore into yet
    np.testing.assert_array_equal(fresh(x).numpy(), want)
    status.assert_consumed()


@pytest.mark.parametrize("kind", ["sequential_no_input", "subclassed"])
def test_keras_model_restores_before_it_is_built(kind, tmp_path):
    def build():
        if kind == "subclassed":

            class Net(keras.Model):
                def __init__(self):
                    super().__init__()
                    self.a = keras.layers.Dense(4, activation="relu")
                    self.b = keras.layers.Dense(1)

                def call(self, x):
                    return self.b(self.a(x))

            return Net()
        return keras.Sequential([keras.layers.Dense(4, activation="relu"), keras.layers.Dense(1)])

    x = np.linspace(0, 1, 6, dtype=np.float32).reshape(2, 3)
    model = build()
    want = model(x).numpy()
    path = ft.train.Checkpoint(model=model).write(str(tmp_path / "m"))
    fresh = build()
    ft.train.Checkpoint(model=fresh).restore(path)
    np.testing.assert_array_equal(fresh(x).numpy(), want)


def test_same_keys_before_and_after_training(tmp_path):
    # A functional model: in a compiled Sequential the optimizer's list of the model's
    # variables is a shorter path than the layers' once the optimizer is built, so TensorFlow
    # (and ferrotape, following it) then saves them under ``model/optimizer/...``.
    model = programs.functional(keras)
    model.compile(optimizer="adam", loss="mse")
    before = ft.train.list_variables(ft.train.Checkpoint(model=model).write(str(tmp_path / "a")))
    model.fit(programs.X, programs.Y, epochs=2, verbose=0)
    model.predict(programs.X, verbose=0)
    after = ft.train.list_variables(ft.train.Checkpoint(model=model).write(str(tmp_path / "b")))
    model_keys = [k for k, _ in before if not k.startswith("model/optimizer")]
    assert model_keys == [k for k, _ in after if not k.startswith("model/optimizer")]
    assert not any("cache" in k for k, _ in after)


# ---------------------------------------------------------------- TensorFlow's own files


@pytest.mark.parametrize("kind", sorted(programs.MODELS))
def test_restores_tensorflow_checkpoint(kind):
    expected = np.load(os.path.join(TF_FILES, "expected.npz"))
    directory = os.path.join(TF_FILES, kind)
    model = programs.MODELS[kind](keras)
    optimizer = keras.optimizers.Adam(0.05)
    ckpt = ft.train.Checkpoint(model=model, optimizer=optimizer)
    status = ckpt.restore(ft.train.latest_checkpoint(directory))
    status.assert_existing_objects_matched().assert_nontrivial_match()
    for i, w in enumerate(model.weights):
        np.testing.assert_array_equal(w.numpy(), expected[f"{kind}/saved/{i}"])
    assert int(optimizer.iterations.numpy()) == 3
    programs.train_step(ft, model, optimizer)  # the slots restore as they are created
    status.assert_consumed()
    for i, w in enumerate(model.weights):
        np.testing.assert_allclose(w.numpy(), expected[f"{kind}/next/{i}"], rtol=2e-5, atol=1e-6)


def test_restores_tensorflow_module_checkpoint():
    expected = np.load(os.path.join(TF_FILES, "expected.npz"))
    module, step, ckpt = programs.module_program(ft)
    ckpt.restore(ft.train.latest_checkpoint(os.path.join(TF_FILES, "module"))).assert_consumed()
    values = (module.w, module.b, module.extra[0], module.extra[1]["scale"], step)
    for i, v in enumerate(values):
        np.testing.assert_array_equal(v.numpy(), expected[f"module/saved/{i}"])
        assert v.numpy().dtype == expected[f"module/saved/{i}"].dtype
    assert int(ckpt.save_counter.numpy()) == 1


def test_tensorflow_checkpoint_reads_with_the_reader():
    prefix = ft.train.latest_checkpoint(os.path.join(TF_FILES, "module"))
    names = dict(ft.train.list_variables(prefix))
    assert names["module/w/.ATTRIBUTES/VARIABLE_VALUE"] == [3, 2]
    assert names["_CHECKPOINTABLE_OBJECT_GRAPH"] == []
    reader = ft.train.load_checkpoint(prefix)
    np.testing.assert_array_equal(reader.get_tensor("step/.ATTRIBUTES/VARIABLE_VALUE"), np.int64(7))
    assert reader.get_variable_to_dtype_map()["module/b/.ATTRIBUTES/VARIABLE_VALUE"] == ft.float32
    with pytest.raises(ft.errors.NotFoundError):
        reader.get_tensor("nope")
    assert ft.train.load_variable(prefix, "module/extra/0").item() == 1.5


# ---------------------------------------------------------------- status and warnings


def test_status_checks(tmp_path):
    v, w = ft.Variable(1.0), ft.Variable([1.0, 2.0])
    path = ft.train.Checkpoint(v=v, w=w).write(str(tmp_path / "c"))
    # (read, not restore: restore makes a save counter, which a written checkpoint lacks, and
    # TensorFlow's checks then fail on it.)
    with pytest.raises(AssertionError, match="save_counter"):
        ft.train.Checkpoint(v=ft.Variable(5.0), w=ft.Variable([0.0, 0.0])).restore(
            path
        ).assert_existing_objects_matched()
    # A program with fewer objects: the checkpoint's extra value is unused.
    status = ft.train.Checkpoint(v=ft.Variable(5.0)).read(path)
    status.assert_existing_objects_matched().assert_nontrivial_match()
    with pytest.raises(AssertionError, match=r"\(root\)\.w"):
        status.assert_consumed()
    # A program with more objects: a variable without a value.
    bigger = ft.train.Checkpoint(v=ft.Variable(5.0), w=ft.Variable([0.0, 0.0]), u=ft.Variable(3))
    status = bigger.read(path)
    with pytest.raises(AssertionError, match="u/"):
        status.assert_existing_objects_matched()
    # Nothing in common.
    with pytest.raises(AssertionError):
        ft.train.Checkpoint(other=ft.Variable(1.0)).read(path).assert_nontrivial_match()
    with pytest.raises(AssertionError):
        ft.train.Checkpoint(v=v).restore(None).assert_consumed()
    with pytest.raises(FileNotFoundError):
        ft.train.Checkpoint(v=v).restore(str(tmp_path / "missing"))


def test_unused_values_warn_when_the_checkpoint_is_deleted(tmp_path, caplog):
    path = ft.train.Checkpoint(v=ft.Variable(1.0), w=ft.Variable(2.0)).write(str(tmp_path / "c"))
    with caplog.at_level(logging.WARNING, logger="ferrotape"):
        partial = ft.train.Checkpoint(v=ft.Variable(0.0))
        partial.restore(path)
        del partial
        assert "could not be found in the restored object: (root).w" in caplog.text
        caplog.clear()
        quiet = ft.train.Checkpoint(v=ft.Variable(0.0))
        quiet.restore(path).expect_partial()
        del quiet
        assert caplog.text == ""


def test_shape_mismatch_is_a_clear_error(tmp_path):
    path = ft.train.Checkpoint(v=ft.Variable([1.0, 2.0])).write(str(tmp_path / "c"))
    with pytest.raises(ValueError, match=r"v/\.ATTRIBUTES/VARIABLE_VALUE has shape \(2,\)"):
        ft.train.Checkpoint(v=ft.Variable([1.0, 2.0, 3.0])).restore(path)


# ---------------------------------------------------------------- the manager


def test_manager_keeps_max_to_keep_and_the_hourly_ones(tmp_path, monkeypatch):
    clock = [1_000_000.0]
    monkeypatch.setattr(ft.train.time, "time", lambda: clock[0])
    ckpt = ft.train.Checkpoint(v=ft.Variable(1.0))
    manager = ft.train.CheckpointManager(
        ckpt, str(tmp_path), max_to_keep=2, keep_checkpoint_every_n_hours=1
    )
    for _ in range(6):
        manager.save()
        clock[0] += 1800.0  # half an hour between saves
    names = sorted(n for n in os.listdir(tmp_path) if n.endswith(".index"))
    # The newest two stay managed; of the older ones, one an hour is kept on disk.
    assert [os.path.basename(p) for p in manager.checkpoints] == ["ckpt-5", "ckpt-6"]
    assert names == ["ckpt-3.index", "ckpt-5.index", "ckpt-6.index"]
    again = ft.train.CheckpointManager(ckpt, str(tmp_path), max_to_keep=2)
    assert again.checkpoints == manager.checkpoints
    assert again.latest_checkpoint == manager.latest_checkpoint


def test_manager_interval_and_restore_or_initialize(tmp_path):
    step = ft.Variable(0, dtype=ft.int64)
    ckpt = ft.train.Checkpoint(step=step)
    calls = []
    manager = ft.train.CheckpointManager(
        ckpt,
        str(tmp_path),
        max_to_keep=None,
        step_counter=step,
        checkpoint_interval=3,
        init_fn=lambda: calls.append(1),
    )
    assert manager.restore_or_initialize() is None and calls == [1]
    saved = []
    for i in range(7):
        step.assign(i)
        saved.append(manager.save() is not None)
    assert saved == [True, False, False, True, False, False, True]
    assert manager.save(check_interval=False) is None  # never twice at one step
    step.assign(100)
    assert manager.restore_or_initialize() == manager.latest_checkpoint
    assert int(step) == 6
    with pytest.raises(ValueError, match="positive integer"):
        ft.train.CheckpointManager(ckpt, str(tmp_path), max_to_keep=0)


def test_manager_never_deletes_outside_its_directory(tmp_path):
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "important.index").write_text("keep me")
    (victim / "important.data-00000-of-00001").write_text("keep me")
    managed = tmp_path / "run" / "ckpts"
    managed.mkdir(parents=True)
    (managed / "checkpoint").write_text(
        'model_checkpoint_path: "../../victim/important"\n'
        'all_model_checkpoint_paths: "../../victim/important"\n'
        f'all_model_checkpoint_paths: "{victim / "important"}"\n'
    )
    manager = ft.train.CheckpointManager(
        ft.train.Checkpoint(v=ft.Variable(1.0)), str(managed), max_to_keep=1
    )
    assert manager.checkpoints == [] and manager.latest_checkpoint is None
    assert ft.train.latest_checkpoint(str(managed)) is None
    for _ in range(3):
        manager.save()
    assert sorted(os.listdir(victim)) == ["important.data-00000-of-00001", "important.index"]
    assert ft.train.latest_checkpoint(str(managed)) == str(managed / "ckpt-3")


# ---------------------------------------------------------------- kinds of trackables


def test_every_trackable_kind_round_trips(tmp_path):
    class Holder(ft.Module):
        def __init__(self):
            super().__init__()
            self.items = [ft.Variable(1.0), {"deep": ft.Variable([2.0, 3.0])}]
            self.pair = (ft.Variable(4, dtype=ft.int64), ft.Variable(np.float64(5.0)))
            self.half = ft.Variable(np.array([1.5], np.float16))

    layer = keras.layers.Dense(2)
    layer(np.ones((1, 3), np.float32))
    opt = keras.optimizers.SGD(0.1, momentum=0.9)
    model = programs.functional(keras)
    programs.train_step(ft, model, opt)
    inner = ft.train.Checkpoint(step=ft.Variable(9))
    objects = {
        "holder": Holder(),
        "layer": layer,
        "model": model,
        "opt": opt,
        "inner": inner,
        "lst": [ft.Variable(1.0)],
        "dct": {"a": ft.Variable(2.0)},
    }
    path = ft.train.Checkpoint(**objects).write(str(tmp_path / "all"))
    want = {k: v.numpy() for k, v in _values(objects).items()}

    fresh_layer = keras.layers.Dense(2)
    fresh_model = programs.functional(keras)
    fresh_opt = keras.optimizers.SGD(0.1, momentum=0.9)
    fresh = {
        "holder": Holder(),
        "layer": fresh_layer,
        "model": fresh_model,
        "opt": fresh_opt,
        "inner": ft.train.Checkpoint(step=ft.Variable(0)),
        "lst": [ft.Variable(0.0)],
        "dct": {"a": ft.Variable(0.0)},
    }
    status = ft.train.Checkpoint(**fresh).read(path)
    fresh_layer(np.ones((1, 3), np.float32))  # deferred: built after the restore
    fresh_opt.build(fresh_model.trainable_variables)  # deferred: slots made after it
    status.assert_consumed()
    got = {k: v.numpy() for k, v in _values(fresh).items()}
    assert sorted(got) == sorted(want)
    for key, value in want.items():
        np.testing.assert_array_equal(got[key], value, err_msg=key)
        assert got[key].dtype == value.dtype


def _values(objects):
    graph = ft.trackable.ObjectGraph(ft.train.Checkpoint(**objects))
    return {key: variable for _, key, variable in graph.variables()}


def test_data_iterator_position_round_trips(tmp_path):
    # TensorFlow's checkpoint guide saves the iterator with the model: a restored run goes on
    # from the next batch, not from the first.
    dataset = ft.data.Dataset.range(10).batch(2)
    iterator = iter(dataset)
    next(iterator), next(iterator)
    path = ft.train.Checkpoint(iterator=iterator).save(str(tmp_path / "it"))
    assert next(iterator).numpy().tolist() == [4, 5]

    fresh = iter(dataset)
    ft.train.Checkpoint(iterator=fresh).restore(path).assert_consumed()
    assert next(fresh).numpy().tolist() == [4, 5]
    assert [b.numpy().tolist() for b in fresh] == [[6, 7], [8, 9]]
    assert ft.train.list_variables(path)[1] == (
        "iterator/_position/.ATTRIBUTES/VARIABLE_VALUE",
        [],
    )


def test_tensorflow_iterator_state_is_left_unused(caplog):
    # A TensorFlow iterator's state is a serialized pipeline (a variant tensor): a restore
    # assigns the rest and leaves it unused, as TensorFlow leaves values it cannot place.
    prefix = os.path.join(TF_FILES, "iterator", "ckpt")
    step = ft.Variable(np.int64(0))
    iterator = iter(ft.data.Dataset.range(10).batch(2))
    status = ft.train.Checkpoint(iterator=iterator, step=step).read(prefix)
    assert int(step) == 3
    with pytest.raises(AssertionError, match=r"\(root\)\.iterator"):
        status.assert_consumed()
    assert next(iterator).numpy().tolist() == [0, 1]


def test_saved_model_says_it_is_not_read(tmp_path):
    with pytest.raises(NotImplementedError, match="SavedModel.*tf.train.Checkpoint"):
        ft.saved_model.load(str(tmp_path))
    with pytest.raises(NotImplementedError, match="SavedModel"):
        ft.saved_model.save(ft.Module(), str(tmp_path))
    assert not ft.saved_model.contains_saved_model(tmp_path)
    (tmp_path / "saved_model.pb").write_bytes(b"")
    assert ft.saved_model.contains_saved_model(tmp_path)


def test_weights_kept_in_no_attribute_are_saved(tmp_path):
    # Keras 3 on TensorFlow leaves such a weight out of checkpoints; ferrotape keeps it, under
    # its own name (made unique beside the attributes).
    class Anonymous(keras.layers.Layer):
        def build(self, input_shape):
            self.w = self.add_weight(shape=(2,), initializer="ones", name="w")
            self.add_weight(shape=(3,), initializer="zeros", name="w")
            self.add_weight(shape=(), initializer="zeros", name="offset")

        def call(self, x):
            return x * self.w

    layer = Anonymous()
    layer(np.ones((1, 2), np.float32))
    for i, weight in enumerate(layer.weights):
        weight.assign(np.full(weight.shape, i + 1.0, np.float32))
    path = ft.train.Checkpoint(layer=layer).write(str(tmp_path / "anon"))
    assert [k for k, _ in ft.train.list_variables(path)][1:] == [
        "layer/offset/.ATTRIBUTES/VARIABLE_VALUE",
        "layer/w/.ATTRIBUTES/VARIABLE_VALUE",
        "layer/w_1/.ATTRIBUTES/VARIABLE_VALUE",
    ]
    fresh = Anonymous()
    status = ft.train.Checkpoint(layer=fresh).read(path)
    fresh(np.ones((1, 2), np.float32))
    status.assert_consumed()
    for want, got in zip(layer.weights, fresh.weights, strict=True):
        np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_a_restore_completed_inside_a_trace_is_not_replayed(tmp_path):
    # The model is built (and its deferred values assigned) while ft.function traces its first
    # call: the assignment must happen once, not on every replay, or fit would reset the
    # weights at every step.
    def build():
        return keras.Sequential([keras.layers.Dense(4, activation="relu"), keras.layers.Dense(1)])

    x = programs.X
    y = programs.Y[:, :1]
    trained = build()
    trained(x[:1])
    path = ft.train.Checkpoint(model=trained).write(str(tmp_path / "c"))

    model = build()
    ft.train.Checkpoint(model=model).restore(path)
    step = ft.function(lambda v: model(v))
    np.testing.assert_array_equal(step(x).numpy(), trained(x).numpy())
    for w in model.weights:
        w.assign(w * 0.0)
    assert float(np.abs(step(x).numpy()).max()) == 0.0

    fitted = build()
    ft.train.Checkpoint(model=fitted).restore(path)
    fitted.compile(optimizer=keras.optimizers.SGD(0.05), loss="mse")
    losses = fitted.fit(x, y, epochs=3, batch_size=8, verbose=0).history["loss"]
    assert losses[-1] < losses[0]
