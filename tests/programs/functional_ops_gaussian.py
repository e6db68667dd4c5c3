"""Heteroscedastic regression whose functional graph is written with tensor arithmetic.

The style of the keras.io examples that compute on symbolic tensors between layers: inputs
standardised by `(inputs - mean) / std` on the `Input` itself, a residual block joined by `+`,
`keras.ops.softplus` for a positive scale, the mean and scale put side by side with
`keras.ops.concatenate`, and a Gaussian negative log-likelihood loss that slices `y_pred`
with `keras.ops`. The model is saved and loaded (the operations travel in the `.keras` file).
"""

import json
import os
import tempfile

import numpy as np

import ferrotape as tf

keras = tf.keras
ops = keras.ops
rng = np.random.default_rng(5)
keras.utils.set_random_seed(5)

# y = sin(3 x0) + x1 with noise that grows with |x0|: the model must learn both.
n = 512
features = np.stack([rng.uniform(-2, 2, n), rng.normal(3.0, 2.0, n)], axis=1).astype("float32")
noise = rng.normal(0, 1, n) * (0.05 + 0.3 * np.abs(features[:, 0]))
target = (np.sin(3 * features[:, 0]) + 0.5 * features[:, 1] + noise).astype("float32")[:, None]
mean, std = features.mean(axis=0), features.std(axis=0)

inputs = keras.Input(shape=(2,), name="features")
x = (inputs - mean) / std
h = keras.layers.Dense(32, activation="tanh", name="embed")(x)
h = h + keras.layers.Dense(32, activation="tanh", name="residual")(h)
loc = keras.layers.Dense(1, name="loc")(h)
scale = ops.softplus(keras.layers.Dense(1, name="raw_scale")(h)) + 1e-3
outputs = ops.concatenate([loc, scale], axis=-1)
model = keras.Model(inputs, outputs, name="gaussian_regressor")


def gaussian_nll(y_true, y_pred):
    loc, scale = y_pred[:, :1], y_pred[:, 1:]
    z = (y_true - loc) / scale
    return ops.mean(0.5 * ops.square(z) + ops.log(scale), axis=-1)


model.compile(optimizer=keras.optimizers.Adam(0.01), loss=gaussian_nll)

# Identical weights in both libraries (layers in Keras's order), then a deterministic look.
init = np.random.default_rng(6)
for layer in model.layers[1:]:
    layer.set_weights(
        [init.uniform(-0.4, 0.4, w.shape).astype("float32") for w in layer.get_weights()]
    )
probe = features[:4]
initial_prediction = model.predict(probe, verbose=0)
initial_loss = model.evaluate(features, target, batch_size=n, verbose=0)

history = model.fit(features, target, epochs=40, batch_size=64, verbose=0)
predicted = model.predict(features, verbose=0)
coverage = float(np.mean(np.abs(target - predicted[:, :1]) < 2 * predicted[:, 1:]))
print(f"final NLL {history.history['loss'][-1]:.3f}, 2-sigma coverage {coverage:.2f}")

with tempfile.TemporaryDirectory() as folder:
    path = os.path.join(folder, "gaussian.keras")
    model.save(path)
    loaded = keras.models.load_model(path, custom_objects={"gaussian_nll": gaussian_nll})
    loaded_same = float(np.max(np.abs(loaded.predict(probe, verbose=0) - predicted[:4])))

steps = [layer["class_name"] for layer in model.get_config()["layers"]]
results = {
    "check": {
        "loss": history.history["loss"],
        "coverage": coverage,
        "min_scale": float(predicted[:, 1].min()),
        "loaded_same": loaded_same,
    },
    "compare": {
        "initial_prediction": initial_prediction.tolist(),
        "initial_loss": float(initial_loss),
        "steps": steps,
        "layer_names": [layer.name for layer in model.layers],
        "output_shape": list(model.output.shape),
    },
}
print("RESULT", json.dumps(results))
