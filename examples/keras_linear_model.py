"""A subclassed Keras model trained with a GradientTape loop over tf.data, as a tutorial does it.

Fits y = m*x + b (one `Dense(1)` inside a `tf.keras.Model` subclass) to 100 noisy points of
y = 2x - 1 with `MeanSquaredError`, `SGD(learning_rate=0.1)` and a shuffled, batched
`tf.data.Dataset`, then prints the learned slope and intercept. The tutorial's code runs as
written with `import ferrotape as tf`; the only additions are the command-line flags and the
random seed of the weights, so that a test can run it quickly and reproducibly.

    python examples/keras_linear_model.py [--epochs 50]

It prints the mean loss every 10 epochs, then "Learned m (kernel): 2.0xxx" and
"Learned b (bias): -1.0xxx" (the noise-free truth is m = 2, b = -1).
"""

# The tutorial's code is kept as written: super(LinearModel, self), zip() without strict=.
# ruff: noqa: UP008, B905

import argparse

import numpy as np

import ferrotape as tf


# 1. Define a simple model
class LinearModel(tf.keras.Model):
    def __init__(self):
        super(LinearModel, self).__init__()
        # Use a single Dense layer for y = mx + b
        self.dense = tf.keras.layers.Dense(1)

    def call(self, inputs):
        return self.dense(inputs)


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=50, help="EPOCHS (tutorial: 50)")
    parser.add_argument("--seed", type=int, default=0, help="seed of ft.random (weights)")
    args = parser.parse_args(argv)
    if args.epochs < 1:
        parser.error("--epochs must be positive")
    return args


def main(args):
    # Not in the tutorial: reproducible initial weights.
    tf.random.set_seed(args.seed)

    # Instantiate the model
    model = LinearModel()

    # 2. Generate some synthetic data
    np.random.seed(42)
    X_train = np.linspace(-1, 1, 100).astype(np.float32)
    y_train = 2 * X_train - 1 + np.random.randn(*X_train.shape).astype(np.float32) * 0.2
    # Reshape X_train for the model (needs to be [samples, features])
    X_train = X_train.reshape(-1, 1)
    y_train = y_train.reshape(-1, 1)

    # 3. Define loss function and optimizer
    loss_fn = tf.keras.losses.MeanSquaredError()
    optimizer = tf.keras.optimizers.SGD(learning_rate=0.1)  # Stochastic Gradient Descent

    # 4. The Custom Training Loop
    EPOCHS = args.epochs
    BATCH_SIZE = 32

    # Create a tf.data.Dataset for efficient batching
    train_dataset = tf.data.Dataset.from_tensor_slices((X_train, y_train))
    train_dataset = train_dataset.shuffle(buffer_size=1024).batch(BATCH_SIZE)

    print("Starting custom training loop...")
    for epoch in range(EPOCHS):
        total_loss = 0.0
        num_batches = 0
        for x_batch, y_batch in train_dataset:
            with tf.GradientTape() as tape:
                # Forward pass: get model predictions
                predictions = model(x_batch, training=True)
                # Calculate the loss
                loss = loss_fn(y_batch, predictions)
            # Compute gradients
            # tape.watched_variables() by default watches all trainable variables
            gradients = tape.gradient(loss, model.trainable_variables)
            # Apply gradients to update model weights
            optimizer.apply_gradients(zip(gradients, model.trainable_variables))
            total_loss += loss.numpy()
            num_batches += 1
        avg_loss = total_loss / num_batches
        if (epoch + 1) % 10 == 0:
            print(f"Epoch {epoch + 1}/{EPOCHS}, Loss: {avg_loss:.4f}")
    print("Custom training loop finished.")

    # 5. Inspect the trained weights
    # The model has one Dense layer with weights (kernel) and biases
    trained_kernel, trained_bias = model.dense.get_weights()
    print(f"\nLearned m (kernel): {trained_kernel[0][0]:.4f}")
    print(f"Learned b (bias): {trained_bias[0]:.4f}")


if __name__ == "__main__":
    main(parse_args())
