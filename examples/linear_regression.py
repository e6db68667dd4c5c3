"""Linear regression with GradientTape, as in the tutorial "2.0 - Linear Regression".

Fits y = a*x + b to eleven points of y = 10x + 5 with an absolute-error loss, a persistent tape
and two `assign_sub` updates per step, exactly as the tutorial does.

    python examples/linear_regression.py [STEPS]

STEPS defaults to the tutorial's 100000. The initial values of `a` and `b` come from Python's
`random` module seeded with SEED, so a run is reproducible.
"""

import argparse
import random

import numpy as np

import ferrotape as tf

SEED = 42
DEFAULT_STEPS = 100_000


# Loss function
def loss(real_y, pred_y):
    return tf.abs(real_y - pred_y)


def main(steps):
    random.seed(SEED)

    # Training data
    x_train = np.asarray([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10])
    y_train = np.asarray([i * 10 + 5 for i in x_train])  # y = 10x+5

    # Trainable variables
    a = tf.Variable(random.random(), trainable=True)
    b = tf.Variable(random.random(), trainable=True)

    def step(real_x, real_y):
        with tf.GradientTape(persistent=True) as tape:
            # Make prediction
            pred_y = a * real_x + b
            # Calculate loss
            reg_loss = loss(real_y, pred_y)

        # Calculate gradients
        a_gradients, b_gradients = tape.gradient(reg_loss, (a, b))

        # Update variables
        a.assign_sub(a_gradients * 0.001)
        b.assign_sub(b_gradients * 0.001)

    for _ in range(steps):
        step(x_train, y_train)

    print(f"y ≈ {a.numpy()}x + {b.numpy()}")


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "steps",
        nargs="?",
        type=int,
        default=DEFAULT_STEPS,
        help=f"training steps (the tutorial's {DEFAULT_STEPS})",
    )
    args = parser.parse_args(argv)
    if args.steps < 0:
        parser.error("STEPS must not be negative")
    return args


if __name__ == "__main__":
    main(parse_args().steps)
