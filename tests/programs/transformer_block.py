"""A Transformer encoder block for sequence classification.

The style of the keras.io "Text classification with Transformer" example: a TokenAndPosition
embedding layer, a TransformerBlock layer of MultiHeadAttention, LayerNormalization, a feed-forward
network and Dropout, then GlobalAveragePooling1D and a softmax head, trained with fit.
"""

import json

import numpy as np

import ferrotape as tf

keras = tf.keras
layers = keras.layers
rng = np.random.default_rng(9)
keras.utils.set_random_seed(9)
VOCAB, MAXLEN, EMBED, HEADS, FF = 20, 10, 8, 2, 16


class TransformerBlock(layers.Layer):
    def __init__(self, embed_dim, num_heads, ff_dim, rate=0.1, **kwargs):
        super().__init__(**kwargs)
        self.att = layers.MultiHeadAttention(num_heads=num_heads, key_dim=embed_dim)
        self.ffn = keras.Sequential(
            [layers.Dense(ff_dim, activation="relu"), layers.Dense(embed_dim)]
        )
        self.layernorm1 = layers.LayerNormalization(epsilon=1e-6)
        self.layernorm2 = layers.LayerNormalization(epsilon=1e-6)
        self.dropout1 = layers.Dropout(rate)
        self.dropout2 = layers.Dropout(rate)

    def call(self, inputs, training=False):
        attention = self.att(inputs, inputs)
        out1 = self.layernorm1(inputs + self.dropout1(attention, training=training))
        ffn_output = self.ffn(out1)
        return self.layernorm2(out1 + self.dropout2(ffn_output, training=training))


class TokenAndPositionEmbedding(layers.Layer):
    def __init__(self, maxlen, vocab_size, embed_dim, **kwargs):
        super().__init__(**kwargs)
        self.token_emb = layers.Embedding(input_dim=vocab_size, output_dim=embed_dim)
        self.pos_emb = layers.Embedding(input_dim=maxlen, output_dim=embed_dim)

    def call(self, x):
        positions = tf.range(start=0, limit=tf.shape(x)[-1], delta=1)
        return self.token_emb(x) + self.pos_emb(positions)


# Class = whether token 1 appears before token 2 in the sequence (order matters).
x = rng.integers(3, VOCAB, size=(300, MAXLEN))
for row in x:
    i, j = rng.choice(MAXLEN, size=2, replace=False)
    row[i], row[j] = 1, 2
y = np.array([int(np.argmax(row == 1) < np.argmax(row == 2)) for row in x])

inputs = layers.Input(shape=(MAXLEN,))
embedded = TokenAndPositionEmbedding(MAXLEN, VOCAB, EMBED)(inputs)
encoded = TransformerBlock(EMBED, HEADS, FF)(embedded)
pooled = layers.GlobalAveragePooling1D()(encoded)
pooled = layers.Dropout(0.1)(pooled)
hidden = layers.Dense(16, activation="relu")(pooled)
outputs = layers.Dense(2, activation="softmax")(hidden)
model = keras.Model(inputs=inputs, outputs=outputs)
model.compile(
    optimizer=keras.optimizers.Adam(3e-3),
    loss="sparse_categorical_crossentropy",
    metrics=["accuracy"],
)

init = np.random.default_rng(10)
model.set_weights([init.uniform(-0.3, 0.3, w.shape).astype("float32") for w in model.get_weights()])
initial_probabilities = model.predict(x[:3], verbose=0)
initial_eval = model.evaluate(x, y, batch_size=300, verbose=0, return_dict=True)

history = model.fit(x[:240], y[:240], batch_size=32, epochs=25, verbose=0)
test = model.evaluate(x[240:], y[240:], verbose=0, return_dict=True)
print("loss:", [round(v, 4) for v in history.history["loss"][::5]], "test:", test)

results = {
    "check": {"loss": history.history["loss"], "train_accuracy": history.history["accuracy"][-1]},
    "compare": {
        "initial_probabilities": initial_probabilities.tolist(),
        "initial_loss": float(initial_eval["loss"]),
        "weight_shapes": [list(w.shape) for w in model.get_weights()],
    },
}
print("RESULT", json.dumps(results))
