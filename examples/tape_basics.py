"""GradientTape basics: a whole tape tutorial, then the CNN tutorial's tape cells (In[9]-In[14]).

Run with `python examples/tape_basics.py`. Each section prints what the tutorial prints; where
TensorFlow 2.21 differs from the tutorial (the integer-variable warnings are no longer printed),
the output follows TensorFlow.
"""

import argparse

import ferrotape as tf


def section(title):
    print(f"\n=== {title} ===")


def seed_001():
    section("GradientTape on a Variable")
    x = tf.Variable(20.0)
    print(x)
    with tf.GradientTape() as tape:
        y = x**2
    # dy = 2x * dx = 2*20.0 = 40.0
    dy_dx = tape.gradient(y, x)
    print(dy_dx)

    section("GradientTape on an integer Variable")
    x = tf.Variable(30)
    print(x)
    with tf.GradientTape() as tape:
        y = x**3
    print(y)
    dy_dx = tape.gradient(y, x)
    print(dy_dx)

    section("Integer value with an explicit float32 dtype")
    x = tf.Variable(30, dtype=tf.float32)
    print(x)
    with tf.GradientTape() as tape:
        y = x**3
    dy_dx = tape.gradient(y, x)
    print(dy_dx)

    section("GradientTape on a 1D tensor Variable")
    x = tf.Variable([1.0, 2.0, 3.0], dtype=tf.float32)
    with tf.GradientTape() as tape:
        y = x**3
    print(y)
    dy_dx = tape.gradient(y, x)
    print(dy_dx)

    section("GradientTape on a tf.constant() tensor")
    x = tf.constant(3.0)
    print(x)
    with tf.GradientTape() as tape:
        y = x**2
    dy_dx = tape.gradient(y, x)
    print(dy_dx)

    x = tf.constant(3.0)
    with tf.GradientTape() as tape:
        # tell the GradientTape() API to watch the tensor `x` explicitly
        tape.watch(x)
        y = x**2
    dy_dx = tape.gradient(y, x)
    print(dy_dx)

    section("Controlling trainable variables")
    x = tf.Variable(5.0, trainable=False)
    with tf.GradientTape() as tape:
        y = x**3
    dy_dx = tape.gradient(y, x)
    print(dy_dx)

    x = tf.Variable(5.0, trainable=False)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x**3
    dy_dx = tape.gradient(y, x)
    print(dy_dx)

    section("Watching accessed variables")
    x0 = tf.Variable(5.0)
    with tf.GradientTape(watch_accessed_variables=True) as tape:
        y0 = x0**2
    dy_dx0 = tape.gradient(y0, x0)
    print(dy_dx0)

    x0 = tf.Variable(5.0)
    with tf.GradientTape(watch_accessed_variables=False) as tape:
        y0 = x0**2
    dy_dx0 = tape.gradient(y0, x0)
    print(dy_dx0)

    x0 = tf.Variable(5.0)
    with tf.GradientTape(watch_accessed_variables=False) as tape:
        tape.watch(x0)
        y0 = x0**2
    dy_dx0 = tape.gradient(y0, x0)
    print(dy_dx0)

    section("More than one gradient needs persistent=True")
    x0 = tf.Variable(5.0)
    x1 = tf.Variable(10.0)
    with tf.GradientTape() as tape:
        y0 = x0**2
        y1 = x1**2
    dy_dx0 = tape.gradient(y0, x0)
    try:
        dy_dx1 = tape.gradient(y1, x1)
        print(dy_dx0)
        print(dy_dx1)
    except RuntimeError as err:
        print(f"RuntimeError: {err}")

    x0 = tf.Variable(5.0)
    x1 = tf.Variable(10.0)
    with tf.GradientTape(persistent=True) as tape:
        y0 = x0**2
        y1 = x1**2
    dy_dx0 = tape.gradient(y0, x0)
    dy_dx1 = tape.gradient(y1, x1)
    print(dy_dx0)
    print(dy_dx1)

    section("Everything in a single code block")
    x = tf.Variable(20.0, dtype=tf.float32)
    print(x)
    with tf.GradientTape() as tape:
        y = x**2
    dy_dx = tape.gradient(y, x)
    print(f"TensorFlow GradientTape on a floating variable: {dy_dx}\n")

    x = tf.Variable(30)
    print(x)
    with tf.GradientTape() as tape:
        y = x**3
    print(y)
    dy_dx = tape.gradient(y, x)
    print(f"TensorFlow GradientTape on an integer variable: {dy_dx}\n")

    x = tf.Variable([1.0, 2.0, 3.0], dtype=tf.float32)
    with tf.GradientTape() as tape:
        y = x**3
    print(y)
    dy_dx = tape.gradient(y, x)
    print(f"GradientTape on a 1D tensor variable: {dy_dx}\n")

    x = tf.constant(3.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x**2
    dy_dx = tape.gradient(y, x)
    print(f"GradientTape on a constant tensor: {dy_dx}\n")

    x = tf.Variable(5.0, trainable=False)
    with tf.GradientTape() as tape:
        y = x**3
    dy_dx = tape.gradient(y, x)
    print(f"GradientTape does not watch non-trainable variables: {dy_dx}")

    x = tf.Variable(5.0, trainable=False)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x**3
    dy_dx = tape.gradient(y, x)
    print(f"We need to tell GradientTape to watch non-trainable variables explicitly: {dy_dx}\n\n")

    x0 = tf.Variable(5.0)
    x1 = tf.Variable(10.0)
    with tf.GradientTape(persistent=True) as tape:
        y0 = x0**2
        y1 = x1**2
    dy_dx0 = tape.gradient(y0, x0)
    dy_dx1 = tape.gradient(y1, x1)
    print(dy_dx0)
    print(dy_dx1)


def seed_000():
    section("Seed 000 In[9]: watching a constant")
    x = tf.constant(3.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x**3
    print(tape.gradient(y, x).numpy())

    section("Seed 000 In[10]: trainable variables are watched automatically")
    x = tf.Variable(3.0, trainable=True)
    with tf.GradientTape() as tape:
        y = x**3
    print(tape.gradient(y, x).numpy())

    section("Seed 000 In[11]: watch_accessed_variables=False")
    x = tf.Variable(3.0, trainable=True)
    with tf.GradientTape(watch_accessed_variables=False) as tape:
        y = x**3
    print(tape.gradient(y, x))

    section("Seed 000 In[12]: higher-order derivatives")
    x = tf.Variable(3.0, trainable=True)
    with tf.GradientTape() as tape1:
        with tf.GradientTape() as tape2:
            y = x**3
        order_1 = tape2.gradient(y, x)
    order_2 = tape1.gradient(order_1, x)
    print(order_2.numpy())

    section("Seed 000: a second gradient() on a non-persistent tape")
    a = tf.Variable(6.0, trainable=True)
    b = tf.Variable(2.0, trainable=True)
    with tf.GradientTape() as tape:
        y1 = a**2
        y2 = b**3
    print(tape.gradient(y1, a).numpy())
    try:
        print(tape.gradient(y2, b).numpy())
    except RuntimeError as err:
        print(f"RuntimeError: {err}")

    section("Seed 000 In[13]: persistent=True")
    a = tf.Variable(6.0, trainable=True)
    b = tf.Variable(2.0, trainable=True)
    with tf.GradientTape(persistent=True) as tape:
        y1 = a**2
        y2 = b**3
    print(tape.gradient(y1, a).numpy())
    print(tape.gradient(y2, b).numpy())

    section("Seed 000 In[14]: gradients inside stop_recording()")
    a = tf.Variable(6.0, trainable=True)
    b = tf.Variable(2.0, trainable=True)
    with tf.GradientTape(persistent=True) as tape:
        y1 = a**2
        with tape.stop_recording():
            print(tape.gradient(y1, a).numpy())

        y2 = b**3
        with tape.stop_recording():
            print(tape.gradient(y2, b).numpy())


if __name__ == "__main__":
    # No options: --help says what the example prints.
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()
    seed_001()
    seed_000()
