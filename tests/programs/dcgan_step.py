"""A DCGAN-style generator/discriminator pair trained with two tapes per step.

The style of the TensorFlow DCGAN tutorial: a generator of Dense -> Reshape -> Conv2DTranspose
with BatchNormalization and LeakyReLU, a convolutional discriminator with Dropout, and a
`tf.function` train step computing both losses with BinaryCrossentropy(from_logits=True).
"""

import json

import numpy as np

import ferrotape as tf

layers = tf.keras.layers
rng = np.random.default_rng(4)
tf.random.set_seed(4)
NOISE_DIM = 8

# "Real" 8x8 images: a bright square at a random place.
real = np.zeros((64, 8, 8, 1), dtype="float32") - 1.0
for i, (r, c) in enumerate(rng.integers(0, 5, size=(64, 2))):
    real[i, r : r + 3, c : c + 3] = 1.0


def make_generator():
    return tf.keras.Sequential(
        [
            layers.Input(shape=(NOISE_DIM,)),
            layers.Dense(2 * 2 * 16, use_bias=False),
            layers.BatchNormalization(),
            layers.LeakyReLU(),
            layers.Reshape((2, 2, 16)),
            layers.Conv2DTranspose(8, (3, 3), strides=(2, 2), padding="same", use_bias=False),
            layers.BatchNormalization(),
            layers.LeakyReLU(negative_slope=0.2),
            layers.Conv2DTranspose(1, (3, 3), strides=(2, 2), padding="same", activation="tanh"),
        ]
    )


def make_discriminator():
    return tf.keras.Sequential(
        [
            layers.Input(shape=(8, 8, 1)),
            layers.Conv2D(8, (3, 3), strides=(2, 2), padding="same"),
            layers.LeakyReLU(),
            layers.Dropout(0.3),
            layers.Conv2D(16, (3, 3), strides=(2, 2), padding="same"),
            layers.LeakyReLU(),
            layers.Flatten(),
            layers.Dense(1),
        ]
    )


generator, discriminator = make_generator(), make_discriminator()
cross_entropy = tf.keras.losses.BinaryCrossentropy(from_logits=True)


def discriminator_loss(real_output, fake_output):
    return cross_entropy(tf.ones_like(real_output), real_output) + cross_entropy(
        tf.zeros_like(fake_output), fake_output
    )


def generator_loss(fake_output):
    return cross_entropy(tf.ones_like(fake_output), fake_output)


def numpy_init(model, seed):
    init = np.random.default_rng(seed)
    weights = []
    for variable in model.weights:
        shape = tuple(variable.shape)
        if "variance" in variable.name:
            weights.append(np.ones(shape, dtype="float32"))
        else:
            weights.append(init.uniform(-0.3, 0.3, shape).astype("float32"))
    model.set_weights(weights)


numpy_init(generator, 1)
numpy_init(discriminator, 2)
fixed_noise = np.random.default_rng(9).normal(size=(16, NOISE_DIM)).astype("float32")
# Inference-mode losses from identical weights: comparable across libraries.
fake_eval = generator(fixed_noise, training=False)
initial_gen_loss = float(generator_loss(discriminator(fake_eval, training=False)))
initial_disc_loss = float(
    discriminator_loss(discriminator(real[:16], training=False), discriminator(fake_eval))
)

generator_optimizer = tf.keras.optimizers.Adam(1e-3, beta_1=0.5)
discriminator_optimizer = tf.keras.optimizers.Adam(1e-3, beta_1=0.5)


@tf.function
def train_step(images):
    noise = tf.random.normal([images.shape[0], NOISE_DIM])
    with tf.GradientTape() as gen_tape, tf.GradientTape() as disc_tape:
        generated = generator(noise, training=True)
        real_output = discriminator(images, training=True)
        fake_output = discriminator(generated, training=True)
        gen_loss = generator_loss(fake_output)
        disc_loss = discriminator_loss(real_output, fake_output)
    gen_grads = gen_tape.gradient(gen_loss, generator.trainable_variables)
    disc_grads = disc_tape.gradient(disc_loss, discriminator.trainable_variables)
    generator_optimizer.apply_gradients(zip(gen_grads, generator.trainable_variables))
    discriminator_optimizer.apply_gradients(zip(disc_grads, discriminator.trainable_variables))
    return gen_loss, disc_loss


dataset = tf.data.Dataset.from_tensor_slices(real).shuffle(64, seed=0).batch(16)
losses = []
for epoch in range(3):
    for batch in dataset:
        gen_loss, disc_loss = train_step(batch)
    losses.append([float(gen_loss), float(disc_loss)])
    print(f"epoch {epoch}: generator {losses[-1][0]:.4f} discriminator {losses[-1][1]:.4f}")

samples = generator(fixed_noise, training=False).numpy()
results = {
    "check": {
        "losses": losses,
        "sample_min": float(samples.min()),
        "sample_max": float(samples.max()),
    },
    "compare": {
        "sample_shape": list(samples.shape),
        "initial_generator_loss": initial_gen_loss,
        "initial_discriminator_loss": initial_disc_loss,
        "generator_weight_shapes": [list(w.shape) for w in generator.get_weights()],
        "discriminator_trainable": len(discriminator.trainable_variables),
    },
}
print("RESULT", json.dumps(results))
