"""The tape's hot path: per-iteration time of two tiny programs, where dispatch (Python call
→ binding → tape → kernel → back) is all there is to measure.

1. ``x = Variable(3.0); with tape: y = x**3; tape.gradient(y, x)``
2. the seed linear-regression step: 11 points, ``abs`` loss, a persistent tape, two
   ``assign_sub`` updates.

Each runs beside numpy doing the same arithmetic by hand (derivatives written out), and beside
PyTorch and TensorFlow when they are installed. Medians over repeated runs; thread pools pinned
to one thread (these programs are far below any parallel threshold).

    python benches/tape_overhead.py [--iterations N] [--repeats R] [--json out.json]
"""

import argparse
import json
import os
import statistics
import timeit

for var in ("RAYON_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ.setdefault(var, "1")

import numpy as np  # noqa: E402

import ferrotape as ft  # noqa: E402

X_TRAIN = np.asarray([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10])
Y_TRAIN = np.asarray([i * 10 + 5 for i in X_TRAIN])


def tape_cube(tf):
    x = tf.Variable(3.0)

    def step():
        with tf.GradientTape() as tape:
            y = x**3
        return tape.gradient(y, x)

    return step


def tape_linreg(tf):
    a, b = tf.Variable(0.4), tf.Variable(0.7)

    def step():
        with tf.GradientTape(persistent=True) as tape:
            pred_y = a * X_TRAIN + b
            reg_loss = tf.abs(Y_TRAIN - pred_y)
        a_gradients, b_gradients = tape.gradient(reg_loss, (a, b))
        a.assign_sub(a_gradients * 0.001)
        b.assign_sub(b_gradients * 0.001)

    return step


def numpy_cube():
    x = np.float32(3.0)

    def step():
        y = x**3
        return y, np.float32(3.0) * x * x

    return step


def numpy_linreg():
    x, y = X_TRAIN.astype(np.float32), Y_TRAIN.astype(np.float32)
    params = [np.float32(0.4), np.float32(0.7)]

    def step():
        a, b = params
        residual = y - (a * x + b)
        dloss_dpred = -np.sign(residual)  # d|y - pred| / d pred
        params[0] = a - np.float32(0.001) * np.sum(dloss_dpred * x)
        params[1] = b - np.float32(0.001) * np.sum(dloss_dpred)

    return step


def torch_cube(torch):
    x = torch.tensor(3.0, requires_grad=True)

    def step():
        y = x**3
        return torch.autograd.grad(y, x)

    return step


def torch_linreg(torch):
    a = torch.tensor(0.4, requires_grad=True)
    b = torch.tensor(0.7, requires_grad=True)
    x, y = torch.from_numpy(X_TRAIN), torch.from_numpy(Y_TRAIN)

    def step():
        loss = torch.abs(y - (a * x + b)).sum()
        ga, gb = torch.autograd.grad(loss, (a, b))
        with torch.no_grad():
            a.sub_(ga * 0.001)
            b.sub_(gb * 0.001)

    return step


def per_iteration_us(step, iterations, repeats):
    step()  # warm up
    times = timeit.repeat(step, number=iterations, repeat=repeats)
    return statistics.median(times) / iterations * 1e6


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=20000)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args()

    contenders = {"ferrotape": (tape_cube(ft), tape_linreg(ft))}
    contenders["numpy (by hand)"] = (numpy_cube(), numpy_linreg())
    try:
        import torch

        torch.set_num_threads(1)
        contenders["pytorch"] = (torch_cube(torch), torch_linreg(torch))
    except ImportError:
        print("pytorch not installed: skipped (pip install torch)")
    try:
        import tensorflow as tf

        contenders["tensorflow"] = (tape_cube(tf), tape_linreg(tf))
    except ImportError:
        print("tensorflow not installed: skipped (pip install tensorflow-cpu)")

    results = {}
    for name, (cube, linreg) in contenders.items():
        iterations = args.iterations if name != "tensorflow" else max(args.iterations // 50, 100)
        results[name] = {
            "x**3 gradient (us)": per_iteration_us(cube, iterations, args.repeats),
            "linear-regression step (us)": per_iteration_us(linreg, iterations, args.repeats),
        }
    columns = list(next(iter(results.values())))
    print(f"{'':18}" + "".join(f"{c:>30}" for c in columns))
    for name, row in results.items():
        print(f"{name:18}" + "".join(f"{row[c]:30.2f}" for c in columns))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)


if __name__ == "__main__":
    main()
