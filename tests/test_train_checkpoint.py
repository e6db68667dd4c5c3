"""ft.train: object-based checkpoints with TensorFlow's API (Checkpoint, CheckpointManager,
latest_checkpoint, list_variables), including restoration deferred until Keras builds the model
and the optimizer creates its slots, as in TensorFlow's "Training checkpoints" guide."""

import os

import numpy as np
import pytest

import ferrotape as tf


class Net(tf.keras.Model):
    """The guide's model: one Dense layer."""

    def __init__(self):
        super().__init__()
        self.l1 = tf.keras.layers.Dense(5)

    def call(self, x):
        return self.l1(x)


def toy_dataset():
    inputs = tf.range(10.0)[:, None]
    labels = inputs * 5.0 + tf.range(5.0)[None, :]
    return tf.data.Dataset.from_tensor_slices({"x": inputs, "y": labels}).repeat().batch(2)


def train_step(net, example, optimizer):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.abs(net(example["x"]) - example["y"]))
    grads = tape.gradient(loss, net.trainable_variables)
    optimizer.apply_gradients(zip(grads, net.trainable_variables, strict=True))
    return loss


def train_and_checkpoint(directory, steps):
    """The guide's loop: restore the latest checkpoint if any, train, save every 10 steps."""
    net = Net()
    opt = tf.keras.optimizers.Adam(0.1)
    iterator = iter(toy_dataset())
    ckpt = tf.train.Checkpoint(step=tf.Variable(1), optimizer=opt, net=net)
    manager = tf.train.CheckpointManager(ckpt, directory, max_to_keep=3)
    ckpt.restore(manager.latest_checkpoint)
    losses = []
    for _ in range(steps):
        losses.append(float(train_step(net, next(iterator), opt)))
        ckpt.step.assign_add(1)
        if int(ckpt.step) % 10 == 0:
            manager.save()
    return net, opt, ckpt, manager, losses


def test_the_training_checkpoints_guide_resumes_where_it_stopped(tmp_path):
    directory = str(tmp_path / "tf_ckpts")
    net, opt, ckpt, manager, _ = train_and_checkpoint(directory, 50)
    assert int(ckpt.step) == 51
    assert [os.path.basename(p) for p in manager.checkpoints] == ["ckpt-3", "ckpt-4", "ckpt-5"]
    assert sorted(os.listdir(directory)) == [
        "checkpoint",
        "ckpt-3.data-00000-of-00001",
        "ckpt-3.index",
        "ckpt-4.data-00000-of-00001",
        "ckpt-4.index",
        "ckpt-5.data-00000-of-00001",
        "ckpt-5.index",
    ]
    assert tf.train.latest_checkpoint(directory) == os.path.join(directory, "ckpt-5")

    # A new program: the model and optimizer are created but not built when restore runs;
    # the values are assigned when the first step builds them.
    net2, opt2, ckpt2, manager2, _ = train_and_checkpoint(directory, 0)
    assert int(ckpt2.step) == 50  # saved when the step counter reached 50
    assert manager2.latest_checkpoint == os.path.join(directory, "ckpt-5")
    latest = manager2.latest_checkpoint
    example = next(iter(toy_dataset()))
    net2(example["x"])
    # TensorFlow's key: the optimizer (given before the net) reaches the kernel first.
    saved_kernel = tf.train.load_variable(latest, "optimizer/_trainable_variables/0")
    np.testing.assert_array_equal(net2.l1.kernel.numpy(), saved_kernel)
    assert not np.array_equal(saved_kernel, net.l1.kernel.numpy())  # net took one more step
    opt2.build(net2.trainable_variables)
    assert len(opt2.variables) == len(opt.variables)
    names = ["optimizer/_iterations", "optimizer/_learning_rate"]
    names += [f"optimizer/_variables/{i}" for i in range(2, len(opt2.variables))]
    for name, variable in zip(names, opt2.variables, strict=True):
        saved = tf.train.load_variable(latest, name)
        np.testing.assert_array_equal(variable.numpy(), saved)
    assert int(opt2.iterations) == 49
    # With everything built, every saved value found its variable.
    ckpt2.restore(manager2.latest_checkpoint).assert_consumed()


