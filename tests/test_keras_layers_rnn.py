"""SimpleRNN, LSTM, GRU (both reset_after forms), RNN over custom and stacked cells,
Bidirectional: values against numpy loops over the steps, Keras's weight shapes and order,
masks, go_backwards, return_state, stateful layers, dropout per sequence, float64
finite-difference gradients (through time), get_config round trips and bad arguments."""

import numpy as np
import pytest
from test_keras_layers import check_input_gradient, check_weight_gradients, rand

import ferrotape as ft
from ferrotape.keras import layers


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def simple_step(x, states, w):
    kernel, recurrent, bias = w
    h = np.tanh(x @ kernel + bias + states[0] @ recurrent)
    return h, [h]


def lstm_step(x, states, w):
    kernel, recurrent, bias = w
    h, c = states
    i, f, g, o = np.split(x @ kernel + h @ recurrent + bias, 4, axis=-1)
    c = sigmoid(f) * c + sigmoid(i) * np.tanh(g)
    h = sigmoid(o) * np.tanh(c)
    return h, [h, c]


def gru_step(x, states, w, reset_after=True):
    kernel, recurrent, bias = w
    h = states[0]
    u = h.shape[-1]
    b_in, b_rec = (bias[0], bias[1]) if reset_after else (bias, np.zeros_like(bias))
    xz, xr, xh = np.split(x @ kernel + b_in, 3, axis=-1)
    rz, rr = np.split(h @ recurrent[:, : 2 * u] + b_rec[: 2 * u], 2, axis=-1)
    z, r = sigmoid(xz + rz), sigmoid(xr + rr)
    if reset_after:
        inner = r * (h @ recurrent[:, 2 * u :] + b_rec[2 * u :])
    else:
        inner = (r * h) @ recurrent[:, 2 * u :]
    h = z * h + (1 - z) * np.tanh(xh + inner)
    return h, [h]


def run_ref(step, x, w, n_states, units, mask=None, backwards=False, zero_masked=False):
    states = [np.zeros((x.shape[0], units))] * n_states
    outputs, previous = [], np.zeros((x.shape[0], units))
    order = range(x.shape[1] - 1, -1, -1) if backwards else range(x.shape[1])
    for t in order:
        out, new = step(x[:, t], states, w)
        if mask is not None:
            keep = mask[:, t : t + 1]
            new = [np.where(keep, n, s) for n, s in zip(new, states, strict=True)]
            out = np.where(keep, out, 0.0 if zero_masked else previous)
        states, previous = new, out
        outputs.append(out)
    return np.stack(outputs, 1), states


def weights(layer):
    return [v.numpy() for v in layer.weights]


MASK = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], bool)


@pytest.mark.parametrize(
    "make, step, n_states, shapes",
    [
        (lambda **k: layers.SimpleRNN(4, **k), simple_step, 1, [[3, 4], [4, 4], [4]]),
        (lambda **k: layers.LSTM(4, **k), lstm_step, 2, [[3, 16], [4, 16], [16]]),
        (lambda **k: layers.GRU(4, **k), gru_step, 1, [[3, 12], [4, 12], [2, 12]]),
        (
            lambda **k: layers.GRU(4, reset_after=False, **k),
            lambda x, s, w: gru_step(x, s, w, reset_after=False),
            1,
            [[3, 12], [4, 12], [12]],
        ),
    ],
)
@pytest.mark.parametrize("variant", ["last", "sequences_masked", "backwards_state"])
def test_recurrent_layers_match_numpy(make, step, n_states, shapes, variant):
    kwargs = {"dtype": "float64", "bias_initializer": "random_normal"}
    if variant == "sequences_masked":
        kwargs["return_sequences"] = True
    if variant == "backwards_state":
        kwargs.update(go_backwards=True, return_state=True, return_sequences=True)
    layer = make(**kwargs)
    x = rand(2, 5, 3)
    mask = MASK if variant == "sequences_masked" else None
    out = layer(x, mask=mask)
    assert [w.shape.as_list() for w in layer.weights] == shapes
    assert [w.name.split("/")[-1].split(":")[0] for w in layer.weights] == [
        "kernel",
        "recurrent_kernel",
        "bias",
    ]
    ref, states = run_ref(step, x, weights(layer), n_states, 4, mask, variant == "backwards_state")
    if variant == "last":
        np.testing.assert_allclose(out.numpy(), ref[:, -1], rtol=1e-10)
    elif variant == "sequences_masked":
        np.testing.assert_allclose(out.numpy(), ref, rtol=1e-10)
        # A masked step repeats the last unmasked output.
        np.testing.assert_array_equal(out.numpy()[0, 3], out.numpy()[0, 2])
    else:
        np.testing.assert_allclose(out[0].numpy(), ref, rtol=1e-10)
        assert len(out) == 1 + n_states
        for got, want in zip(out[1:], states, strict=True):
            np.testing.assert_allclose(got.numpy(), want, rtol=1e-10)


