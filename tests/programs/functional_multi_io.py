"""A functional model with two inputs and two outputs, named losses and loss_weights.

The style of the Keras functional API guide's "ticket classifier": a text-ish feature vector and a
tag vector in, a priority score (regression) and a department (classification) out, compiled with
per-output losses, loss weights and metrics given as dicts keyed by output name.
"""

import json

import numpy as np

import ferrotape as tf

keras = tf.keras
rng = np.random.default_rng(2)
keras.utils.set_random_seed(2)

n = 256
body = rng.normal(size=(n, 16)).astype("float32")
tags = (rng.random(size=(n, 4)) < 0.3).astype("float32")
priority = (body[:, :3].sum(axis=1, keepdims=True) / 3 + tags[:, :1]).astype("float32")
department = (np.argmax(body[:, 3:6], axis=1) + 3 * (tags[:, 1] > 0)) % 4

body_input = keras.Input(shape=(16,), name="body")
tags_input = keras.Input(shape=(4,), name="tags")
features = keras.layers.concatenate(
    [keras.layers.Dense(16, activation="relu")(body_input), tags_input]
)
features = keras.layers.Dense(16, activation="tanh")(features)
priority_out = keras.layers.Dense(1, name="priority")(features)
department_out = keras.layers.Dense(4, activation="softmax", name="department")(features)
model = keras.Model(inputs=[body_input, tags_input], outputs=[priority_out, department_out])

model.compile(
    optimizer=keras.optimizers.RMSprop(1e-2),
    loss={
        "priority": keras.losses.MeanSquaredError(),
        "department": keras.losses.SparseCategoricalCrossentropy(),
    },
    loss_weights={"priority": 1.0, "department": 0.5},
    metrics={"department": ["accuracy"]},
)
init = np.random.default_rng(11)
model.set_weights([init.uniform(-0.3, 0.3, w.shape).astype("float32") for w in model.get_weights()])
inputs = {"body": body, "tags": tags}
targets = {"priority": priority, "department": department}
initial = model.evaluate(inputs, targets, batch_size=n, verbose=0, return_dict=True)
predicted_priority, predicted_department = model.predict(inputs, verbose=0)

history = model.fit(inputs, targets, epochs=6, batch_size=32, verbose=0)
final = model.evaluate(inputs, targets, batch_size=n, verbose=0, return_dict=True)
print("initial:", initial)
print("final:", final)

results = {
    "check": {
        "loss": history.history["loss"],
        "final_department_accuracy": float(final["department_accuracy"]),
        "output_shapes": [list(predicted_priority.shape), list(predicted_department.shape)],
    },
    "compare": {
        "initial_loss": float(initial["loss"]),
        "initial_priority_loss": float(initial["priority_loss"]),
        "initial_department_loss": float(initial["department_loss"]),
        "initial_department_accuracy": float(initial["department_accuracy"]),
        "output_names": list(model.output_names),
        "predicted_priority_head": predicted_priority[:3, 0].tolist(),
    },
}
print("RESULT", json.dumps(results))
