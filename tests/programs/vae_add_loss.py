"""A variational autoencoder: a custom Sampling layer and a KL term added with add_loss.

The style of the Keras VAE examples: an encoder producing z_mean and z_log_var, a `Sampling` layer
drawing z with the reparameterisation trick, and a layer that adds the KL divergence to the
model's losses, so that `fit` minimises reconstruction + KL with a plain compiled loss.
"""

import json

import numpy as np

import ferrotape as tf

keras = tf.keras
rng = np.random.default_rng(5)
keras.utils.set_random_seed(5)
LATENT = 2

# 16-dimensional data living near a 2-dimensional plane.
basis = rng.normal(size=(2, 16)).astype("float32")
data = (rng.normal(size=(256, 2)) @ basis + 0.05 * rng.normal(size=(256, 16))).astype("float32")


class Sampling(keras.layers.Layer):
    """Draws z = mean + exp(log_var / 2) * epsilon."""

    def call(self, inputs):
        z_mean, z_log_var = inputs
        epsilon = tf.random.normal(shape=tf.shape(z_mean))
        return z_mean + tf.exp(0.5 * z_log_var) * epsilon


class KLDivergence(keras.layers.Layer):
    """Adds the KL divergence to N(0, I) to the model's losses and passes z_mean through."""

    def __init__(self, weight=0.1, **kwargs):
        super().__init__(**kwargs)
        self.weight = weight

    def call(self, inputs):
        z_mean, z_log_var = inputs
        kl = -0.5 * tf.reduce_mean(
            tf.reduce_sum(1 + z_log_var - tf.square(z_mean) - tf.exp(z_log_var), axis=1)
        )
        self.add_loss(self.weight * kl)
        return z_mean


inputs = keras.Input(shape=(16,))
hidden = keras.layers.Dense(16, activation="relu")(inputs)
z_mean = keras.layers.Dense(LATENT, name="z_mean")(hidden)
z_log_var = keras.layers.Dense(LATENT, name="z_log_var")(hidden)
z_mean = KLDivergence(weight=0.1)([z_mean, z_log_var])
z = Sampling()([z_mean, z_log_var])
encoder = keras.Model(inputs, [z_mean, z_log_var, z], name="encoder")

latent_inputs = keras.Input(shape=(LATENT,))
decoded = keras.layers.Dense(16, activation="relu")(latent_inputs)
decoded = keras.layers.Dense(16)(decoded)
decoder = keras.Model(latent_inputs, decoded, name="decoder")

outputs = decoder(encoder(inputs)[2])
vae = keras.Model(inputs, outputs, name="vae")
vae.compile(optimizer=keras.optimizers.Adam(5e-3), loss="mse")

init = np.random.default_rng(6)
vae.set_weights([init.uniform(-0.3, 0.3, w.shape).astype("float32") for w in vae.get_weights()])
means, log_vars, _ = encoder.predict(data[:4], verbose=0)
reconstruction_from_mean = decoder.predict(means, verbose=0)

history = vae.fit(data, data, epochs=12, batch_size=32, verbose=0)
print("loss per epoch:", [round(v, 4) for v in history.history["loss"]])

results = {
    "check": {"loss": history.history["loss"], "data_variance": float(np.mean(data**2))},
    "compare": {
        "z_mean_head": means.tolist(),
        "z_log_var_head": log_vars.tolist(),
        "decoded_mean_head": reconstruction_from_mean[:2].tolist(),
        "vae_weight_count": len(vae.weights),
        "encoder_output_shapes": [list(t.shape) for t in encoder.predict(data[:3], verbose=0)],
    },
}
print("RESULT", json.dumps(results))