def test_lstm_starts_the_forget_gate_bias_at_one():
    layer = layers.LSTM(3)
    layer(ft.zeros([1, 2, 2]))
    np.testing.assert_array_equal(layer.cell.bias.numpy(), [0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 0, 0])
    plain = layers.LSTM(3, unit_forget_bias=False)
    plain(ft.zeros([1, 2, 2]))
    np.testing.assert_array_equal(plain.cell.bias.numpy(), 0.0)


@pytest.mark.parametrize(
    "make",
    [
        lambda: layers.SimpleRNN(3, return_sequences=True),
        lambda: layers.LSTM(2),
        lambda: layers.GRU(2, return_sequences=True),
        lambda: layers.Bidirectional(layers.LSTM(2, return_sequences=True)),
    ],
)
def test_gradients_through_time(make):
    ft.keras.backend.set_floatx("float64")
    try:
        layer = make()
    finally:
        ft.keras.backend.set_floatx("float32")
    x = rand(2, 4, 3)
    check_input_gradient(layer, x)
    check_weight_gradients(layer, x)


def test_initial_state_and_stateful_layers():
    layer = layers.GRU(3, dtype="float64")
    x = rand(2, 6, 2)
    whole = layer(x).numpy()
    first = layers.GRU(3, return_state=True, dtype="float64")
    first(x[:, :3])
    first.set_weights(layer.get_weights())
    _, h = first(x[:, :3])
    np.testing.assert_allclose(layer(x[:, 3:], initial_state=h).numpy(), whole, rtol=1e-10)
    stateful = layers.GRU(3, stateful=True, dtype="float64")
    stateful(x[:, :3])
    stateful.set_weights(layer.get_weights())
    stateful.reset_states()
    stateful(x[:, :3])
    np.testing.assert_allclose(stateful(x[:, 3:]).numpy(), whole, rtol=1e-10)
    stateful.reset_states()
    np.testing.assert_allclose(stateful(x[:, :3]).numpy(), layer(x[:, :3]).numpy(), rtol=1e-10)


@pytest.mark.parametrize("kind", ["SimpleRNN", "LSTM", "GRU"])
def test_a_stateful_layer_carries_its_states_through_a_traced_function(kind):
    # The states live in variables (as Keras 3's, not among the weights), so each replay of a
    # traced call starts from the last call's states, and reset_states reaches the replays.
    x = rand(2, 6, 2)
    layer = getattr(layers, kind)(3, stateful=True, dtype="float64")
    eager = [layer(x[:, :3]).numpy(), layer(x[:, 3:]).numpy()]
    layer.reset_states()
    compiled = ft.function(lambda t: layer(t))
    for _ in range(2):  # the second round replays after a reset
        np.testing.assert_allclose(compiled(x[:, :3]).numpy(), eager[0], rtol=1e-12)
        np.testing.assert_allclose(compiled(x[:, 3:]).numpy(), eager[1], rtol=1e-12)
        layer.reset_states()
    assert compiled.experimental_get_tracing_count() == 1
    assert all(isinstance(s, ft.Variable) for s in layer.states)
    assert len(layer.weights) == 3  # kernel, recurrent kernel, bias
    with pytest.raises(ValueError, match="Expected batch size: 2. Received batch size: 3"):
        layer(rand(3, 6, 2))


class MinimalCell(layers.Layer):
    """Keras's documentation example of a custom cell."""

    def __init__(self, units, **kwargs):
        super().__init__(**kwargs)
        self.units = units
        self.state_size = units

    def build(self, input_shape):
        self.kernel = self.add_weight(shape=(input_shape[-1], self.units), name="kernel")
        self.recurrent_kernel = self.add_weight(shape=(self.units, self.units), name="rk")

    def call(self, inputs, states):
        prev = states[0] if isinstance(states, (list, tuple)) else states
        output = ft.matmul(inputs, self.kernel) + ft.matmul(prev, self.recurrent_kernel)
        return output, [output]

    def get_initial_state(self, batch_size=None):
        return [ft.zeros([batch_size, self.units], dtype=self.compute_dtype)]


