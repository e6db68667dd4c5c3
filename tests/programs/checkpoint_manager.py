"""Training with tf.train.Checkpoint and CheckpointManager: save every few steps, then restore.

The style of the TensorFlow "Training checkpoints" guide: a checkpoint tracking a step counter,
the optimizer and the model, a manager keeping the last three, a resumed run that restores the
latest one into fresh objects and continues exactly where the first run stopped.
"""

import json
import tempfile

import numpy as np

import ferrotape as tf

rng = np.random.default_rng(10)
tf.random.set_seed(10)
x = rng.normal(size=(64, 3)).astype("float32")
y = (x @ np.array([[2.0], [-1.0], [0.5]], dtype="float32") + 1.0).astype("float32")
directory = tempfile.mkdtemp()


class Net(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.l1 = tf.keras.layers.Dense(5)

    def call(self, x):
        return self.l1(x)


def make_objects():
    net = Net()
    net(x[:1])
    init = np.random.default_rng(1)
    net.set_weights([init.uniform(-0.5, 0.5, w.shape).astype("float32") for w in net.get_weights()])
    optimizer = tf.keras.optimizers.Adam(0.1)
    ckpt = tf.train.Checkpoint(step=tf.Variable(1), optimizer=optimizer, net=net)
    manager = tf.train.CheckpointManager(ckpt, directory, max_to_keep=3)
    return net, optimizer, ckpt, manager


def train_step(net, optimizer):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.abs(net(x) - y))
    variables = net.trainable_variables
    optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))
    return float(loss)


def train_and_checkpoint(net, optimizer, ckpt, manager, steps):
    ckpt.restore(manager.latest_checkpoint)
    print("Restored from", manager.latest_checkpoint or "nothing: initializing from scratch")
    losses = []
    for _ in range(steps):
        losses.append(train_step(net, optimizer))
        ckpt.step.assign_add(1)
        if int(ckpt.step) % 5 == 0:
            manager.save()
    return losses


net, optimizer, ckpt, manager = make_objects()
first_run = train_and_checkpoint(net, optimizer, ckpt, manager, 23)
kept = [path.rsplit("/", 1)[-1] for path in manager.checkpoints]

# The counter starts at 1 and a save follows each step that brings it to a multiple of 5: the
# latest checkpoint (counter 20) holds the state after 19 steps. A fresh run restoring it
# repeats steps 20..23 of the first run exactly.
net2, optimizer2, ckpt2, manager2 = make_objects()
status = ckpt2.restore(manager2.latest_checkpoint)
restored_step = int(ckpt2.step)
second_run = [train_step(net2, optimizer2) for _ in range(4)]
names = sorted(name for name, _ in tf.train.list_variables(manager2.latest_checkpoint))

results = {
    "check": {
        "first_run": first_run,
        "second_run": second_run,
        "resumed_matches": float(np.max(np.abs(np.array(second_run) - np.array(first_run[19:])))),
        # The Dense's kernel and bias, under TensorFlow's key for them: the optimizer, given
        # before the net, reaches them first (as its _trainable_variables).
        "model_entries": sum(
            name.startswith(("net/l1/", "optimizer/_trainable_variables/")) for name in names
        ),
        "optimizer_entries": sum(
            name.startswith("optimizer/") and "/_trainable_variables/" not in name for name in names
        ),
    },
    "compare": {
        "kept_checkpoints": kept,
        "latest": tf.train.latest_checkpoint(directory).rsplit("/", 1)[-1],
        "restored_step": restored_step,
        "first_run_head": first_run[:3],
    },
}
print("RESULT", json.dumps(results))
