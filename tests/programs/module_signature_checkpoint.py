"""`tf.Module`s with variables, `tf.function` with an `input_signature`, a checkpoint round trip.

The style of the TensorFlow "Introduction to Variables", "Introduction to modules, layers and
models" and "Better performance with tf.function" guides: a `tf.Module` of `tf.Module`s with
`tf.Variable`s (one not trainable), `trainable_variables`/`variables`/`submodules`, a method
decorated with `tf.function(input_signature=[tf.TensorSpec(...)])` called with batches of
different sizes, `assign`/`assign_add`/`assign_sub`, a training loop, and `tf.train.Checkpoint`
`write`/`read` restoring into a fresh module.
"""

import json
import os
import tempfile

import numpy as np

import ferrotape as tf

rng = np.random.default_rng(81)
tf.random.set_seed(81)


class Dense(tf.Module):
    def __init__(self, in_features, out_features, seed, name=None):
        super().__init__(name=name)
        init = np.random.default_rng(seed)
        self.w = tf.Variable(
            init.normal(size=(in_features, out_features)).astype("float32") * 0.5, name="w"
        )
        self.b = tf.Variable(tf.zeros([out_features]), name="b")

    def __call__(self, x):
        return tf.nn.relu(tf.matmul(x, self.w) + self.b)


class SequentialModule(tf.Module):
    def __init__(self, name=None):
        super().__init__(name=name)
        self.dense_1 = Dense(in_features=3, out_features=8, seed=1)
        self.dense_2 = Dense(in_features=8, out_features=1, seed=2)
        self.calls = tf.Variable(0, trainable=False, name="calls")

    @tf.function(input_signature=[tf.TensorSpec(shape=[None, 3], dtype=tf.float32)])
    def __call__(self, x):
        self.calls.assign_add(1)
        x = self.dense_1(x)
        return self.dense_2(x)


model = SequentialModule(name="the_model")
print("trainable variables:", [v.shape.as_list() for v in model.trainable_variables])
# The signature accepts any batch size; the wrong feature width or dtype is refused.
outputs = [
    model(tf.constant(rng.normal(size=(n, 3)).astype("float32"))).shape.as_list() for n in (1, 5, 7)
]
try:
    model(tf.constant(np.ones((2, 4), "float32")))
    wrong_width = "accepted"
except (ValueError, TypeError):
    wrong_width = "refused"

# Variables: assignment keeps the shape and dtype.
a = tf.Variable([2.0, 3.0])
a.assign([1.0, 2.0])
a.assign_add([2.0, 3.0])
a.assign_sub([7.0, 9.0])
b = tf.Variable(a)  # a copy: changing it leaves `a` alone
b.assign([5.0, 6.0])
step = tf.Variable(1, trainable=False)
try:
    a.assign([1.0, 2.0, 3.0])
    bad_assign = "accepted"
except (ValueError, TypeError):
    bad_assign = "refused"

x = rng.normal(size=(64, 3)).astype("float32")
y = (np.maximum(x @ np.array([[1.0], [-2.0], [0.5]], dtype="float32"), 0) + 0.1).astype("float32")
losses = []
for _ in range(60):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x) - y))
    grads = tape.gradient(loss, model.trainable_variables)
    for variable, grad in zip(model.trainable_variables, grads):
        variable.assign_sub(0.05 * grad)
    step.assign_add(1)
    losses.append(float(loss))

directory = tempfile.mkdtemp()
checkpoint = tf.train.Checkpoint(model=model, step=step)
path = checkpoint.write(os.path.join(directory, "my_checkpoint"))
fresh = SequentialModule(name="restored")
fresh_step = tf.Variable(0, trainable=False)
tf.train.Checkpoint(model=fresh, step=fresh_step).read(path).assert_consumed()
restored_same = bool(np.allclose(fresh(x).numpy(), model(x).numpy()))
print(f"loss {losses[0]:.4f} -> {losses[-1]:.4f}; restored step {int(fresh_step)}")

results = {
    "check": {"losses": losses, "restored_same": restored_same},
    "compare": {
        "trainable_shapes": [v.shape.as_list() for v in model.trainable_variables],
        "variable_count": len(model.variables),
        "submodule_count": len(model.submodules),
        "module_name": model.name,
        "outputs": outputs,
        "wrong_width": wrong_width,
        "a": a.numpy().tolist(),
        "b": b.numpy().tolist(),
        "bad_assign": bad_assign,
        "losses": losses[:3] + losses[-3:],
        "calls": int(model.calls),
        "restored_step": int(fresh_step),
        "restored_calls": int(fresh.calls),
    },
}
print("RESULT", json.dumps(results))
