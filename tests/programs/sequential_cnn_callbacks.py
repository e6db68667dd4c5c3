"""A Keras Sequential CNN trained with compile/fit/evaluate and the usual callbacks.

The style of the Keras "simple MNIST convnet" example: Conv2D/MaxPooling2D blocks, Dropout, a
softmax head, `validation_split`, and EarlyStopping, ReduceLROnPlateau and ModelCheckpoint
(weights only) watching the validation loss.
"""

import json
import os
import tempfile

import numpy as np

import ferrotape as tf

rng = np.random.default_rng(1)
tf.keras.utils.set_random_seed(1)

# Class 0: bright top half; class 1: bright bottom half; class 2: bright left half.
n = 300
y = rng.integers(0, 3, size=n)
x = 0.3 * rng.normal(size=(n, 12, 12, 1)).astype("float32")
x[y == 0, :6] += 1.0
x[y == 1, 6:] += 1.0
x[y == 2, :, :6] += 1.0

model = tf.keras.Sequential(
    [
        tf.keras.Input(shape=(12, 12, 1)),
        tf.keras.layers.Conv2D(8, kernel_size=(3, 3), activation="relu"),
        tf.keras.layers.MaxPooling2D(pool_size=(2, 2)),
        tf.keras.layers.Conv2D(8, kernel_size=3, padding="same", activation="relu"),
        tf.keras.layers.Flatten(),
        tf.keras.layers.Dropout(0.25),
        tf.keras.layers.Dense(3, activation="softmax"),
    ]
)
model.compile(
    optimizer=tf.keras.optimizers.Adam(learning_rate=3e-3),
    loss="sparse_categorical_crossentropy",
    metrics=["accuracy"],
)

init = np.random.default_rng(7)
model.set_weights([init.uniform(-0.3, 0.3, w.shape).astype("float32") for w in model.get_weights()])
initial_eval = model.evaluate(x, y, batch_size=64, verbose=0, return_dict=True)

checkpoint_dir = tempfile.mkdtemp()
checkpoint_path = os.path.join(checkpoint_dir, "best.weights.h5")
callbacks = [
    tf.keras.callbacks.EarlyStopping(monitor="val_loss", patience=3, restore_best_weights=True),
    tf.keras.callbacks.ReduceLROnPlateau(monitor="val_loss", factor=0.5, patience=1, min_lr=1e-4),
    tf.keras.callbacks.ModelCheckpoint(
        checkpoint_path, monitor="val_loss", save_best_only=True, save_weights_only=True
    ),
]
history = model.fit(
    x, y, batch_size=32, epochs=8, validation_split=0.2, callbacks=callbacks, verbose=0
)
final_eval = model.evaluate(x, y, batch_size=64, verbose=0, return_dict=True)
print("history keys:", sorted(history.history))
print("final:", final_eval)

restored = tf.keras.models.clone_model(model)
restored.load_weights(checkpoint_path)
probabilities = restored.predict(x[:4], verbose=0)

results = {
    "check": {
        "loss": history.history["loss"],
        "val_loss": history.history["val_loss"],
        "final_accuracy": float(final_eval["accuracy"]),
        "checkpoint_saved": os.path.exists(checkpoint_path),
        "probability_row_sums": np.sum(probabilities, axis=1).tolist(),
    },
    "compare": {
        "initial_loss": float(initial_eval["loss"]),
        "initial_accuracy": float(initial_eval["accuracy"]),
        "history_keys": sorted(history.history),
        "weight_shapes": [list(w.shape) for w in model.get_weights()],
    },
}
print("RESULT", json.dumps(results))
