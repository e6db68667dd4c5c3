"""The workloads in TensorFlow's API, run unchanged by ferrotape and by TensorFlow.

Every function takes the module as `tf` (``ferrotape`` or ``tensorflow``) and the workload's numpy
inputs, builds what the step needs (model, optimizer, tensors: not timed) and returns the step, a
function of no arguments. The code is written as the seed tutorials write it: `GradientTape`, Keras
layers, `apply_gradients`; the inputs are converted to tensors once, outside the step.
"""

from . import common


def sgemm(tf, data):
    """W5: one float32 matrix product."""
    a, b = tf.constant(data["a"]), tf.constant(data["b"])
    return lambda: tf.matmul(a, b)


def build_cnn(tf):
    """The seed CNN (seed 000's build_model), with the Keras Sequential API."""
    layers = tf.keras.layers
    stack = []
    for block in common.CNN_BLOCKS:
        for filters in block:
            if not stack:
                stack.append(
                    layers.Conv2D(filters, (3, 3), padding="same", input_shape=common.IMAGE_SHAPE)
                )
            else:
                stack.append(layers.Conv2D(filters, (3, 3), padding="same"))
            stack += [layers.Activation("relu"), layers.BatchNormalization(axis=-1)]
        stack.append(layers.MaxPooling2D(pool_size=(2, 2)))
    stack += [
        layers.Flatten(),
        layers.Dense(common.CNN_DENSE),
        layers.Activation("relu"),
        layers.BatchNormalization(),
        layers.Dropout(common.DROPOUT_RATE),
        layers.Dense(common.CLASSES),
        layers.Activation("softmax"),
    ]
    return tf.keras.models.Sequential(stack)


def cnn_train(tf, data):
    """W3: seed 000's step with BatchNormalization and Dropout in training mode."""
    model = build_cnn(tf)
    optimizer = tf.keras.optimizers.Adam(learning_rate=common.LEARNING_RATE)
    loss_fn = tf.keras.losses.categorical_crossentropy
    x, y = tf.constant(data["x"]), tf.constant(data["y"])
    # Build the weights and the optimizer's slots outside the step, so that a tf.function
    # wrapper never has to create variables while tracing.
    model(tf.constant(data["x"][:1]))
    optimizer.build(model.trainable_variables)

    def step():
        with tf.GradientTape() as tape:
            pred = model(x, training=True)
            loss = tf.reduce_mean(loss_fn(y, pred))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables, strict=True))
        return loss

    return step


def cnn_infer(tf, data):
    """Inference: the seed CNN's forward pass with training=False."""
    model = build_cnn(tf)
    x = tf.constant(data["x"])
    return lambda: model(x, training=False)


def mlp_train(tf, data):
    """W4: seed 003's MLP step: softmax cross-entropy + L2, a persistent tape, clip_by_norm,
    Adam. The kernels start from the shared normal draws (seed 003: tf.random.normal)."""

    class MLP(tf.Module):
        def __init__(self):
            super().__init__()
            self.w1 = tf.Variable(data["w1"])
            self.b1 = tf.Variable(tf.zeros([common.MLP_SIZES[1]]))
            self.w2 = tf.Variable(data["w2"])
            self.b2 = tf.Variable(tf.zeros([common.MLP_SIZES[2]]))

        def __call__(self, x):
            h1 = tf.nn.relu(tf.matmul(x, self.w1) + self.b1)
            return tf.matmul(h1, self.w2) + self.b2

    model = MLP()
    optimizer = tf.keras.optimizers.Adam(common.LEARNING_RATE)
    variables = [model.w1, model.b1, model.w2, model.b2]
    optimizer.build(variables)
    x, y = tf.constant(data["x"]), tf.constant(data["y"])

    def step():
        with tf.GradientTape(persistent=True) as tape:
            y_pred = model(x)
            loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(y, y_pred))
            l2_loss = common.L2_FACTOR * (
                tf.reduce_sum(tf.square(model.w1)) + tf.reduce_sum(tf.square(model.w2))
            )
            total_loss = loss + l2_loss
        grads = tape.gradient(total_loss, variables)
        clipped = [tf.clip_by_norm(g, common.CLIP_NORM) for g in grads]
        optimizer.apply_gradients(zip(clipped, variables, strict=True))
        del tape
        return loss

    return step


def _dense(tf, x, units, activation, data, index):
    """A built Keras Dense layer holding the shared kernel and bias number `index`."""
    layer = tf.keras.layers.Dense(units, activation=activation)
    layer(x)
    layer.set_weights([data[f"kernel{index}"], data[f"bias{index}"]])
    return layer


def jacobian(tf, data):
    """W6: seed 004's jacobian of a Dense(10, relu) output wrt the layer's kernel."""
    x = tf.constant(data["x"])
    layer = _dense(tf, x, common.W6_JACOBIAN_UNITS, tf.nn.relu, data, 1)

    def step():
        with tf.GradientTape(persistent=True) as tape:
            y = layer(x)
        return tape.jacobian(y, layer.kernel)

    return step


def batch_jacobian(tf, data):
    """W6: seed 004's batch_jacobian of Dense(8, elu) then Dense(6, elu) wrt the input."""
    x = tf.constant(data["x"])
    units1, units2 = common.W6_HIDDEN_UNITS
    layer1 = _dense(tf, x, units1, tf.nn.elu, data, 1)
    layer2 = _dense(tf, layer1(x), units2, tf.nn.elu, data, 2)

    def step():
        with tf.GradientTape(persistent=True, watch_accessed_variables=False) as tape:
            tape.watch(x)
            y = layer2(layer1(x))
        return tape.batch_jacobian(y, x)

    return step


def hessian(tf, data):
    """W6: seed 004's Hessian of mean(y**2) wrt Dense(8, relu)'s kernel, by nested tapes."""
    x = tf.constant(data["x"])
    units1, units2 = common.W6_HIDDEN_UNITS
    layer1 = _dense(tf, x, units1, tf.nn.relu, data, 1)
    layer2 = _dense(tf, layer1(x), units2, tf.nn.relu, data, 2)

    def step():
        with tf.GradientTape() as t2:
            with tf.GradientTape() as t1:
                y = layer2(layer1(x))
                loss = tf.reduce_mean(y**2)
            g = t1.gradient(loss, layer1.kernel)
        return t2.jacobian(g, layer1.kernel)

    return step


FAMILIES = {
    "sgemm": sgemm,
    "cnn_train": cnn_train,
    "cnn_infer": cnn_infer,
    "mlp_train": mlp_train,
    "jacobian": jacobian,
    "batch_jacobian": batch_jacobian,
    "hessian": hessian,
}

# The families TensorFlow and ferrotape also run inside their `function` (a traced step): the
# training steps, inference and the Jacobians (issue 12 compares each traced with JAX's jit).
GRAPH_FAMILIES = ("cnn_train", "mlp_train", "cnn_infer", "jacobian", "batch_jacobian", "hessian")


def variants(tf, family, traced_name):
    """A TF-API worker's implementations of one family: eager, plus `tf.function` of the same
    step (named `traced_name`) for the graph families."""
    build = FAMILIES[family]
    found = {"eager": lambda data: build(tf, data)}
    if family in GRAPH_FAMILIES:
        found[traced_name] = lambda data: tf.function(build(tf, data))
    return found