def test_a_restored_run_continues_the_same_losses(tmp_path):
    directory = str(tmp_path / "run")
    *_, full = train_and_checkpoint(str(tmp_path / "reference"), 40)
    train_and_checkpoint(directory, 20)  # saves at steps 10 and 20
    *_, resumed = train_and_checkpoint(directory, 20)
    # The resumed run restarts the data but starts from the weights (and Adam's moments) of
    # step 19, saved when the counter reached 20; from its very first step it is where the
    # uninterrupted run was after 20 steps on the same batch, and far from a fresh start.
    assert abs(resumed[0] - full[20]) < 0.1 * full[0]
    assert resumed[0] < 0.6 * full[0]


def test_list_variables_load_variable_and_write_without_a_counter(tmp_path):
    v = tf.Variable([[1.0, 2.0]])
    module = tf.Module()
    module.w = tf.Variable(3.0)
    ckpt = tf.train.Checkpoint(v=v, model=module)
    path = ckpt.write(str(tmp_path / "exact"))
    assert path == str(tmp_path / "exact")
    names = dict(tf.train.list_variables(path))
    assert names == {
        "_CHECKPOINTABLE_OBJECT_GRAPH": [],
        "model/w/.ATTRIBUTES/VARIABLE_VALUE": [],
        "v/.ATTRIBUTES/VARIABLE_VALUE": [1, 2],
    }
    np.testing.assert_array_equal(tf.train.load_variable(path, "v"), [[1.0, 2.0]])
    v.assign([[0.0, 0.0]])
    status = ckpt.read(path)
    status.assert_consumed().assert_existing_objects_matched().assert_nontrivial_match()
    np.testing.assert_array_equal(v.numpy(), [[1.0, 2.0]])


def test_restore_errors_and_statuses(tmp_path):
    ckpt = tf.train.Checkpoint(v=tf.Variable(1.0))
    status = ckpt.restore(None)
    with pytest.raises(AssertionError, match="No checkpoint"):
        status.assert_consumed()
    with pytest.raises(FileNotFoundError, match="no checkpoint"):
        ckpt.restore(str(tmp_path / "missing"))
    path = tf.train.Checkpoint(v=tf.Variable([1.0, 2.0])).write(str(tmp_path / "shape"))
    with pytest.raises(ValueError, match="shape"):
        ckpt.restore(path)
    unused = tf.train.Checkpoint(other=tf.Variable(2.0)).write(str(tmp_path / "other"))
    with pytest.raises(AssertionError, match="Unresolved"):
        ckpt.restore(unused).assert_consumed()
    assert tf.train.latest_checkpoint(str(tmp_path / "nowhere")) is None
    with pytest.raises(ValueError, match="max_to_keep"):
        tf.train.CheckpointManager(ckpt, str(tmp_path), max_to_keep=-1)


def test_a_positional_root_is_the_top_of_the_checkpoint(tmp_path):
    # TensorFlow 2.21 lists these paths for Checkpoint(m, extra=v): the root's attributes sit at
    # the top level beside the keyword objects, with no "root/" prefix.
    class Net(tf.Module):
        def __init__(self):
            super().__init__()
            self.w = tf.Variable(1.0)
            self.inner = tf.Module()
            self.inner.b = tf.Variable([2.0, 3.0])

    net = Net()
    path = tf.train.Checkpoint(net, extra=tf.Variable(5.0)).save(str(tmp_path / "c"))
    assert sorted(name for name, _ in tf.train.list_variables(path)) == [
        "_CHECKPOINTABLE_OBJECT_GRAPH",
        "extra/.ATTRIBUTES/VARIABLE_VALUE",
        "inner/b/.ATTRIBUTES/VARIABLE_VALUE",
        "save_counter/.ATTRIBUTES/VARIABLE_VALUE",
        "w/.ATTRIBUTES/VARIABLE_VALUE",
    ]
    other = Net()
    checkpoint = tf.train.Checkpoint(root=other)
    assert checkpoint.root is other
    checkpoint.restore(path).expect_partial()
    assert float(other.w.numpy()) == 1.0
    np.testing.assert_array_equal(other.inner.b.numpy(), [2.0, 3.0])
    # A variable as the root is the root node itself, as in TensorFlow 2.21.
    lone = tf.train.Checkpoint(tf.Variable(4.0)).write(str(tmp_path / "v"))
    assert [n for n, _ in tf.train.list_variables(lone)] == [
        "/.ATTRIBUTES/VARIABLE_VALUE",
        "_CHECKPOINTABLE_OBJECT_GRAPH",
    ]
    other_root = tf.Variable(0.0)
    tf.train.Checkpoint(other_root).read(lone).assert_consumed()
    assert float(other_root.numpy()) == 4.0
