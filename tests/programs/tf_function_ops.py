"""A low-level model in tf.Module with a tf.function train step written with tf.math and tf.nn.

The style of the TensorFlow "Introduction to modules" and "Basic training loops" guides: variables
created by hand, an MLP as a `tf.Module`, a `@tf.function` step computing softmax cross-entropy,
an L2 penalty and a clipped-by-global-norm SGD update.
"""

import json

import numpy as np

import ferrotape as tf

rng = np.random.default_rng(13)
tf.random.set_seed(13)

x = rng.normal(size=(128, 6)).astype("float32")
classes = (np.argmax(x[:, :3] + 0.5 * x[:, 3:], axis=1)).astype("int64")
labels = tf.one_hot(classes, depth=3)


class Dense(tf.Module):
    def __init__(self, in_features, out_features, init, name=None):
        super().__init__(name=name)
        self.w = tf.Variable(
            init.normal(0, 0.3, (in_features, out_features)).astype("float32"), name="w"
        )
        self.b = tf.Variable(tf.zeros([out_features]), name="b")

    def __call__(self, x):
        return tf.matmul(x, self.w) + self.b


class MLP(tf.Module):
    def __init__(self, init, name=None):
        super().__init__(name=name)
        self.hidden = Dense(6, 16, init, name="hidden")
        self.out = Dense(16, 3, init, name="out")

    def __call__(self, x):
        return self.out(tf.nn.relu(self.hidden(x)))


model = MLP(np.random.default_rng(0), name="mlp")


@tf.function
def train_step(x, labels, learning_rate):
    with tf.GradientTape() as tape:
        logits = model(x)
        cross_entropy = tf.reduce_mean(
            tf.nn.softmax_cross_entropy_with_logits(labels=labels, logits=logits)
        )
        penalty = 1e-3 * tf.add_n(
            [tf.nn.l2_loss(v) for v in model.trainable_variables if "w" in v.name]
        )
        loss = cross_entropy + penalty
    grads = tape.gradient(loss, model.trainable_variables)
    grads, global_norm = tf.clip_by_global_norm(grads, 5.0)
    for variable, grad in zip(model.trainable_variables, grads):
        variable.assign_sub(learning_rate * grad)
    return loss, global_norm


losses, norms = [], []
for _ in range(40):
    loss, norm = train_step(x, labels, tf.constant(0.5))
    losses.append(float(loss))
    norms.append(float(norm))

logits = model(x)
predicted = tf.math.argmax(logits, axis=1)
accuracy = float(tf.reduce_mean(tf.cast(tf.equal(predicted, classes), tf.float32)))
probabilities = tf.nn.softmax(logits)
top2 = tf.math.top_k(probabilities, k=2)
log_likelihood = float(tf.reduce_sum(tf.math.log(tf.reduce_sum(probabilities * labels, axis=1))))
print(f"loss {losses[0]:.4f} -> {losses[-1]:.4f}, accuracy {accuracy:.3f}")

results = {
    "check": {"losses": losses, "accuracy": accuracy},
    "compare": {
        "losses": losses[::8],
        "gradient_norms": norms[::8],
        "accuracy": accuracy,
        "log_likelihood": log_likelihood,
        "top2_indices_head": top2.indices.numpy()[:4].tolist(),
        "variable_names": sorted(v.name for v in model.trainable_variables),
        "variable_count": len(model.variables),
    },
}
print("RESULT", json.dumps(results))
