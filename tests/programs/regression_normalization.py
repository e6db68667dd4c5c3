"""Regression with a Normalization layer adapted to the data and a learning-rate schedule.

The style of the TensorFlow "Basic regression: predict fuel efficiency" tutorial: a
`layers.Normalization` adapted to the training features, a small Dense network trained with Adam
under an ExponentialDecay schedule on mean absolute error, evaluated on held-out data.
"""

import json

import numpy as np

import ferrotape as tf

rng = np.random.default_rng(11)
tf.keras.utils.set_random_seed(11)

# Features on very different scales, as in the Auto MPG data (cylinders, displacement, weight...).
n = 320
features = np.stack(
    [
        rng.integers(4, 9, n),
        rng.uniform(70, 450, n),
        rng.uniform(1600, 5000, n),
        rng.uniform(8, 25, n),
    ],
    axis=1,
).astype("float32")
target = (45 - 0.006 * features[:, 2] - 0.02 * features[:, 1] + 0.3 * features[:, 3]).astype(
    "float32"
)
target += rng.normal(0, 1.0, n).astype("float32")
train_x, test_x, train_y, test_y = features[:256], features[256:], target[:256], target[256:]

normalizer = tf.keras.layers.Normalization(axis=-1)
normalizer.adapt(train_x)
print("adapted mean:", normalizer.mean.numpy())

schedule = tf.keras.optimizers.schedules.ExponentialDecay(
    initial_learning_rate=0.05, decay_steps=40, decay_rate=0.5, staircase=True
)
model = tf.keras.Sequential(
    [
        tf.keras.Input(shape=(4,)),
        normalizer,
        tf.keras.layers.Dense(32, activation="relu"),
        tf.keras.layers.Dense(32, activation="relu"),
        tf.keras.layers.Dense(1),
    ]
)
model.compile(
    optimizer=tf.keras.optimizers.Adam(learning_rate=schedule), loss="mean_absolute_error"
)

# Identical Dense weights everywhere (the normalizer keeps its adapted statistics).
init = np.random.default_rng(12)
for layer in model.layers[1:]:
    layer.set_weights(
        [init.uniform(-0.3, 0.3, w.shape).astype("float32") for w in layer.get_weights()]
    )
initial_loss = model.evaluate(test_x, test_y, verbose=0)

history = model.fit(train_x, train_y, epochs=30, batch_size=32, validation_split=0.2, verbose=0)
test_loss = model.evaluate(test_x, test_y, verbose=0)
baseline = float(np.mean(np.abs(test_y - np.mean(train_y))))
print(f"test MAE {test_loss:.3f} (predicting the mean: {baseline:.3f})")

results = {
    "check": {
        "loss": history.history["loss"],
        "test_mae": float(test_loss),
        "baseline_mae": baseline,
    },
    "compare": {
        "adapted_mean": normalizer.mean.numpy().ravel().tolist(),
        "adapted_variance": normalizer.variance.numpy().ravel().tolist(),
        "initial_test_mae": float(initial_loss),
        "learning_rate_at_100": float(schedule(100)),
        "normalized_head": normalizer(test_x[:2]).numpy().tolist(),
    },
}
print("RESULT", json.dumps(results))