def test_rnn_over_a_custom_cell_and_stacked_cells():
    layer = layers.RNN(MinimalCell(3, dtype="float64"), return_sequences=True, dtype="float64")
    x = rand(2, 4, 2)
    out = layer(x).numpy()
    k, rk = weights(layer)
    h, expected = np.zeros((2, 3)), []
    for t in range(4):
        h = x[:, t] @ k + h @ rk
        expected.append(h)
    np.testing.assert_allclose(out, np.stack(expected, 1), rtol=1e-10)
    stacked = layers.RNN(
        [layers.LSTMCell(3, dtype="float64"), layers.SimpleRNNCell(2, dtype="float64")],
        return_state=True,
        dtype="float64",
    )
    output, lstm_states, rnn_state = stacked(x)
    w = weights(stacked)
    seq, lstm_ref = run_ref(lstm_step, x, w[:3], 2, 3)
    seq2, _ = run_ref(simple_step, seq, w[3:], 1, 2)
    np.testing.assert_allclose(output.numpy(), seq2[:, -1], rtol=1e-10)
    np.testing.assert_allclose(lstm_states[1].numpy(), lstm_ref[1], rtol=1e-10)
    np.testing.assert_allclose(rnn_state[0].numpy(), seq2[:, -1], rtol=1e-10)


@pytest.mark.parametrize("merge_mode", ["concat", "sum", "mul", "ave", None])
def test_bidirectional_merges_forward_and_reversed_backward(merge_mode):
    layer = layers.Bidirectional(
        layers.SimpleRNN(3, return_sequences=True, dtype="float64"),
        merge_mode=merge_mode,
        dtype="float64",
    )
    x = rand(2, 5, 2)
    out = layer(x, mask=MASK)
    assert layer.forward_layer.name.startswith("forward_")
    assert layer.backward_layer.name.startswith("backward_") and layer.backward_layer.go_backwards
    w = weights(layer)
    fwd, _ = run_ref(simple_step, x, w[:3], 1, 3, MASK, zero_masked=True)
    bwd, _ = run_ref(simple_step, x, w[3:], 1, 3, MASK, backwards=True, zero_masked=True)
    bwd = bwd[:, ::-1]
    expected = {
        "concat": np.concatenate([fwd, bwd], -1),
        "sum": fwd + bwd,
        "mul": fwd * bwd,
        "ave": (fwd + bwd) / 2,
    }
    if merge_mode is None:
        np.testing.assert_allclose(out[0].numpy(), fwd, rtol=1e-10)
        np.testing.assert_allclose(out[1].numpy(), bwd, rtol=1e-10)
    else:
        np.testing.assert_allclose(out.numpy(), expected[merge_mode], rtol=1e-10)


def test_bidirectional_return_state():
    layer = layers.Bidirectional(layers.LSTM(2, return_state=True))
    out = layer(ft.ones([2, 4, 3]))
    assert len(out) == 5 and out[0].shape.as_list() == [2, 4]
    assert all(s.shape.as_list() == [2, 2] for s in out[1:])


def test_recurrent_dropout_uses_one_mask_per_sequence():
    layer = layers.SimpleRNN(
        6,
        dropout=0.5,
        recurrent_dropout=0.5,
        seed=1,
        return_sequences=True,
        kernel_initializer=ft.keras.initializers.RandomNormal(seed=3),
        recurrent_initializer="zeros",
    )
    # 16 inputs: two draws of the mask coincide with probability 2**-16.
    x = ft.fill([1, 4, 16], 0.05)
    inference = layer(x).numpy()
    trained = layer(x, training=True).numpy()
    assert not np.allclose(inference, trained)
    # With a zero recurrent kernel each step sees the same dropped inputs: equal outputs.
    np.testing.assert_allclose(trained[0, 0], trained[0, 3])
    again = layer(x, training=True).numpy()
    assert not np.allclose(trained, again)  # a new sequence, a new mask


