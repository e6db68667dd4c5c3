"""Checks the GPU backend: the GPUs listed, ops placed there, and the tutorial CNN trained on it.

Needs ferrotape built with the ``gpu`` feature (``maturin build --release --features gpu``) and
a GPU wgpu can use (Vulkan, Metal or DX12). A software adapter (Mesa's lavapipe, which the tests
use on machines without a GPU) is listed only with ``FERROTAPE_GPU_ALLOW_SOFTWARE=1``.

    python examples/gpu_check.py
    FERROTAPE_GPU_ALLOW_SOFTWARE=1 python examples/gpu_check.py --batch-size 8

It prints the GPUs ``tf.config.list_physical_devices('GPU')`` lists and the ``.device`` of a
few ops run under ``tf.device('/GPU:0')``, then builds the tutorial's CNN (``keras_cnn.py``)
twice from the same weights and takes three Adam steps on the same batches with each, one on
the CPU and one on the GPU. For each step it prints both losses and how many arrays went
between the host and the device (reading the loss is one download), and at the end the
largest difference between the two models' weights. It exits with status 1 when there is no
GPU or when the two runs differ by more than float32 rounding allows.
"""

import argparse
import os
import sys

import numpy as np
from keras_cnn import build_model

import ferrotape as tf

# The CPU run convolves by direct sums, as the GPU does, not by the CPU's default for these
# layers, Winograd's F(4x4): its float32 rounding is about ten times coarser, and Adam's first
# steps (which move each weight by about the learning rate whatever its gradient's size) carry
# that into the losses beyond what this check allows, on a correct GPU. The setting is read at
# the first convolution, which comes later.
os.environ.setdefault("FERROTAPE_CONV_ALGORITHM", "direct")
from ferrotape.keras.losses import categorical_crossentropy
from ferrotape.keras.optimizers import Adam

LEARNING_RATE = 1e-3
STEPS = 3


def train(device, weights, batches, seed):
    """Three Adam steps of the CNN on ``device`` from ``weights``; returns the losses, the
    final weights and the host/device copies each step made."""
    tf.random.set_seed(seed)  # the same dropout masks on both devices
    with tf.device(device):
        model = build_model(28, 28, 1, 10)
        model.set_weights(weights)
        optimizer = Adam(learning_rate=LEARNING_RATE)
        losses, copies = [], []
        for x, y in batches:
            before = tf._core.device_transfers()
            x, y = tf.constant(x), tf.constant(y)
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(categorical_crossentropy(y, model(x, training=True)))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables, strict=True))
            losses.append(float(loss))
            after = tf._core.device_transfers()
            copies.append({key: after[key] - before[key] for key in ("uploads", "downloads")})
        placed = {v.device for v in model.variables}
        return losses, [w.copy() for w in model.get_weights()], copies, placed


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch-size", type=int, default=32, help="images per step")
    parser.add_argument("--seed", type=int, default=7, help="seed of the weights and data")
    args = parser.parse_args()

    gpus = tf.config.list_physical_devices("GPU")
    print("GPUs:", gpus)
    if not gpus:
        print("no GPU: build with --features gpu, or allow a software adapter", file=sys.stderr)
        return 1
    with tf.device("/GPU:0"):
        x = tf.constant([[1.0, 2.0], [3.0, 4.0]])
        y = tf.nn.relu(tf.matmul(x, x) - 10.0)
    print("on the GPU:", x.device, "->", y.device, y.numpy().tolist())

    rng = np.random.default_rng(args.seed)
    batches = [
        (
            rng.random((args.batch_size, 28, 28, 1), dtype=np.float32),
            np.eye(10, dtype=np.float32)[rng.integers(0, 10, args.batch_size)],
        )
        for _ in range(STEPS)
    ]
    tf.random.set_seed(args.seed)
    weights = build_model(28, 28, 1, 10).get_weights()
    cpu_losses, cpu_weights, _, _ = train("/CPU:0", weights, batches, args.seed)
    gpu_losses, gpu_weights, copies, placed = train("/GPU:0", weights, batches, args.seed)
    for step, (c, g, moved) in enumerate(zip(cpu_losses, gpu_losses, copies, strict=True), 1):
        print(
            f"step {step}: loss on the CPU {c:.6f}, on the GPU {g:.6f}; "
            f"{moved['uploads']} uploads, {moved['downloads']} downloads"
        )
    print("the GPU model's variables live on:", sorted(placed))
    # The first loss is the same weights' forward pass on each device: equal to float32
    # rounding. After it, Adam moves each weight by about the learning rate per step whatever
    # its gradient's size, so a weight whose gradient is rounding noise on both devices (a
    # convolution's bias just before batch normalisation has a true gradient of 0) may move
    # either way: later losses agree less closely, and weights to within those moves.
    errors = [abs(c - g) / abs(c) for c, g in zip(cpu_losses, gpu_losses, strict=True)]
    weight_error = max(
        float(np.max(np.abs(c - g))) for c, g in zip(cpu_weights, gpu_weights, strict=True)
    )
    print(
        f"loss differences {', '.join(f'{e:.1e}' for e in errors)}; "
        f"largest weight difference {weight_error:.2e}"
    )
    agree = errors[0] < 1e-5 and max(errors) < 1e-3 and weight_error <= 2 * STEPS * LEARNING_RATE
    return 0 if agree else 1


if __name__ == "__main__":
    sys.exit(main())
