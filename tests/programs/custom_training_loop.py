"""Custom training loop: tf.GradientTape + tf.data on MNIST-like synthetic digits.

The style of the TensorFlow "custom training walkthrough" and "writing a training loop from
scratch" guides: a Sequential MLP, a shuffled and batched `tf.data.Dataset`, an optimizer stepped by
hand, and metrics reset every epoch.
"""

import json

import numpy as np

import ferrotape as tf

rng = np.random.default_rng(0)
tf.random.set_seed(0)

# Ten class prototypes plus noise: a learnable stand-in for 8x8 digit images.
prototypes = rng.normal(size=(10, 8, 8)).astype("float32")
labels = rng.integers(0, 10, size=512).astype("int64")
images = prototypes[labels] + 0.8 * rng.normal(size=(512, 8, 8)).astype("float32")

train_ds = (
    tf.data.Dataset.from_tensor_slices((images[:384], labels[:384])).shuffle(384, seed=1).batch(32)
)
test_ds = tf.data.Dataset.from_tensor_slices((images[384:], labels[384:])).batch(64)

model = tf.keras.Sequential(
    [
        tf.keras.layers.Input(shape=(8, 8)),
        tf.keras.layers.Flatten(),
        tf.keras.layers.Dense(32, activation="relu"),
        tf.keras.layers.Dense(10),
    ]
)
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)

# Identical starting weights in every library, so the losses below are comparable.
init = np.random.default_rng(42)
model.set_weights([init.uniform(-0.2, 0.2, w.shape).astype("float32") for w in model.get_weights()])

# Five full-batch plain SGD steps, no shuffling: deterministic in any library.
sgd = tf.keras.optimizers.SGD(learning_rate=0.1)
full_batch_losses = []
for _ in range(5):
    with tf.GradientTape() as tape:
        loss = loss_fn(labels[:384], model(images[:384], training=True))
    grads = tape.gradient(loss, model.trainable_variables)
    sgd.apply_gradients(zip(grads, model.trainable_variables))
    full_batch_losses.append(float(loss))

optimizer = tf.keras.optimizers.Adam(learning_rate=1e-2)
train_acc = tf.keras.metrics.SparseCategoricalAccuracy()
test_acc = tf.keras.metrics.SparseCategoricalAccuracy()
epoch_loss = tf.keras.metrics.Mean()


def train_step(x, y):
    with tf.GradientTape() as tape:
        logits = model(x, training=True)
        loss = loss_fn(y, logits)
    grads = tape.gradient(loss, model.trainable_weights)
    optimizer.apply_gradients(zip(grads, model.trainable_weights))
    train_acc.update_state(y, logits)
    epoch_loss.update_state(loss)


epoch_losses = []
for epoch in range(4):
    for x_batch, y_batch in train_ds:
        train_step(x_batch, y_batch)
    epoch_losses.append(float(epoch_loss.result()))
    print(f"epoch {epoch}: loss {epoch_losses[-1]:.4f} accuracy {float(train_acc.result()):.3f}")
    for metric in (train_acc, epoch_loss):
        metric.reset_state()

for x_batch, y_batch in test_ds:
    test_acc.update_state(y_batch, model(x_batch, training=False))

results = {
    "check": {"epoch_losses": epoch_losses, "test_accuracy": float(test_acc.result())},
    "compare": {"full_batch_losses": full_batch_losses},
}
print("RESULT", json.dumps(results))