@pytest.mark.parametrize(
    "make",
    [
        lambda: layers.SimpleRNN(3, return_sequences=True, go_backwards=True, dropout=0.1),
        lambda: layers.LSTM(4, recurrent_activation="hard_sigmoid", unit_forget_bias=False),
        lambda: layers.GRU(2, reset_after=False, return_state=True, stateful=True),
        lambda: layers.SimpleRNNCell(3, recurrent_dropout=0.2),
        lambda: layers.LSTMCell(3),
        lambda: layers.GRUCell(3, reset_after=False),
        lambda: layers.RNN(layers.LSTMCell(3), return_sequences=True),
        lambda: layers.RNN([layers.GRUCell(2), layers.LSTMCell(3)]),
        lambda: layers.Bidirectional(layers.GRU(3, return_sequences=True), merge_mode="sum"),
    ],
)
def test_get_config_round_trips(make):
    layer = make()
    config = layer.get_config()
    assert type(layer).from_config(config).get_config() == config


def test_bad_arguments_raise_value_error():
    with pytest.raises(ValueError, match="units"):
        layers.LSTM(0)
    with pytest.raises(ValueError, match="dropout"):
        layers.GRU(2, dropout="x")
    with pytest.raises(ValueError, match="state_size"):
        layers.RNN(layers.Dense(3))
    with pytest.raises(ValueError, match="merge mode"):
        layers.Bidirectional(layers.LSTM(2), merge_mode="max")
    with pytest.raises(ValueError, match="Layer"):
        layers.Bidirectional("lstm")
    with pytest.raises(ValueError, match="go_backwards"):
        layers.Bidirectional(layers.LSTM(2), backward_layer=layers.LSTM(2))
    with pytest.raises(ValueError, match="rank >= 3"):
        layers.LSTM(2)(ft.ones([2, 3]))


# ------------------------------------------------------------------------- ConvLSTM


def test_conv_lstm2d_matches_numpy_convolutions():
    from test_keras_layers_conv_pooling import conv_ref

    layer = layers.ConvLSTM2D(
        3,
        3,
        padding="same",
        return_sequences=True,
        bias_initializer="random_normal",
        dtype="float64",
    )
    x = rand(2, 3, 4, 5, 2)
    out = layer(x).numpy()
    kernel, recurrent, bias = weights(layer)
    assert kernel.shape == (3, 3, 2, 12) and recurrent.shape == (3, 3, 3, 12)
    h = c = np.zeros((2, 4, 5, 3))
    expected = []
    for t in range(3):
        z = conv_ref(x[:, t], kernel, (1, 1), "same", (1, 1))
        z = z + conv_ref(h, recurrent, (1, 1), "same", (1, 1)) + bias
        i, f, g, o = np.split(z, 4, axis=-1)
        c = sigmoid(f) * c + sigmoid(i) * np.tanh(g)
        h = sigmoid(o) * np.tanh(c)
        expected.append(h)
    np.testing.assert_allclose(out, np.stack(expected, 1), rtol=1e-10)


@pytest.mark.parametrize(
    "make, shape, out_shape",
    [
        (lambda: layers.ConvLSTM1D(2, 3, strides=2, padding="same"), (2, 3, 8, 2), [2, 4, 2]),
        (lambda: layers.ConvLSTM2D(2, 3), (1, 2, 5, 6, 1), [1, 3, 4, 2]),
        (
            lambda: layers.ConvLSTM3D(2, 2, return_sequences=True),
            (1, 2, 3, 3, 3, 1),
            [1, 2, 2, 2, 2, 2],
        ),
    ],
)
def test_conv_lstm_shapes_gradients_and_configs(make, shape, out_shape):
    ft.keras.backend.set_floatx("float64")
    try:
        layer = make()
    finally:
        ft.keras.backend.set_floatx("float32")
    x = rand(*shape)
    assert layer(x).shape.as_list() == out_shape
    check_input_gradient(layer, x)
    check_weight_gradients(layer, x)
    config = layer.get_config()
    assert type(layer).from_config(config).get_config() == config


def test_conv_lstm_bad_arguments():
    with pytest.raises(ValueError, match="filters"):
        layers.ConvLSTM2D(0, 3)
    with pytest.raises(ValueError, match="kernel_size"):
        layers.ConvLSTM2D(2, (3, 3, 3))
    with pytest.raises(ValueError, match="expected ndim=5"):
        layers.ConvLSTM2D(2, 3)(ft.ones([1, 2, 5, 1]))
