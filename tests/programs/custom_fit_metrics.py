"""Customising what happens in `fit`: a `train_step` with sample weights and metric trackers.

The style of the TensorFlow/Keras "Customizing what happens in fit()" guide: a functional model
whose class overrides `train_step` and `test_step`, unpacks `(x, y, sample_weight)`, computes its
loss with `compute_loss`, updates compiled metrics (AUC, Precision, Recall, BinaryAccuracy) with
`sample_weight` and a `Mean` loss tracker listed in `metrics`, and returns their results as the
logs; then the same metrics used standalone.
"""

import json

import numpy as np

import ferrotape as tf

keras = tf.keras
rng = np.random.default_rng(41)
keras.utils.set_random_seed(41)


class CustomModel(keras.Model):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.loss_tracker = keras.metrics.Mean(name="loss")

    def train_step(self, data):
        x, y, sample_weight = data
        with tf.GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = self.compute_loss(y=y, y_pred=y_pred, sample_weight=sample_weight)
        trainable_vars = self.trainable_variables
        gradients = tape.gradient(loss, trainable_vars)
        self.optimizer.apply_gradients(zip(gradients, trainable_vars))
        self.loss_tracker.update_state(loss)
        for metric in self.metrics:
            if metric.name != "loss" and metric.name != "compile_metrics":
                metric.update_state(y, y_pred, sample_weight=sample_weight)
        return {m.name: m.result() for m in self.metrics}

    def test_step(self, data):
        x, y = data
        y_pred = self(x, training=False)
        loss = self.compute_loss(y=y, y_pred=y_pred)
        self.loss_tracker.update_state(loss)
        for metric in self.metrics:
            if metric.name != "loss" and metric.name != "compile_metrics":
                metric.update_state(y, y_pred)
        return {m.name: m.result() for m in self.metrics}

    @property
    def metrics(self):
        return [self.loss_tracker, self.auc, self.precision, self.recall, self.binary_accuracy]


# Two noisy features decide the class; positives weigh twice as much.
n = 256
x = rng.normal(size=(n, 4)).astype("float32")
y = ((x[:, 0] - 0.5 * x[:, 1] + 0.3 * rng.normal(size=n)) > 0.3).astype("float32")[:, None]
sample_weight = np.where(y[:, 0] > 0, 2.0, 1.0).astype("float32")

inputs = keras.Input(shape=(4,))
hidden = keras.layers.Dense(16, activation="relu")(inputs)
outputs = keras.layers.Dense(1, activation="sigmoid")(hidden)
model = CustomModel(inputs, outputs)
model.auc = keras.metrics.AUC(name="auc")
model.precision = keras.metrics.Precision(name="precision")
model.recall = keras.metrics.Recall(name="recall")
model.binary_accuracy = keras.metrics.BinaryAccuracy(name="accuracy")
init = np.random.default_rng(42)
model.set_weights([init.uniform(-0.5, 0.5, w.shape).astype("float32") for w in model.get_weights()])
model.compile(optimizer=keras.optimizers.SGD(0.1), loss="binary_crossentropy")

# Full-batch steps are deterministic: the logs agree with TensorFlow's step by step.
history = model.fit(x, y, sample_weight=sample_weight, batch_size=n, epochs=25, verbose=0)
logs = model.evaluate(x, y, batch_size=n, verbose=0, return_dict=True)
print({key: round(float(value), 4) for key, value in logs.items()})

# The same metrics standalone, with thresholds and weights.
probabilities = model.predict(x, verbose=0)
auc = keras.metrics.AUC(num_thresholds=50)
auc.update_state(y, probabilities, sample_weight=sample_weight)
precision = keras.metrics.Precision(thresholds=[0.3, 0.5, 0.7])
precision.update_state(y, probabilities)
recall = keras.metrics.Recall(top_k=1)
recall.update_state(y.T, probabilities.T)
pr_auc = keras.metrics.AUC(curve="PR")
pr_auc.update_state(y, probabilities)
bce = float(keras.losses.binary_crossentropy(y[:, 0], probabilities[:, 0]))
weighted = float(keras.losses.BinaryCrossentropy()(y, probabilities, sample_weight=sample_weight))

results = {
    "check": {"loss": history.history["loss"], "auc": float(logs["auc"])},
    "compare": {
        "history_keys": sorted(history.history),
        "loss": history.history["loss"],
        "auc_history": history.history["auc"],
        "precision_history": history.history["precision"],
        "recall_history": history.history["recall"],
        "evaluate": {key: float(value) for key, value in sorted(logs.items())},
        "standalone_auc": float(auc.result()),
        "precision_at_thresholds": precision.result().numpy().tolist(),
        "recall_top_1": float(recall.result()),
        "pr_auc": float(pr_auc.result()),
        "binary_crossentropy": bce,
        "weighted_bce": weighted,
    },
}
results["compare"]["evaluate"] = [
    results["compare"]["evaluate"][key] for key in sorted(results["compare"]["evaluate"])
]
print("RESULT", json.dumps(results))
