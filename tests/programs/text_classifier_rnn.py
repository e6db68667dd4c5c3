"""A text classifier: Embedding with mask_zero, a bidirectional LSTM and a GRU, on padded sequences.

The style of the TensorFlow "text classification with an RNN" tutorial: integer token sequences
padded with zeros, an Embedding whose mask tells the recurrent layers to skip the padding, then a
Dense head trained with binary cross-entropy.
"""

import json

import numpy as np

import ferrotape as tf

keras = tf.keras
rng = np.random.default_rng(6)
keras.utils.set_random_seed(6)
VOCAB, MAXLEN = 30, 12

# Positive reviews use more of the tokens 1..9, negative ones more of 10..19; length 4..12.
sequences, labels = [], []
for _ in range(240):
    label = int(rng.integers(0, 2))
    length = int(rng.integers(4, MAXLEN + 1))
    low, high = (1, 10) if label else (10, 20)
    tokens = np.where(
        rng.random(length) < 0.7, rng.integers(low, high, length), rng.integers(20, VOCAB, length)
    )
    sequences.append(tokens)
    labels.append(label)
padded = np.zeros((len(sequences), MAXLEN), dtype="int32")
for i, tokens in enumerate(sequences):
    padded[i, : len(tokens)] = tokens
labels = np.array(labels, dtype="float32")

model = keras.Sequential(
    [
        keras.Input(shape=(MAXLEN,), dtype="int32"),
        keras.layers.Embedding(VOCAB, 8, mask_zero=True),
        keras.layers.Bidirectional(keras.layers.LSTM(8, return_sequences=True)),
        keras.layers.GRU(8),
        keras.layers.Dense(8, activation="relu"),
        keras.layers.Dense(1, activation="sigmoid"),
    ]
)
model.compile(
    optimizer=keras.optimizers.Adam(1e-2),
    loss=keras.losses.BinaryCrossentropy(),
    metrics=["accuracy"],
)
init = np.random.default_rng(8)
model.set_weights([init.uniform(-0.3, 0.3, w.shape).astype("float32") for w in model.get_weights()])

# The mask at work: more trailing padding must not change a prediction.
wider = keras.Sequential(
    [keras.Input(shape=(MAXLEN + 5,), dtype="int32")] + [layer for layer in model.layers]
)
padded_more = np.concatenate([padded[:4], np.zeros((4, 5), dtype="int32")], axis=1)
initial_predictions = model.predict(padded[:4], verbose=0)[:, 0]
wider_predictions = wider.predict(padded_more, verbose=0)[:, 0]
initial_eval = model.evaluate(padded, labels, batch_size=240, verbose=0, return_dict=True)

history = model.fit(padded[:200], labels[:200], epochs=8, batch_size=20, verbose=0)
test = model.evaluate(padded[200:], labels[200:], verbose=0, return_dict=True)
print("loss per epoch:", [round(v, 4) for v in history.history["loss"]], "test:", test)

results = {
    "check": {
        "loss": history.history["loss"],
        "test_accuracy": float(test["accuracy"]),
        "mask_invariance": float(np.max(np.abs(initial_predictions - wider_predictions))),
    },
    "compare": {
        "initial_predictions": initial_predictions.tolist(),
        "initial_loss": float(initial_eval["loss"]),
        "weight_shapes": [list(w.shape) for w in model.get_weights()],
    },
}
print("RESULT", json.dumps(results))
