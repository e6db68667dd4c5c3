"""A Wasserstein GAN with gradient penalty on 2-D points, with its own `train_step`.

The style of the keras.io "WGAN-GP" example: a `keras.Model` subclass holding a critic and a
generator, `compile` taking two optimizers and two loss functions, a `train_step` that takes
several critic steps per generator step, the gradient penalty computed with a tape inside the
critic's tape on random interpolates (`tf.random.uniform`, `tf.norm`), and `fit` on a dataset.
"""

import json

import numpy as np

import ferrotape as tf

keras = tf.keras
layers = tf.keras.layers
rng = np.random.default_rng(71)
keras.utils.set_random_seed(71)

latent_dim = 4
# Real data: a Gaussian blob centred at (2, -1).
center = np.array([2.0, -1.0], dtype="float32")
real = (center + 0.5 * rng.normal(size=(512, 2))).astype("float32")

critic = keras.Sequential(
    [
        keras.Input(shape=(2,)),
        layers.Dense(32),
        layers.LeakyReLU(0.2),
        layers.Dense(32),
        layers.LeakyReLU(0.2),
        layers.Dense(1),
    ],
    name="critic",
)
generator = keras.Sequential(
    [
        keras.Input(shape=(latent_dim,)),
        layers.Dense(32, activation="relu"),
        layers.Dense(32, activation="relu"),
        layers.Dense(2),
    ],
    name="generator",
)
init = np.random.default_rng(72)
for net in (critic, generator):
    net.set_weights([init.uniform(-0.4, 0.4, w.shape).astype("float32") for w in net.get_weights()])


class WGAN(keras.Model):
    def __init__(
        self, discriminator, generator, latent_dim, discriminator_extra_steps=3, gp_weight=10.0
    ):
        super().__init__()
        self.discriminator = discriminator
        self.generator = generator
        self.latent_dim = latent_dim
        self.d_steps = discriminator_extra_steps
        self.gp_weight = gp_weight

    def compile(self, d_optimizer, g_optimizer, d_loss_fn, g_loss_fn):
        super().compile()
        self.d_optimizer = d_optimizer
        self.g_optimizer = g_optimizer
        self.d_loss_fn = d_loss_fn
        self.g_loss_fn = g_loss_fn

    def gradient_penalty(self, batch_size, real_images, fake_images):
        alpha = tf.random.uniform([batch_size, 1], 0.0, 1.0)
        diff = fake_images - real_images
        interpolated = real_images + alpha * diff
        with tf.GradientTape() as gp_tape:
            gp_tape.watch(interpolated)
            pred = self.discriminator(interpolated, training=True)
        grads = gp_tape.gradient(pred, [interpolated])[0]
        norm = tf.sqrt(tf.reduce_sum(tf.square(grads), axis=[1]))
        return tf.reduce_mean((norm - 1.0) ** 2)

    def train_step(self, real_images):
        if isinstance(real_images, tuple):
            real_images = real_images[0]
        batch_size = tf.shape(real_images)[0]
        for _ in range(self.d_steps):
            random_latent_vectors = tf.random.normal(shape=(batch_size, self.latent_dim))
            with tf.GradientTape() as tape:
                fake_images = self.generator(random_latent_vectors, training=True)
                fake_logits = self.discriminator(fake_images, training=True)
                real_logits = self.discriminator(real_images, training=True)
                d_cost = self.d_loss_fn(real_img=real_logits, fake_img=fake_logits)
                gp = self.gradient_penalty(batch_size, real_images, fake_images)
                d_loss = d_cost + gp * self.gp_weight
            d_gradient = tape.gradient(d_loss, self.discriminator.trainable_variables)
            self.d_optimizer.apply_gradients(
                zip(d_gradient, self.discriminator.trainable_variables)
            )
        random_latent_vectors = tf.random.normal(shape=(batch_size, self.latent_dim))
        with tf.GradientTape() as tape:
            generated_images = self.generator(random_latent_vectors, training=True)
            gen_img_logits = self.discriminator(generated_images, training=True)
            g_loss = self.g_loss_fn(gen_img_logits)
        gen_gradient = tape.gradient(g_loss, self.generator.trainable_variables)
        self.g_optimizer.apply_gradients(zip(gen_gradient, self.generator.trainable_variables))
        return {"d_loss": d_loss, "g_loss": g_loss}


def discriminator_loss(real_img, fake_img):
    return tf.reduce_mean(fake_img) - tf.reduce_mean(real_img)


def generator_loss(fake_img):
    return -tf.reduce_mean(fake_img)


# The penalty on fixed interpolates: no random numbers, so it agrees with TensorFlow.
fixed_noise = init.normal(size=(8, latent_dim)).astype("float32")
fixed_fake = generator(fixed_noise)
fixed_alpha = tf.constant(init.uniform(size=(8, 1)).astype("float32"))
interpolated = real[:8] + fixed_alpha * (fixed_fake - real[:8])
with tf.GradientTape() as outer:
    with tf.GradientTape() as inner:
        inner.watch(interpolated)
        score = critic(interpolated)
    grads = inner.gradient(score, interpolated)
    penalty = tf.reduce_mean((tf.norm(grads, axis=1) - 1.0) ** 2)
penalty_grads = outer.gradient(penalty, critic.trainable_variables)
penalty_grad_norm = float(tf.linalg.global_norm(penalty_grads))
critic_on_real = critic(real[:4]).numpy().ravel().tolist()

wgan = WGAN(critic, generator, latent_dim, discriminator_extra_steps=3)
wgan.compile(
    d_optimizer=keras.optimizers.Adam(learning_rate=1e-3, beta_1=0.5, beta_2=0.9),
    g_optimizer=keras.optimizers.Adam(learning_rate=1e-3, beta_1=0.5, beta_2=0.9),
    g_loss_fn=generator_loss,
    d_loss_fn=discriminator_loss,
)
history = wgan.fit(tf.data.Dataset.from_tensor_slices(real).batch(64), epochs=60, verbose=0)
samples = generator(tf.random.normal((256, latent_dim))).numpy()
first_error = float(np.linalg.norm(fixed_fake.numpy().mean(axis=0) - center))
error = float(np.linalg.norm(samples.mean(axis=0) - center))
print(f"distance of the samples' mean from the real centre: {first_error:.2f} -> {error:.2f}")

results = {
    "check": {
        "d_loss": history.history["d_loss"],
        "first_center_error": first_error,
        "center_error": error,
        "sample_std": samples.std(axis=0).tolist(),
    },
    "compare": {
        "penalty": float(penalty),
        "penalty_grad_norm": penalty_grad_norm,
        "critic_on_real": critic_on_real,
        "history_keys": sorted(history.history),
    },
}
print("RESULT", json.dumps(results))
