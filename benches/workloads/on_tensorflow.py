"""TensorFlow's workloads: the same `tape_api` code as ferrotape, eagerly and, for the training
steps and inference, inside `tf.function` (a traced graph, as TF users speed up their loops).

Thread pools: intra-op and inter-op parallelism are both set to the pinned thread count (TF's
own default is one thread per core for each), before any op runs.
"""

import os

import tensorflow as tf

from . import tape_api

FRAMEWORK = "tensorflow"


def setup(threads):
    tf.config.threading.set_intra_op_parallelism_threads(threads)
    tf.config.threading.set_inter_op_parallelism_threads(threads)
    try:
        import keras

        keras_version = keras.__version__
    except ImportError:
        keras_version = None
    return {
        "version": tf.__version__,
        "details": {
            "keras": keras_version,
            "intra_op_threads": tf.config.threading.get_intra_op_parallelism_threads(),
            "inter_op_threads": tf.config.threading.get_inter_op_parallelism_threads(),
            "oneDNN": os.environ.get("TF_ENABLE_ONEDNN_OPTS", "(default)"),
        },
    }


VARIANTS = {family: tape_api.variants(tf, family, "tf.function") for family in tape_api.FAMILIES}


def to_numpy(result):
    return result.numpy()


def sync(result):
    """TF's eager CPU ops and tf.function calls return finished tensors."""
