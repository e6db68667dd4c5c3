"""JAX's workloads, jit-compiled pure functions as JAX users write them: the seed CNN with
`lax.conv_general_dilated` (NHWC/HWIO like Keras), BatchNormalization's batch statistics and
moving averages carried as state, Dropout from a split PRNG key, Adam written out (the same
update as Keras's, without optax so that `jax[cpu]` alone suffices); W6 with jacrev, vmap and
hessian.

JAX dispatches asynchronously: `sync` blocks on the last step's result before the clock stops.
XLA's CPU thread pool follows the process's CPU affinity, which the worker pins.
"""

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from . import common

FRAMEWORK = "jax"
BN_MOMENTUM, BN_EPSILON = 0.99, 1e-3
ADAM_BETAS, ADAM_EPSILON = (0.9, 0.999), 1e-7


def setup(threads):
    # compare.py sets JAX_PLATFORMS to "cuda" under --device gpu: without CUDA, jax.devices()
    # fails (a RuntimeError, or an AssertionError from its backend lookup in some versions).
    try:
        devices = jax.devices()
    except Exception as error:
        if common.DEVICE == "gpu":
            reason = str(error).splitlines()[0] if str(error) else type(error).__name__
            raise common.NoGpu(f"jax.devices() with JAX_PLATFORMS=cuda: {reason}") from error
        raise
    return {
        "version": jax.__version__,
        "details": {"devices": [str(d) for d in devices], "jaxlib": _jaxlib_version()},
    }


def _jaxlib_version():
    try:
        import jaxlib

        return jaxlib.__version__
    except (ImportError, AttributeError):
        return None


def sgemm(data):
    matmul = jax.jit(jnp.matmul)
    a, b = jnp.asarray(data["a"]), jnp.asarray(data["b"])
    return lambda: matmul(a, b)


def _glorot(rng, shape, fan_in, fan_out):
    limit = np.sqrt(6.0 / (fan_in + fan_out))
    return jnp.asarray(rng.uniform(-limit, limit, shape).astype(np.float32))


def init_cnn(seed=0):
    """The seed CNN's parameters (Glorot kernels, zero biases, BN's gamma 1 and beta 0) and its
    BN state (moving means 0, moving variances 1)."""
    rng = np.random.default_rng(seed)
    params, state, channels = {}, {}, common.IMAGE_SHAPE[2]
    convs = [f for block in common.CNN_BLOCKS for f in block]
    for index, filters in enumerate(convs):
        params[f"conv{index}"] = {
            "kernel": _glorot(rng, (3, 3, channels, filters), 9 * channels, 9 * filters),
            "bias": jnp.zeros(filters),
        }
        params[f"bn{index}"], state[f"bn{index}"] = _batch_norm_init(filters)
        channels = filters
    side = common.IMAGE_SHAPE[0] // 2 ** len(common.CNN_BLOCKS)
    flat = side * side * channels
    params["dense0"] = {
        "kernel": _glorot(rng, (flat, common.CNN_DENSE), flat, common.CNN_DENSE),
        "bias": jnp.zeros(common.CNN_DENSE),
    }
    params["bn_dense"], state["bn_dense"] = _batch_norm_init(common.CNN_DENSE)
    params["dense1"] = {
        "kernel": _glorot(rng, (common.CNN_DENSE, common.CLASSES), common.CNN_DENSE, 10),
        "bias": jnp.zeros(common.CLASSES),
    }
    return params, state


def _batch_norm_init(channels):
    params = {"gamma": jnp.ones(channels), "beta": jnp.zeros(channels)}
    return params, {"mean": jnp.zeros(channels), "var": jnp.ones(channels)}


def _batch_norm(x, params, state, training):
    """Keras's BatchNormalization over every axis but the last; returns (y, new state)."""
    axes = tuple(range(x.ndim - 1))
    if training:
        mean, var = jnp.mean(x, axes), jnp.var(x, axes)
        state = {
            "mean": BN_MOMENTUM * state["mean"] + (1 - BN_MOMENTUM) * mean,
            "var": BN_MOMENTUM * state["var"] + (1 - BN_MOMENTUM) * var,
        }
    else:
        mean, var = state["mean"], state["var"]
    y = (x - mean) * lax.rsqrt(var + BN_EPSILON) * params["gamma"] + params["beta"]
    return y, state


