"""The functional API: shared layers, models as layers, summaries, configs and saving.

The style of the TensorFlow/Keras "The Functional API" guide: an encoder/decoder pair reused as
layers in an autoencoder, a shared Embedding + LSTM applied to two inputs (a siamese text
model), a model with a mixed `Input(name=...)` / outputs structure, `Model.summary()` text read
through `print_fn`, `get_config`/`Model.from_config` rebuilding an equal model, and
`model.save("....keras")` + `keras.models.load_model` giving the same predictions.
"""

import json
import os
import tempfile

import numpy as np

import ferrotape as tf

keras = tf.keras
layers = tf.keras.layers
rng = np.random.default_rng(91)
keras.utils.set_random_seed(91)
init = np.random.default_rng(92)


def identical_weights(model):
    model.set_weights(
        [init.uniform(-0.3, 0.3, w.shape).astype("float32") for w in model.get_weights()]
    )


# An encoder and a decoder, each a model, used as layers of an autoencoder.
encoder_input = keras.Input(shape=(8, 8, 1), name="img")
x = layers.Conv2D(4, 3, activation="relu")(encoder_input)
x = layers.MaxPooling2D(2)(x)
encoder_output = layers.GlobalMaxPooling2D()(x)
encoder = keras.Model(encoder_input, encoder_output, name="encoder")
decoder_input = keras.Input(shape=(4,), name="encoded_img")
x = layers.Reshape((2, 2, 1))(decoder_input)
x = layers.Conv2DTranspose(4, 3, strides=2, padding="same", activation="relu")(x)
decoder_output = layers.Conv2DTranspose(1, 3, strides=2, padding="same")(x)
decoder = keras.Model(decoder_input, decoder_output, name="decoder")
autoencoder_input = keras.Input(shape=(8, 8, 1), name="img")
autoencoder = keras.Model(
    autoencoder_input, decoder(encoder(autoencoder_input)), name="autoencoder"
)
identical_weights(autoencoder)
images = rng.uniform(size=(16, 8, 8, 1)).astype("float32")

# A shared embedding and LSTM read two texts (a siamese model).
shared_embedding = layers.Embedding(50, 6)
shared_lstm = layers.LSTM(5)
text_a = keras.Input(shape=(7,), dtype="int32", name="text_a")
text_b = keras.Input(shape=(7,), dtype="int32", name="text_b")
encoded_a = shared_lstm(shared_embedding(text_a))
encoded_b = shared_lstm(shared_embedding(text_b))
merged = layers.concatenate([encoded_a, encoded_b, layers.subtract([encoded_a, encoded_b])])
similar = layers.Dense(1, activation="sigmoid", name="similar")(merged)
siamese = keras.Model(inputs=[text_a, text_b], outputs=similar, name="siamese")
identical_weights(siamese)
tokens_a = rng.integers(0, 50, (32, 7)).astype("int32")
tokens_b = np.where(rng.uniform(size=(32, 7)) < 0.5, tokens_a, rng.integers(0, 50, (32, 7)))
tokens_b = tokens_b.astype("int32")
same = (tokens_a == tokens_b).mean(axis=1, keepdims=True).astype("float32")

summary_lines = []
siamese.summary(print_fn=lambda line, *args, **kwargs: summary_lines.append(line))
summary = "\n".join(summary_lines)
summary_facts = {
    "names_model": "siamese" in summary,
    "lists_lstm": "LSTM" in summary,
    "total_params": f"{siamese.count_params():,}" in summary,
}

siamese.compile(optimizer=keras.optimizers.Adam(0.01), loss="binary_crossentropy")
before = siamese.predict([tokens_a, tokens_b], verbose=0)
history = siamese.fit([tokens_a, tokens_b], same, epochs=15, batch_size=32, verbose=0)
trained = siamese.predict([tokens_a, tokens_b], verbose=0)

config = siamese.get_config()
config_facts = {
    "config_layer_count": len(config["layers"]),
    "config_input_layers": config["input_layers"],
    "config_output_layers": config["output_layers"],
    "lstm_inbound_nodes": len(
        [layer for layer in config["layers"] if layer["class_name"] == "LSTM"][0]["inbound_nodes"]
    ),
}
rebuilt = keras.Model.from_config(config)
rebuilt.set_weights(siamese.get_weights())
rebuilt_same = float(np.max(np.abs(rebuilt.predict([tokens_a, tokens_b], verbose=0) - trained)))

directory = tempfile.mkdtemp()
path = os.path.join(directory, "siamese.keras")
siamese.save(path)
loaded = keras.models.load_model(path)
loaded_same = float(np.max(np.abs(loaded.predict([tokens_a, tokens_b], verbose=0) - trained)))
auto_path = os.path.join(directory, "autoencoder.keras")
autoencoder.save(auto_path)
auto_loaded = keras.models.load_model(auto_path)
auto_same = float(
    np.max(np.abs(auto_loaded.predict(images, verbose=0) - autoencoder.predict(images, verbose=0)))
)
print(f"loss {history.history['loss'][0]:.4f} -> {history.history['loss'][-1]:.4f}")

results = {
    "check": {
        "loss": history.history["loss"],
        "rebuilt_same": rebuilt_same,
        "loaded_same": loaded_same,
        "autoencoder_loaded_same": auto_same,
        "summary": summary_facts,
    },
    "compare": {
        "autoencoder_layers": [layer.name for layer in autoencoder.layers],
        "autoencoder_output": autoencoder.predict(images[:2], verbose=0).ravel().tolist(),
        "encoder_params": int(encoder.count_params()),
        "decoder_params": int(decoder.count_params()),
        "siamese_layers": [type(layer).__name__ for layer in siamese.layers],
        "siamese_params": int(siamese.count_params()),
        "siamese_weight_shapes": [list(w.shape) for w in siamese.get_weights()],
        "input_names": [t.name for t in siamese.inputs],
        "before": before.ravel().tolist(),
        **config_facts,
    },
}
print("RESULT", json.dumps(results))
