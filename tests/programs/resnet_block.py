"""A small ResNet: residual blocks with BatchNormalization, Add and GlobalAveragePooling2D.

The style of the Keras functional API guide's "toy ResNet" and the ResNet building blocks seen in
many programs: Conv2D -> BatchNormalization -> ReLU twice, a 1x1 projection shortcut when the shape
changes, `layers.add`, then GlobalAveragePooling2D and a classifier, trained with fit.
"""

import json

import numpy as np

import ferrotape as tf

keras = tf.keras
layers = keras.layers
rng = np.random.default_rng(12)
keras.utils.set_random_seed(12)

# Horizontal vs vertical vs diagonal stripes with noise.
n = 240
y = rng.integers(0, 3, n)
grid = np.indices((12, 12))
patterns = np.stack(
    [np.sin(grid[0] * 1.5), np.sin(grid[1] * 1.5), np.sin((grid[0] + grid[1]) * 1.1)]
).astype("float32")
x = (patterns[y] + 0.5 * rng.normal(size=(n, 12, 12))).astype("float32")[..., None]


def residual_block(inputs, filters, stride=1):
    shortcut = inputs
    h = layers.Conv2D(filters, 3, strides=stride, padding="same", use_bias=False)(inputs)
    h = layers.BatchNormalization()(h)
    h = layers.Activation("relu")(h)
    h = layers.Conv2D(filters, 3, padding="same", use_bias=False)(h)
    h = layers.BatchNormalization()(h)
    if stride != 1 or inputs.shape[-1] != filters:
        shortcut = layers.Conv2D(filters, 1, strides=stride, use_bias=False)(inputs)
        shortcut = layers.BatchNormalization()(shortcut)
    return layers.ReLU()(layers.add([h, shortcut]))


inputs = keras.Input(shape=(12, 12, 1))
h = layers.Conv2D(8, 3, padding="same", activation="relu")(inputs)
h = residual_block(h, 8)
h = residual_block(h, 16, stride=2)
h = layers.GlobalAveragePooling2D()(h)
outputs = layers.Dense(3)(h)
model = keras.Model(inputs, outputs, name="toy_resnet")
model.compile(
    optimizer=keras.optimizers.SGD(learning_rate=0.05, momentum=0.9),
    loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    metrics=[keras.metrics.SparseCategoricalAccuracy(name="acc")],
)

init = np.random.default_rng(13)
weights = []
for variable in model.weights:
    shape = tuple(variable.shape)
    if "variance" in variable.name:
        weights.append(init.uniform(0.5, 1.5, shape).astype("float32"))
    else:
        weights.append(init.uniform(-0.3, 0.3, shape).astype("float32"))
model.set_weights(weights)
initial_logits = model.predict(x[:2], verbose=0)
initial_eval = model.evaluate(x, y, batch_size=n, verbose=0, return_dict=True)

history = model.fit(x[:200], y[:200], epochs=6, batch_size=20, verbose=0)
test = model.evaluate(x[200:], y[200:], verbose=0, return_dict=True)
print("loss:", [round(v, 4) for v in history.history["loss"]], "test:", test)

results = {
    "check": {"loss": history.history["loss"], "test_accuracy": float(test["acc"])},
    "compare": {
        "initial_logits": initial_logits.tolist(),
        "initial_loss": float(initial_eval["loss"]),
        "parameter_count": int(model.count_params()),
        "layer_count": len(model.layers),
        "non_trainable_count": len(model.non_trainable_weights),
    },
}
print("RESULT", json.dumps(results))
