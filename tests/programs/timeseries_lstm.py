"""Timeseries forecasting with windows from `tf.data` and `timeseries_dataset_from_array`.

The style of the keras.io "Timeseries forecasting for weather prediction" example and the
TensorFlow "Time series forecasting" tutorial: features normalised with training statistics,
windows cut with `Dataset.window` + `flat_map` + `batch` and split into inputs and labels with
`map`, the same windows from `keras.utils.timeseries_dataset_from_array`, and an LSTM forecaster
trained with `fit` and an EarlyStopping callback on the validation windows.
"""

import json

import numpy as np

import ferrotape as tf

keras = tf.keras
rng = np.random.default_rng(51)
keras.utils.set_random_seed(51)

# Two years of a daily "temperature" with a yearly cycle and a "pressure" that leads it.
steps = 730
t = np.arange(steps, dtype="float32")
pressure = np.sin(2 * np.pi * t / 365.0 + 0.3) + 0.1 * rng.normal(size=steps)
temperature = np.sin(2 * np.pi * t / 365.0) + 0.5 * np.sin(2 * np.pi * t / 30.0)
temperature = temperature + 0.1 * rng.normal(size=steps)
series = np.stack([temperature, pressure], axis=1).astype("float32")
split = 540
mean, std = series[:split].mean(axis=0), series[:split].std(axis=0)
series = (series - mean) / std

past, future = 24, 1


# The tutorial's window generator: windows of past + future steps, split into inputs and labels.
def make_windows(array):
    ds = tf.data.Dataset.from_tensor_slices(array)
    ds = ds.window(past + future, shift=1, drop_remainder=True)
    ds = ds.flat_map(lambda window: window.batch(past + future))
    return ds.map(lambda w: (w[:past], w[past:, :1]))


windows = make_windows(series[:split])
first_inputs, first_label = next(iter(windows))
window_count = int(windows.reduce(0, lambda count, _: count + 1))

# The same windows from the Keras utility (targets: temperature `past` steps later).
dataset_train = keras.utils.timeseries_dataset_from_array(
    series[: split - future],
    series[past:split, 0],
    sequence_length=past,
    batch_size=64,
)
dataset_val = keras.utils.timeseries_dataset_from_array(
    series[split : steps - future],
    series[split + past :, 0],
    sequence_length=past,
    batch_size=64,
)
batch_inputs, batch_targets = next(iter(dataset_train))
utility_windows = sum(int(b[0].shape[0]) for b in dataset_train)
same_first_window = bool(np.allclose(batch_inputs[0].numpy(), first_inputs.numpy()))
same_first_target = bool(np.isclose(float(batch_targets[0]), float(first_label[0, 0])))

inputs = keras.layers.Input(shape=(past, 2))
lstm_out = keras.layers.LSTM(16)(inputs)
outputs = keras.layers.Dense(1)(lstm_out)
model = keras.Model(inputs=inputs, outputs=outputs)
init = np.random.default_rng(52)
model.set_weights([init.uniform(-0.3, 0.3, w.shape).astype("float32") for w in model.get_weights()])
model.compile(optimizer=keras.optimizers.Adam(learning_rate=0.01), loss="mse")
initial_val_loss = model.evaluate(dataset_val, verbose=0)
initial_predictions = model.predict(batch_inputs[:3], verbose=0)

es_callback = keras.callbacks.EarlyStopping(
    monitor="val_loss", min_delta=0, patience=3, restore_best_weights=True
)
history = model.fit(
    dataset_train, epochs=10, validation_data=dataset_val, callbacks=[es_callback], verbose=0
)
final_val_loss = model.evaluate(dataset_val, verbose=0)
naive = float(np.mean((series[split + past - 1 : steps - 1, 0] - series[split + past :, 0]) ** 2))
print(f"val mse {initial_val_loss:.4f} -> {final_val_loss:.4f} (repeat last value: {naive:.4f})")

results = {
    "check": {
        "loss": history.history["loss"],
        "final_val_loss": float(final_val_loss),
        "naive_val_loss": naive,
        "same_first_window": same_first_window,
        "same_first_target": same_first_target,
    },
    "compare": {
        "window_shapes": [first_inputs.shape.as_list(), first_label.shape.as_list()],
        "window_count": window_count,
        "utility_windows": utility_windows,
        "batch_shapes": [batch_inputs.shape.as_list(), batch_targets.shape.as_list()],
        "first_window_head": first_inputs.numpy()[:3].tolist(),
        "initial_val_loss": float(initial_val_loss),
        "initial_predictions": initial_predictions.ravel().tolist(),
        "weight_shapes": [list(w.shape) for w in model.get_weights()],
        "loss": history.history["loss"],
        "final_val_loss": float(final_val_loss),
    },
}
print("RESULT", json.dumps(results))