def cnn_forward(params, state, x, key, training):
    """The seed CNN's softmax probabilities and its new BN state."""
    new_state, index = {}, 0
    for block in common.CNN_BLOCKS:
        for _ in block:
            conv = params[f"conv{index}"]
            x = lax.conv_general_dilated(
                x, conv["kernel"], (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")
            )
            x = jax.nn.relu(x + conv["bias"])
            name = f"bn{index}"
            x, new_state[name] = _batch_norm(x, params[name], state[name], training)
            index += 1
        x = lax.reduce_window(x, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
    x = x.reshape(x.shape[0], -1)
    x = jax.nn.relu(x @ params["dense0"]["kernel"] + params["dense0"]["bias"])
    x, new_state["bn_dense"] = _batch_norm(x, params["bn_dense"], state["bn_dense"], training)
    if training:
        keep = 1.0 - common.DROPOUT_RATE
        x = jnp.where(jax.random.bernoulli(key, keep, x.shape), x / keep, 0.0)
    logits = x @ params["dense1"]["kernel"] + params["dense1"]["bias"]
    return jax.nn.softmax(logits), new_state


def adam_init(params):
    zeros = jax.tree_util.tree_map(jnp.zeros_like, params)
    return {"m": zeros, "v": zeros, "t": jnp.zeros((), jnp.int32)}


def adam_update(params, grads, opt):
    """Keras's Adam: lr_t = lr * sqrt(1 - b2^t) / (1 - b1^t); w -= lr_t * m / (sqrt(v) + eps)."""
    (beta1, beta2), t = ADAM_BETAS, opt["t"] + 1
    m = jax.tree_util.tree_map(lambda m, g: beta1 * m + (1 - beta1) * g, opt["m"], grads)
    v = jax.tree_util.tree_map(lambda v, g: beta2 * v + (1 - beta2) * g * g, opt["v"], grads)
    step = common.LEARNING_RATE * jnp.sqrt(1 - beta2**t) / (1 - beta1**t)
    params = jax.tree_util.tree_map(
        lambda w, m, v: w - step * m / (jnp.sqrt(v) + ADAM_EPSILON), params, m, v
    )
    return params, {"m": m, "v": v, "t": t}


def _categorical_crossentropy(y, probabilities):
    # Keras clips probabilities to [eps, 1 - eps] before the log.
    clipped = jnp.clip(probabilities, 1e-7, 1 - 1e-7)
    return jnp.mean(-jnp.sum(y * jnp.log(clipped), axis=-1))


@jax.jit
def _cnn_train_step(params, opt, state, key, x, y):
    key, dropout_key = jax.random.split(key)

    def loss_fn(params):
        probabilities, new_state = cnn_forward(params, state, x, dropout_key, True)
        return _categorical_crossentropy(y, probabilities), new_state

    (loss, new_state), grads = jax.value_and_grad(loss_fn, has_aux=True)(params)
    params, opt = adam_update(params, grads, opt)
    return params, opt, new_state, key, loss


def cnn_train(data):
    params, state = init_cnn()
    carry = [params, adam_init(params), state, jax.random.PRNGKey(0)]
    x, y = jnp.asarray(data["x"]), jnp.asarray(data["y"])

    def step():
        *carry[:], loss = _cnn_train_step(*carry, x, y)  # the new carry replaces the old
        return loss

    return step


def cnn_infer(data):
    params, state = init_cnn()
    forward = jax.jit(lambda params, state, x: cnn_forward(params, state, x, None, False)[0])
    x = jnp.asarray(data["x"])
    return lambda: forward(params, state, x)


@jax.jit
def _mlp_train_step(params, opt, x, y):
    def loss_fn(params):
        h = jax.nn.relu(x @ params["w1"] + params["b1"])
        logits = h @ params["w2"] + params["b2"]
        loss = jnp.mean(-jnp.sum(y * jax.nn.log_softmax(logits), axis=-1))
        l2 = common.L2_FACTOR * (jnp.sum(params["w1"] ** 2) + jnp.sum(params["w2"] ** 2))
        return loss + l2, loss

    (_, loss), grads = jax.value_and_grad(loss_fn, has_aux=True)(params)
    # tf.clip_by_norm per gradient: g * c / max(||g||, c).
    grads = jax.tree_util.tree_map(
        lambda g: g * common.CLIP_NORM / jnp.maximum(jnp.linalg.norm(g), common.CLIP_NORM), grads
    )
    params, opt = adam_update(params, grads, opt)
    return params, opt, loss


def mlp_train(data):
    params = {
        "w1": jnp.asarray(data["w1"]),
        "b1": jnp.zeros(common.MLP_SIZES[1]),
        "w2": jnp.asarray(data["w2"]),
        "b2": jnp.zeros(common.MLP_SIZES[2]),
    }
    carry = [params, adam_init(params)]
    x, y = jnp.asarray(data["x"]), jnp.asarray(data["y"])

    def step():
        *carry[:], loss = _mlp_train_step(*carry, x, y)  # the new carry replaces the old
        return loss

    return step


def _w6_arrays(data):
    return {name: jnp.asarray(array) for name, array in data.items()}


def jacobian(data):
    a = _w6_arrays(data)
    jac = jax.jit(jax.jacrev(lambda kernel: jax.nn.relu(a["x"] @ kernel + a["bias1"])))
    return lambda: jac(a["kernel1"])


def batch_jacobian(data):
    a = _w6_arrays(data)

    def one_example(x):
        h = jax.nn.elu(x @ a["kernel1"] + a["bias1"])
        return jax.nn.elu(h @ a["kernel2"] + a["bias2"])

    per_example = jax.jit(jax.vmap(jax.jacrev(one_example)))
    return lambda: per_example(a["x"])


def hessian(data):
    a = _w6_arrays(data)

    def loss(kernel1):
        h = jax.nn.relu(a["x"] @ kernel1 + a["bias1"])
        return jnp.mean(jax.nn.relu(h @ a["kernel2"] + a["bias2"]) ** 2)

    hess = jax.jit(jax.hessian(loss))
    return lambda: hess(a["kernel1"])


VARIANTS = {
    family: {"jit": build}
    for family, build in {
        "sgemm": sgemm,
        "cnn_train": cnn_train,
        "cnn_infer": cnn_infer,
        "mlp_train": mlp_train,
        "jacobian": jacobian,
        "batch_jacobian": batch_jacobian,
        "hessian": hessian,
    }.items()
}


def to_numpy(result):
    return np.asarray(result)


def sync(result):
    jax.block_until_ready(result)
