"""TensorFlow's workloads: the same `tape_api` code as ferrotape, eagerly and, for the training
steps and inference, inside `tf.function` (a traced graph, as TF users speed up their loops).

Thread pools: intra-op and inter-op parallelism are both set to the pinned thread count (TF's
own default is one thread per core for each), before any op runs.
"""

import os

import tensorflow as tf

from . import common, tape_api

FRAMEWORK = "tensorflow"


def setup(threads):
    gpus = tf.config.list_physical_devices("GPU")
    if common.DEVICE == "gpu" and not gpus:
        raise common.NoGpu("tf.config.list_physical_devices('GPU') is empty")
    if common.DEVICE == "cpu" and gpus:
        tf.config.set_visible_devices([], "GPU")  # else TF would place the ops on its GPU
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
            "gpu": gpus[0].name if common.DEVICE == "gpu" else None,
        },
    }


VARIANTS = {family: tape_api.variants(tf, family, "tf.function") for family in tape_api.FAMILIES}


def to_numpy(result):
    return result.numpy()


def sync(result):
    """TF's eager CPU ops and tf.function calls return finished tensors; on a GPU, reading the
    result waits for its queued kernels."""
    if common.DEVICE == "gpu":
        for tensor in result if isinstance(result, (list, tuple)) else [result]:
            tensor.numpy()
