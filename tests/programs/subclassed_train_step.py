"""A subclassed Model that overrides train_step and test_step, keeping its own metric trackers.

The style of the Keras guide "Customizing what happens in fit()" (TensorFlow backend): the model
computes the loss itself under a tf.GradientTape, steps its optimizer, and reports `Mean` trackers
listed in its `metrics` property so that fit resets them every epoch.
"""

import json

import numpy as np

import ferrotape as tf

keras = tf.keras
rng = np.random.default_rng(3)
keras.utils.set_random_seed(3)

x = rng.normal(size=(200, 5)).astype("float32")
true_w = np.array([[1.5], [-2.0], [0.5], [0.0], [1.0]], dtype="float32")
y = (x @ true_w + 0.3).astype("float32")


class CustomModel(keras.Model):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.hidden = keras.layers.Dense(8, activation="relu")
        self.out = keras.layers.Dense(1)
        self.loss_tracker = keras.metrics.Mean(name="loss")
        self.mae_metric = keras.metrics.MeanAbsoluteError(name="mae")

    def call(self, inputs):
        return self.out(self.hidden(inputs))

    @property
    def metrics(self):
        return [self.loss_tracker, self.mae_metric]

    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = tf.reduce_mean(tf.square(y - y_pred))
        gradients = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(gradients, self.trainable_variables))
        self.loss_tracker.update_state(loss)
        self.mae_metric.update_state(y, y_pred)
        return {"loss": self.loss_tracker.result(), "mae": self.mae_metric.result()}

    def test_step(self, data):
        x, y = data
        y_pred = self(x, training=False)
        self.loss_tracker.update_state(tf.reduce_mean(tf.square(y - y_pred)))
        self.mae_metric.update_state(y, y_pred)
        return {m.name: m.result() for m in self.metrics}


model = CustomModel()
model.compile(optimizer=keras.optimizers.Adam(learning_rate=0.02))
model(x[:1])  # builds the weights
init = np.random.default_rng(5)
model.set_weights([init.uniform(-0.5, 0.5, w.shape).astype("float32") for w in model.get_weights()])
initial = model.evaluate(x, y, batch_size=200, verbose=0, return_dict=True)
history = model.fit(x, y, epochs=15, batch_size=20, verbose=0)
final = model.evaluate(x, y, batch_size=200, verbose=0, return_dict=True)
print("initial:", initial, "final:", final)

results = {
    "check": {"loss": history.history["loss"], "final_mae": float(final["mae"])},
    "compare": {
        "initial_loss": float(initial["loss"]),
        "initial_mae": float(initial["mae"]),
        "history_keys": sorted(history.history),
        "weight_shapes": [list(w.shape) for w in model.get_weights()],
    },
}
print("RESULT", json.dumps(results))
