"""Image classification from scratch with a data-augmentation stage and separable convolutions.

The style of the keras.io "Image classification from scratch" example: an augmentation
Sequential (RandomFlip, RandomContrast, RandomCrop) used inside the model, Rescaling from
[0, 255], an entry block of Conv2D + BatchNormalization, SeparableConv2D blocks with a residual
1x1 projection, GlobalAveragePooling2D, Dropout and a sigmoid head, trained with `fit` on a
`tf.data` pipeline with a ModelCheckpoint and a CSVLogger callback.
"""

import json
import os
import tempfile

import numpy as np

import ferrotape as tf

keras = tf.keras
layers = tf.keras.layers
rng = np.random.default_rng(31)
keras.utils.set_random_seed(31)

# Synthetic 20x20 RGB "photos": class 1 has a bright vertical bar, class 0 a horizontal one.
n = 192
images = rng.uniform(0, 120, size=(n, 20, 20, 3)).astype("float32")
labels = rng.integers(0, 2, n)
for i, label in enumerate(labels):
    offset = rng.integers(4, 14)
    if label:
        images[i, :, offset : offset + 3, :] += 130
    else:
        images[i, offset : offset + 3, :, :] += 130
labels = labels.astype("float32")

data_augmentation = keras.Sequential(
    [
        layers.RandomFlip("horizontal"),
        layers.RandomContrast(0.2),
        layers.RandomCrop(18, 18),
    ],
    name="data_augmentation",
)


def make_model(input_shape):
    inputs = keras.Input(shape=input_shape)
    x = data_augmentation(inputs)
    x = layers.Rescaling(1.0 / 255)(x)
    x = layers.Conv2D(16, 3, strides=2, padding="same")(x)
    x = layers.BatchNormalization()(x)
    x = layers.Activation("relu")(x)
    previous_block_activation = x
    for size in [16, 32]:
        x = layers.Activation("relu")(x)
        x = layers.SeparableConv2D(size, 3, padding="same")(x)
        x = layers.BatchNormalization()(x)
        x = layers.Activation("relu")(x)
        x = layers.SeparableConv2D(size, 3, padding="same")(x)
        x = layers.BatchNormalization()(x)
        x = layers.MaxPooling2D(3, strides=2, padding="same")(x)
        residual = layers.Conv2D(size, 1, strides=2, padding="same")(previous_block_activation)
        x = layers.add([x, residual])
        previous_block_activation = x
    x = layers.GlobalAveragePooling2D()(x)
    x = layers.Dropout(0.25)(x)
    outputs = layers.Dense(1, activation="sigmoid")(x)
    return keras.Model(inputs, outputs)


model = make_model((20, 20, 3))
init = np.random.default_rng(32)


def initial_value(variable):
    """Glorot-like kernels, BatchNormalization's gamma and variance ones, other vectors zeros."""
    shape = tuple(variable.shape)
    if len(shape) > 1:
        limit = np.sqrt(6.0 / (np.prod(shape[:-1]) + shape[-1]))
        return init.uniform(-limit, limit, shape).astype("float32")
    if "gamma" in variable.name or "variance" in variable.name:
        return np.ones(shape, "float32")
    return np.zeros(shape, "float32")


model.set_weights([initial_value(v) for v in model.weights])
weight_shapes = [list(w.shape) for w in model.get_weights()]

# Inference bypasses the augmentation: identical weights give identical predictions.
initial_predictions = model.predict(images[:4], verbose=0)
augmented = data_augmentation(images[:8], training=True)

model.compile(
    optimizer=keras.optimizers.Adam(3e-3),
    loss="binary_crossentropy",
    metrics=["accuracy"],
)
initial_eval = model.evaluate(images, labels, verbose=0)

train_ds = tf.data.Dataset.from_tensor_slices((images[:160], labels[:160])).shuffle(160).batch(32)
val_ds = tf.data.Dataset.from_tensor_slices((images[160:], labels[160:])).batch(32)
directory = tempfile.mkdtemp()
callbacks = [
    keras.callbacks.ModelCheckpoint(os.path.join(directory, "save_at_{epoch}.keras")),
    keras.callbacks.CSVLogger(os.path.join(directory, "log.csv")),
]
history = model.fit(train_ds, epochs=12, callbacks=callbacks, validation_data=val_ds, verbose=0)
with open(os.path.join(directory, "log.csv")) as f:
    csv_header = f.readline().strip().split(",")
    csv_rows = len(f.readlines())
saved = sorted(name for name in os.listdir(directory) if name.endswith(".keras"))
score = float(model.predict(images[160:161], verbose=0)[0][0])
print(f"loss {history.history['loss'][0]:.3f} -> {history.history['loss'][-1]:.3f}")
print(f"This image is {100 * (1 - score):.2f}% class 0 and {100 * score:.2f}% class 1.")

results = {
    "check": {
        "loss": history.history["loss"],
        "accuracy": history.history["accuracy"],
        "augmented_range": [float(tf.reduce_min(augmented)), float(tf.reduce_max(augmented))],
    },
    "compare": {
        "weight_shapes": weight_shapes,
        "parameter_count": int(model.count_params()),
        "initial_predictions": initial_predictions.ravel().tolist(),
        "initial_eval": [float(v) for v in initial_eval],
        "augmented_shape": list(augmented.shape),
        "csv_header": sorted(csv_header),
        "csv_rows": csv_rows,
        "checkpoints_saved": len(saved),
        "history_keys": sorted(history.history),
    },
}
print("RESULT", json.dumps(results))
