"""Writes the TensorFlow 2.21 checkpoints ferrotape's tests restore
(``tests/data/tf_model_checkpoints``): each model of ``tests/tf_model_programs.py`` trained three
Adam steps from fixed weights and saved by a ``CheckpointManager``, with the weights after those
steps and after one more (``expected.npz``); a ``tf.Module``; and a ``tf.data`` iterator. Run it
where TensorFlow is installed:

    python scripts/make_tf_model_checkpoints.py
"""

import os
import shutil
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
import tf_model_programs as programs  # noqa: E402

OUT = os.path.join(HERE, "..", "tests", "data", "tf_model_checkpoints")


def main():
    shutil.rmtree(OUT, ignore_errors=True)
    expected = {}
    for name, build in programs.MODELS.items():
        model = build(keras)
        programs.set_weights(model)
        optimizer = keras.optimizers.Adam(0.05)
        for _ in range(3):
            programs.train_step(tf, model, optimizer)
        manager = tf.train.CheckpointManager(
            tf.train.Checkpoint(model=model, optimizer=optimizer),
            os.path.join(OUT, name),
            max_to_keep=1,
        )
        manager.save()
        for i, w in enumerate(model.weights):
            expected[f"{name}/saved/{i}"] = w.numpy()
        programs.train_step(tf, model, optimizer)
        for i, w in enumerate(model.weights):
            expected[f"{name}/next/{i}"] = w.numpy()
    module, step, ckpt = programs.module_program(tf)
    step.assign(7)
    module.w.assign(module.w * 3.0)
    ckpt.save(os.path.join(OUT, "module", "ckpt"))
    for i, v in enumerate((module.w, module.b, module.extra[0], module.extra[1]["scale"], step)):
        expected[f"module/saved/{i}"] = v.numpy()
    iterator = iter(tf.data.Dataset.range(10).batch(2))
    next(iterator)
    tf.train.Checkpoint(iterator=iterator, step=tf.Variable(np.int64(3))).write(
        os.path.join(OUT, "iterator", "ckpt")
    )
    np.savez(os.path.join(OUT, "expected.npz"), **expected)
    # Paths relative to each directory, as TensorFlow writes them: the files work wherever the
    # repository is checked out.
    print("wrote", sorted(os.listdir(OUT)))


if __name__ == "__main__":
    main()
