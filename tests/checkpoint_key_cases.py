"""Programs whose checkpoint keys must equal TensorFlow 2.21's with Keras 3 (the fixture
``data/checkpoint_keys_tf.json`` records TensorFlow's, ``scripts/make_checkpoint_key_fixtures.py``
makes it). Each runs with ``tf``, ``keras`` and ``np`` bound to one library and binds ``ckpt``."""

_TRAIN = """
def train(model, optimizer, x, steps=1):
    for _ in range(steps):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(model(x))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
"""


def _layer(constructor, input_shape, dtype="float32"):
    return (
        f"model = keras.Sequential([keras.Input({input_shape!r}, dtype={dtype!r}), "
        f"keras.layers.{constructor}])\n"
        "ckpt = tf.train.Checkpoint(model=model)\n"
    )


def _optimizer(constructor):
    return (
        _TRAIN + "model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(4), "
        "keras.layers.Dense(2)])\n"
        f"optimizer = keras.optimizers.{constructor}\n"
        "train(model, optimizer, np.ones((2, 3), 'float32'), steps=2)\n"
        "ckpt = tf.train.Checkpoint(model=model, optimizer=optimizer)\n"
    )


CASES = {
    # Layers, each in a Sequential with an Input.
    "dense": _layer("Dense(4)", (3,)),
    "dense_no_bias": _layer("Dense(4, use_bias=False)", (3,)),
    "einsum_dense": _layer("EinsumDense('ab,bc->ac', output_shape=4, bias_axes='c')", (3,)),
    "embedding": _layer("Embedding(10, 4)", (5,), "int32"),
    "conv1d": _layer("Conv1D(2, 3)", (8, 3)),
    "conv2d": _layer("Conv2D(2, 3)", (8, 8, 3)),
    "conv3d": _layer("Conv3D(2, 3)", (5, 5, 5, 1)),
    "conv1d_transpose": _layer("Conv1DTranspose(2, 3)", (8, 3)),
    "conv2d_transpose": _layer("Conv2DTranspose(2, 3)", (8, 8, 3)),
    "conv3d_transpose": _layer("Conv3DTranspose(2, 3)", (5, 5, 5, 1)),
    "depthwise_conv1d": _layer("DepthwiseConv1D(3)", (8, 3)),
    "depthwise_conv2d": _layer("DepthwiseConv2D(3)", (8, 8, 3)),
    "separable_conv1d": _layer("SeparableConv1D(2, 3)", (8, 3)),
    "separable_conv2d": _layer("SeparableConv2D(2, 3)", (8, 8, 3)),
    "batch_normalization": _layer("BatchNormalization()", (4,)),
    "layer_normalization": _layer("LayerNormalization()", (4,)),
    "group_normalization": _layer("GroupNormalization(2)", (4,)),
    "rms_normalization": _layer("RMSNormalization()", (4,)),
    "prelu": _layer("PReLU()", (4,)),
    "simple_rnn": _layer("SimpleRNN(3)", (5, 2)),
    "lstm": _layer("LSTM(3)", (5, 2)),
    "gru": _layer("GRU(3)", (5, 2)),
    "bidirectional_lstm": _layer("Bidirectional(keras.layers.LSTM(3))", (5, 2)),
    "conv_lstm2d": _layer("ConvLSTM2D(2, 3)", (3, 6, 6, 1)),
    "time_distributed": _layer("TimeDistributed(keras.layers.Dense(2))", (5, 3)),
    "normalization": _layer("Normalization()", (4,)),
    "multi_head_attention": (
        "inputs = keras.Input((5, 8))\n"
        "outputs = keras.layers.MultiHeadAttention(2, 4)(inputs, inputs)\n"
        "ckpt = tf.train.Checkpoint(model=keras.Model(inputs, outputs))\n"
    ),
    "attention_use_scale": (
        "a, b = keras.Input((5, 4)), keras.Input((6, 4))\n"
        "outputs = keras.layers.Attention(use_scale=True)([a, b])\n"
        "ckpt = tf.train.Checkpoint(model=keras.Model([a, b], outputs))\n"
    ),
    "additive_attention": (
        "a, b = keras.Input((5, 4)), keras.Input((6, 4))\n"
        "outputs = keras.layers.AdditiveAttention()([a, b])\n"
        "ckpt = tf.train.Checkpoint(model=keras.Model([a, b], outputs))\n"
    ),
    # Models.
    "sequential_untrained_adam": (
        "model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(4), "
        "keras.layers.Dense(2)])\n"
        "ckpt = tf.train.Checkpoint(model=model, optimizer=keras.optimizers.Adam())\n"
    ),
    "sequential_built_by_call": (
        "model = keras.Sequential([keras.layers.Dense(4), keras.layers.Dense(2)])\n"
        "model(np.ones((1, 3), 'float32'))\n"
        "ckpt = tf.train.Checkpoint(model=model)\n"
    ),
    "functional_adam_trained": (
        _TRAIN + "inputs = keras.Input((3,))\n"
        "hidden = keras.layers.Dense(4, activation='relu')(inputs)\n"
        "hidden = keras.layers.BatchNormalization()(hidden)\n"
        "outputs = keras.layers.Dense(2)(hidden)\n"
        "model = keras.Model(inputs, outputs)\n"
        "optimizer = keras.optimizers.Adam()\n"
        "train(model, optimizer, np.ones((2, 3), 'float32'))\n"
        "ckpt = tf.train.Checkpoint(model=model, optimizer=optimizer)\n"
    ),
    "subclassed_adam_trained": (
        _TRAIN + "class Net(keras.Model):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.l1 = keras.layers.Dense(4)\n"
        "        self.l2 = keras.layers.Dense(1)\n"
        "    def call(self, x):\n"
        "        return self.l2(self.l1(x))\n"
        "net = Net()\n"
        "optimizer = keras.optimizers.Adam()\n"
        "train(net, optimizer, np.ones((2, 3), 'float32'))\n"
        "ckpt = tf.train.Checkpoint(net=net, optimizer=optimizer)\n"
    ),
    "subclassed_with_lists": (
        "class Net(keras.Model):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.blocks = [keras.layers.Dense(4), keras.layers.Dense(3)]\n"
        "        self.heads = {'a': keras.layers.Dense(1), 'b': keras.layers.Dense(2)}\n"
        "    def call(self, x):\n"
        "        for block in self.blocks:\n"
        "            x = block(x)\n"
        "        return self.heads['a'](x) + self.heads['b'](x)[:, :1]\n"
        "net = Net()\n"
        "net(np.ones((2, 3), 'float32'))\n"
        "ckpt = tf.train.Checkpoint(net=net)\n"
    ),
    "custom_layer": (
        "class Scale(keras.layers.Layer):\n"
        "    def build(self, input_shape):\n"
        "        self.w = self.add_weight(shape=(input_shape[-1],), name='w')\n"
        "        self.b = self.add_weight(shape=(), initializer='zeros', name='bias')\n"
        "    def call(self, x):\n"
        "        return x * self.w + self.b\n"
        "layer = Scale()\n"
        "layer(np.ones((1, 3), 'float32'))\n"
        "ckpt = tf.train.Checkpoint(layer=layer)\n"
    ),
    "compiled_fit": (
        "model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(4)])\n"
        "model.compile(optimizer='adam', loss='mse')\n"
        "model.fit(np.ones((4, 3), 'float32'), np.ones((4, 4), 'float32'), verbose=0)\n"
        "ckpt = tf.train.Checkpoint(model=model, optimizer=model.optimizer)\n"
    ),
    "compiled_fit_model_only": (
        "inputs = keras.Input((3,))\n"
        "model = keras.Model(inputs, keras.layers.Dense(2)(keras.layers.Dense(4)(inputs)))\n"
        "model.compile(optimizer='rmsprop', loss='mse', metrics=['mae'])\n"
        "model.fit(np.ones((4, 3), 'float32'), np.ones((4, 2), 'float32'), verbose=0)\n"
        "ckpt = tf.train.Checkpoint(model=model)\n"
    ),
    "module": (
        "class MLP(tf.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__(name='mlp')\n"
        "        self.w = tf.Variable(tf.ones([3, 2]), name='w')\n"
        "        self.b = tf.Variable(tf.zeros([2]))\n"
        "        self.extra = {'a': tf.Variable(1.0), 'b': [tf.Variable(2.0)]}\n"
        "        self._private = tf.Variable(3.0)\n"
        "ckpt = tf.train.Checkpoint(mlp=MLP(), step=tf.Variable(1, dtype=tf.int64))\n"
    ),
    "variables_lists_dicts": (
        "ckpt = tf.train.Checkpoint(v=tf.Variable([1.0, 2.0]), "
        "vs=[tf.Variable(1), tf.Variable(2.0)], d={'x': tf.Variable(3.0), "
        "'y/z': tf.Variable(4.0), 'p.q': tf.Variable(5.0)})\n"
    ),
    "nested_checkpoint": (
        "inner = tf.train.Checkpoint(a=tf.Variable(1.0))\n"
        "ckpt = tf.train.Checkpoint(inner=inner, b=tf.Variable(2.0))\n"
    ),
    "root_module": (
        "module = tf.Module()\n"
        "module.v = tf.Variable(1.0)\n"
        "ckpt = tf.train.Checkpoint(module, extra=tf.Variable(2.0))\n"
    ),
    # Optimizers, after two steps of a two-layer model.
    "sgd": _optimizer("SGD()"),
    "sgd_momentum": _optimizer("SGD(momentum=0.9)"),
    "adam": _optimizer("Adam()"),
    "adam_amsgrad": _optimizer("Adam(amsgrad=True)"),
    "adamw": _optimizer("AdamW()"),
    "rmsprop": _optimizer("RMSprop()"),
    "rmsprop_centered_momentum": _optimizer("RMSprop(momentum=0.9, centered=True)"),
    "adagrad": _optimizer("Adagrad()"),
    "adadelta": _optimizer("Adadelta()"),
    "adamax": _optimizer("Adamax()"),
    "nadam": _optimizer("Nadam()"),
    "ftrl": _optimizer("Ftrl()"),
    "lion": _optimizer("Lion()"),
    "adam_schedule": _optimizer(
        "Adam(keras.optimizers.schedules.ExponentialDecay(0.1, decay_steps=10, decay_rate=0.9))"
    ),
    "adam_ema": _optimizer("Adam(use_ema=True)"),
}
