"""A compiled training step called with a new batch size on every call: what one trace for
every size of a ``None`` dimension saves over a trace per size.

The step is W4's MLP (784-128-10, sparse cross-entropy, Adam) on 60 batches of 100 to 159 rows,
each size once and in a shuffled order, so that every call of the first pass meets a new size;
the second pass meets them all again. Per framework, as available in the interpreter running
this script:

- ferrotape: eager; ``ft.function`` without a signature (a trace per size); ``ft.function``
  with ``input_signature=[TensorSpec([None, 784]), TensorSpec([None])]`` (one trace).
- TensorFlow: ``tf.function`` with the same signature (one graph).
- JAX: ``jax.jit`` (which compiles once per shape).
- PyTorch: eager.

Printed per variant: the median time of one call in each pass and the first pass's total.
Thread pools pinned to 2 threads per framework.

    python benches/varying_batch.py [--json out.json]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

THREADS = "2"
for var in ("RAYON_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ.setdefault(var, THREADS)

import numpy as np  # noqa: E402

SIZES = list(range(100, 160))
np.random.default_rng(1).shuffle(SIZES)


def batches():
    rng = np.random.default_rng(0)
    return [
        (rng.standard_normal((n, 784)).astype(np.float32), rng.integers(0, 10, n).astype(np.int32))
        for n in SIZES
    ]


def keras_step(tf):
    """W4's step written against a Keras-style API (`tf` is ferrotape or TensorFlow)."""
    keras = tf.keras
    model = keras.Sequential(
        [
            keras.layers.Input((784,)),
            keras.layers.Dense(128, activation="relu"),
            keras.layers.Dense(10),
        ]
    )
    optimizer = keras.optimizers.Adam(1e-3)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    def step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables, strict=True))
        return loss

    return step


def signature(tf):
    return [tf.TensorSpec([None, 784], tf.float32), tf.TensorSpec([None], tf.int32)]


def ferrotape_variants():
    import ferrotape as ft

    def convert(x, y):
        return ft.constant(x), ft.constant(y)

    yield "ferrotape eager", keras_step(ft), convert
    yield "ferrotape ft.function (a trace per size)", ft.function(keras_step(ft)), convert
    traced = ft.function(keras_step(ft), input_signature=signature(ft))
    yield "ferrotape ft.function(input_signature with None)", traced, convert


def tensorflow_variants():
    import tensorflow as tf

    tf.config.threading.set_intra_op_parallelism_threads(int(THREADS))
    tf.config.threading.set_inter_op_parallelism_threads(1)

    def convert(x, y):
        return tf.constant(x), tf.constant(y)

    traced = tf.function(keras_step(tf), input_signature=signature(tf))
    yield "tensorflow tf.function(input_signature with None)", traced, convert


def jax_variants():
    import jax
    import jax.numpy as jnp

    rng = np.random.default_rng(2)
    params = {
        "w1": jnp.asarray(rng.standard_normal((784, 128)).astype(np.float32) * 0.05),
        "b1": jnp.zeros(128),
        "w2": jnp.asarray(rng.standard_normal((128, 10)).astype(np.float32) * 0.1),
        "b2": jnp.zeros(10),
    }
    moments = jax.tree.map(lambda p: (jnp.zeros_like(p), jnp.zeros_like(p)), params)
    state = {"params": params, "moments": moments, "t": 0}

    def loss_fn(p, x, y):
        logits = jax.nn.relu(x @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"]
        return -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(logits), y[:, None], 1))

    @jax.jit
    def update(p, m, t, x, y):
        loss, g = jax.value_and_grad(loss_fn)(p, x, y)

        def adam(p, m, g):
            mu, nu = 0.9 * m[0] + 0.1 * g, 0.999 * m[1] + 0.001 * g * g
            step = 1e-3 * (mu / (1 - 0.9**t)) / (jnp.sqrt(nu / (1 - 0.999**t)) + 1e-7)
            return p - step, (mu, nu)

        out = jax.tree.map(adam, p, m, g, is_leaf=lambda v: isinstance(v, tuple))
        new_p = jax.tree.map(lambda o: o[0], out, is_leaf=lambda v: isinstance(v, tuple))
        new_m = jax.tree.map(lambda o: o[1], out, is_leaf=lambda v: isinstance(v, tuple))
        return loss, new_p, new_m

    def step(x, y):
        state["t"] += 1
        loss, state["params"], state["moments"] = update(
            state["params"], state["moments"], state["t"], x, y
        )
        return loss.block_until_ready()

    yield "jax jit (a compile per shape)", step, lambda x, y: (jnp.asarray(x), jnp.asarray(y))


def pytorch_variants():
    import torch

    torch.set_num_threads(int(THREADS))
    layers = (torch.nn.Linear(784, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10))
    model = torch.nn.Sequential(*layers)
    optimizer = torch.optim.Adam(model.parameters(), 1e-3)

    def step(x, y):
        optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        return loss

    def convert(x, y):
        return torch.from_numpy(x), torch.from_numpy(y).long()

    yield "pytorch eager", step, convert


def measure(step, convert, data):
    # One call of 99 rows first (a size the passes do not use): builds the optimizer's slots,
    # and makes the traced variants' first trace.
    rng = np.random.default_rng(3)
    step(*convert(rng.standard_normal((99, 784)).astype(np.float32), np.zeros(99, np.int32)))
    passes = []
    for _ in range(2):
        times = []
        for x, y in data:
            args = convert(x, y)
            start = time.perf_counter()
            step(*args)
            times.append(time.perf_counter() - start)
        passes.append(times)
    return {
        "first pass median ms": statistics.median(passes[0]) * 1e3,
        "second pass median ms": statistics.median(passes[1]) * 1e3,
        "first pass total ms": sum(passes[0]) * 1e3,
    }


FRAMEWORKS = {
    "ferrotape": ferrotape_variants,
    "tensorflow": tensorflow_variants,
    "jax": jax_variants,
    "pytorch": pytorch_variants,
}


def run_framework(name):
    """The figures of one framework's variants (in this process)."""
    data, results = batches(), {}
    for variant, step, convert in FRAMEWORKS[name]():
        results[variant] = measure(step, convert, data)
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", help="write the figures to this file")
    parser.add_argument("--framework", help=argparse.SUPPRESS)  # a worker's own framework
    args = parser.parse_args()
    if args.framework:
        print(json.dumps(run_framework(args.framework)))
        return
    results = {}
    # One process per framework: their native libraries (LLVM in JAX and PyTorch) clash.
    for name in FRAMEWORKS:
        worker = subprocess.run(
            [sys.executable, __file__, "--framework", name],
            capture_output=True,
            text=True,
            check=False,
        )
        if worker.returncode != 0:
            print(f"{name}: skipped ({worker.stderr.strip().splitlines()[-1:]})")
            continue
        for variant, figures in json.loads(worker.stdout.strip().splitlines()[-1]).items():
            results[variant] = figures
            shown = "  ".join(f"{k} {v:8.3f}" for k, v in figures.items())
            print(f"{variant:52s} {shown}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)


if __name__ == "__main__":
    main()
