"""Structured data classification with Keras preprocessing layers over a dict of features.

The style of the keras.io "Structured data classification from scratch" example: a `tf.data`
pipeline of feature dicts, numerical features through an adapted `Normalization`, a continuous
one bucketised with `Discretization`, an integer categorical one one-hot encoded with
`CategoryEncoding`, a high-cardinality one hashed with `Hashing`, the encodings joined with
`layers.concatenate` and a binary classifier trained on `binary_crossentropy`.
"""

import json

import numpy as np

import ferrotape as tf

keras = tf.keras
layers = tf.keras.layers
rng = np.random.default_rng(61)
keras.utils.set_random_seed(61)

# A heart-disease-like table: age, cholesterol, thal (category 0..3), patient id (hashed).
n = 300
age = rng.integers(29, 78, n).astype("float32")
chol = rng.normal(240, 45, n).astype("float32")
thal = rng.integers(0, 4, n).astype("int64")
patient = rng.integers(0, 10_000, n).astype("int64")
logit = 0.06 * (age - 55) + 0.02 * (chol - 240) + np.where(thal == 2, 1.5, -0.5)
target = (logit + 0.5 * rng.normal(size=n) > 0).astype("float32")
features = {"age": age, "chol": chol, "thal": thal, "patient": patient}
train = {key: value[:240] for key, value in features.items()}
test = {key: value[240:] for key, value in features.items()}

train_ds = tf.data.Dataset.from_tensor_slices((dict(train), target[:240])).shuffle(240).batch(32)
val_ds = tf.data.Dataset.from_tensor_slices((dict(test), target[240:])).batch(32)


def encode_numerical_feature(feature, name, dataset):
    normalizer = layers.Normalization()
    feature_ds = dataset.map(lambda x, y: x[name]).map(lambda x: tf.expand_dims(x, -1))
    normalizer.adapt(feature_ds)
    return normalizer(feature)


age_input = keras.Input(shape=(1,), name="age")
chol_input = keras.Input(shape=(1,), name="chol")
thal_input = keras.Input(shape=(1,), name="thal", dtype="int64")
patient_input = keras.Input(shape=(1,), name="patient", dtype="int64")
all_inputs = [age_input, chol_input, thal_input, patient_input]

age_encoded = encode_numerical_feature(age_input, "age", train_ds)
chol_encoded = encode_numerical_feature(chol_input, "chol", train_ds)
age_buckets = layers.Discretization(bin_boundaries=[40.0, 50.0, 60.0, 70.0])(age_input)
age_bucket_encoded = layers.CategoryEncoding(num_tokens=5, output_mode="one_hot")(age_buckets)
thal_encoded = layers.CategoryEncoding(num_tokens=4, output_mode="one_hot")(thal_input)
patient_hashed = layers.Hashing(num_bins=8, output_mode="one_hot")(patient_input)
all_features = layers.concatenate(
    [age_encoded, chol_encoded, age_bucket_encoded, thal_encoded, patient_hashed]
)
x = layers.Dense(16, activation="relu")(all_features)
x = layers.Dropout(0.3)(x)
output = layers.Dense(1, activation="sigmoid")(x)
model = keras.Model(all_inputs, output)
# Identical Dense weights (the normalizers keep their adapted statistics).
init = np.random.default_rng(62)
for layer in model.layers:
    if isinstance(layer, layers.Dense):
        layer.set_weights(
            [init.uniform(-0.3, 0.3, w.shape).astype("float32") for w in layer.get_weights()]
        )
model.compile("adam", "binary_crossentropy", metrics=["accuracy"])

encoder = keras.Model(all_inputs, all_features)
encoded_head = encoder.predict({key: value[:3, None] for key, value in test.items()}, verbose=0)
initial_predictions = model.predict({k: v[:, None] for k, v in test.items()}, verbose=0)
initial_loss = float(keras.losses.binary_crossentropy(target[240:], initial_predictions[:, 0]))

history = model.fit(train_ds, epochs=30, validation_data=val_ds, verbose=0)
sample = {"age": 60.0, "chol": 300.0, "thal": 2, "patient": 17}
input_dict = {name: tf.convert_to_tensor([value]) for name, value in sample.items()}
probability = float(model.predict(input_dict, verbose=0)[0][0])
print(f"This patient has a {100 * probability:.1f}% probability of heart disease.")

adapt_normalizer = layers.Normalization(axis=None)
adapt_normalizer.adapt(age[:240])
bucket_values = layers.Discretization(num_bins=4, epsilon=0.01)
bucket_values.adapt(chol[:240])
hashing = layers.Hashing(num_bins=5)
results = {
    "check": {
        "loss": history.history["loss"],
        "val_accuracy": history.history["val_accuracy"][-1],
        "probability": probability,
    },
    "compare": {
        "encoded_width": int(all_features.shape[-1]),
        "encoded_head": encoded_head.tolist(),
        "initial_predictions": initial_predictions.ravel().tolist(),
        "initial_loss": initial_loss,
        "age_mean_variance": [
            float(adapt_normalizer.mean.numpy().ravel()[0]),
            float(adapt_normalizer.variance.numpy().ravel()[0]),
        ],
        "hashed_ids": hashing(np.array([[0], [1], [17], [9999]])).numpy().ravel().tolist(),
        "discretized": bucket_values(np.array([150.0, 230.0, 260.0, 400.0])).numpy().tolist(),
    },
}
print("RESULT", json.dumps(results))
