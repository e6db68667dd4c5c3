"""``fit``, ``evaluate``, ``predict`` and the ``*_on_batch`` methods run their step through
``ft.function`` (Keras 3 on TensorFlow wraps it in ``tf.function``) unless
``compile(run_eagerly=True)`` or ``tf.config.run_functions_eagerly(True)``: Python side effects
in a step run once per trace, and the traced loop gives the eager loop's results."""

import copy
import pickle
import warnings

import numpy as np
import pytest

import ferrotape as ft
from ferrotape import keras, polymorphic_function


class Counting(keras.Model):
    """A one-layer regression model counting how often each step's Python body runs."""

    def __init__(self):
        super().__init__()
        self.dense = keras.layers.Dense(1)
        self.counts = {"train": 0, "test": 0, "predict": 0}

    def call(self, x):
        return self.dense(x)

    def train_step(self, data):
        self.counts["train"] += 1
        return super().train_step(data)

    def test_step(self, data):
        self.counts["test"] += 1
        return super().test_step(data)

    def predict_step(self, data):
        self.counts["predict"] += 1
        return super().predict_step(data)


def regression(n):
    x = np.random.default_rng(0).normal(size=(n, 3)).astype("float32")
    return x, x.sum(axis=1, keepdims=True)


# A refused trace warns (RuntimeWarning) and runs eagerly, which would hide what is tested here.
NO_EAGER_FALLBACK = pytest.mark.filterwarnings("error::RuntimeWarning")


@pytest.fixture
def eager_functions_reset():
    yield
    ft.config.run_functions_eagerly(False)


def test_run_eagerly_is_compiles_argument_and_settable():
    model = Counting()
    assert model.run_eagerly is False
    model.compile("sgd", "mse", run_eagerly=True)
    assert model.run_eagerly is True
    model.compile("sgd", "mse")
    assert model.run_eagerly is False
    model.run_eagerly = True
    x, y = regression(64)
    model.fit(x, y, batch_size=32, epochs=2, verbose=0)
    assert model.counts["train"] == 4  # set before the loop made its function: eager


@pytest.mark.parametrize(
    ("samples", "traces"),
    [(64, 1), (80, 2)],  # 80 = 32 + 32 + 16: the smaller last batch traces once more
)
def test_side_effects_in_the_steps_run_once_per_trace(samples, traces):
    x, y = regression(samples)
    model = Counting()
    model.compile("sgd", "mse")
    model.fit(x, y, batch_size=32, epochs=3, verbose=0)
    model.evaluate(x, y, batch_size=32, verbose=0)
    model.predict(x, batch_size=32, verbose=0)
    assert model.counts == {"train": traces, "test": traces, "predict": traces}
    model.fit(x, y, batch_size=32, epochs=2, verbose=0)  # the same function: no new trace
    for _ in range(3):
        model.train_on_batch(x[:32], y[:32])
        model.test_on_batch(x[:32], y[:32])
        model.predict_on_batch(x[:32])
    assert model.counts == {"train": traces, "test": traces, "predict": traces}
    model.compile("sgd", "mse")  # a new compile makes (and traces) new functions
    model.train_on_batch(x[:32], y[:32])
    assert model.counts["train"] == traces + 1


def test_run_eagerly_runs_the_steps_on_every_batch():
    x, y = regression(80)
    model = Counting()
    model.compile("sgd", "mse", run_eagerly=True)
    model.fit(x, y, batch_size=32, epochs=2, verbose=0)
    model.evaluate(x, y, batch_size=32, verbose=0)
    model.predict(x, batch_size=32, verbose=0)
    model.train_on_batch(x[:32], y[:32])
    assert model.counts == {"train": 7, "test": 3, "predict": 3}
    assert not isinstance(model.train_function, polymorphic_function.Function)


def test_run_functions_eagerly_runs_the_steps_on_every_batch(eager_functions_reset):
    x, y = regression(64)
    model = Counting()
    model.compile("sgd", "mse")
    ft.config.run_functions_eagerly(True)
    model.fit(x, y, batch_size=32, epochs=2, verbose=0)
    assert model.counts["train"] == 4
    ft.config.run_functions_eagerly(False)
    model.fit(x, y, batch_size=32, epochs=2, verbose=0)
    assert model.counts["train"] == 5  # traced now: once


def mlp():
    return keras.Sequential(
        [
            keras.Input((6,)),
            keras.layers.Dense(16, activation="relu"),
            keras.layers.Dropout(0.3),
            keras.layers.Dense(3, activation="softmax"),
        ]
    )


def cnn():
    return keras.Sequential(
        [
            keras.Input((8, 8, 1)),
            keras.layers.ZeroPadding2D(1),  # pad and its gradient replay with their positions
            keras.layers.Conv2D(4, 3, activation="relu"),
            keras.layers.BatchNormalization(momentum=0.8),
            keras.layers.MaxPooling2D(),
            keras.layers.Flatten(),
            keras.layers.Dropout(0.4),
            keras.layers.GaussianNoise(0.1),  # drawn by keras.random on the host
            keras.layers.Dense(3, activation="softmax"),
        ]
    )


class LogRecorder(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.batches, self.epochs = [], []

    def on_train_batch_end(self, batch, logs=None):
        self.batches.append(dict(logs))

    def on_epoch_end(self, epoch, logs=None):
        self.epochs.append(dict(logs))


def train(build, run_eagerly, x, y):
    keras.utils.set_random_seed(7)
    model = build()
    schedule = keras.optimizers.schedules.CosineDecay(0.01, decay_steps=12)
    model.compile(
        keras.optimizers.Adam(schedule),
        "sparse_categorical_crossentropy",
        metrics=["accuracy", keras.metrics.SparseCategoricalCrossentropy(name="xent")],
        run_eagerly=run_eagerly,
    )
    recorder = LogRecorder()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the traced step must not fall back to eager
        history = model.fit(
            x,
            y,
            batch_size=16,
            epochs=3,
            verbose=0,
            validation_split=0.25,
            callbacks=[recorder],
        )
        evaluation = model.evaluate(x, y, batch_size=16, verbose=0, return_dict=True)
        predictions = model.predict(x, batch_size=16, verbose=0)
    return model, history.history, recorder, evaluation, predictions


@pytest.mark.parametrize("build", [mlp, cnn])
def test_traced_fit_gives_the_eager_results(build):
    rng = np.random.default_rng(3)
    shape = (6,) if build is mlp else (8, 8, 1)
    x = rng.normal(size=(72, *shape)).astype("float32")  # 54 to train: batches 16, 16, 16, 6
    y = rng.integers(0, 3, size=72)
    eager = train(build, True, x, y)
    traced = train(build, False, x, y)
    assert isinstance(traced[0].train_function, polymorphic_function.Function)
    assert traced[0].train_function.experimental_get_tracing_count() == 2
    for a, b in zip(eager[0].weights, traced[0].weights, strict=True):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-6)
    names = {"loss", "accuracy", "xent", "val_loss", "val_accuracy", "val_xent"}
    assert eager[1].keys() == traced[1].keys() == names
    for key in eager[1]:
        np.testing.assert_allclose(eager[1][key], traced[1][key], rtol=1e-5, atol=1e-6)
    assert len(eager[2].batches) == len(traced[2].batches) == 12
    for a, b in zip(
        eager[2].batches + eager[2].epochs, traced[2].batches + traced[2].epochs, strict=True
    ):
        assert a.keys() == b.keys()
        np.testing.assert_allclose([a[k] for k in a], [b[k] for k in a], rtol=1e-5, atol=1e-6)
    for key in eager[3]:
        assert eager[3][key] == pytest.approx(traced[3][key], rel=1e-5, abs=1e-6)
    np.testing.assert_allclose(eager[4], traced[4], rtol=1e-5, atol=1e-6)
    # The optimizer stepped once per batch and the schedule followed it.
    assert int(traced[0].optimizer.iterations.numpy()) == 12


@NO_EAGER_FALLBACK
def test_a_traced_step_draws_new_dropout_and_noise_each_call():
    layers = [
        keras.layers.Dropout(0.5),
        keras.layers.GaussianNoise(1.0),
        keras.layers.GaussianDropout(0.5),
        keras.layers.AlphaDropout(0.5),
    ]
    x = ft.ones([4, 32])
    for layer in layers:
        step = ft.function(lambda x, layer=layer: layer(x, training=True))
        first, second, third = (step(x).numpy() for _ in range(3))
        assert step.experimental_get_tracing_count() == 1
        assert not np.array_equal(first, second), layer
        assert not np.array_equal(second, third), layer


@NO_EAGER_FALLBACK
def test_keras_random_in_a_trace_follows_the_seed_generators_eager_stream():
    def draws(traced):
        generator = keras.random.SeedGenerator(11)

        def sample(x):
            return (
                keras.random.dropout(x, 0.5, seed=generator),
                keras.random.normal([3], seed=generator),
                keras.random.randint([2], 0, 100, seed=generator),
                keras.random.uniform([2], seed=5),  # an int seed: the same every call
            )

        call = ft.function(sample) if traced else sample
        return [[t.numpy() for t in call(ft.ones([6]))] for _ in range(3)]

    eager, traced = draws(False), draws(True)
    for a, b in zip(eager, traced, strict=True):
        for u, v in zip(a, b, strict=True):
            np.testing.assert_array_equal(u, v)
    assert not np.array_equal(traced[0][1], traced[1][1])
    np.testing.assert_array_equal(traced[0][3], traced[2][3])


class HostReading(keras.Model):
    """A train step that reads the loss into Python: it cannot be traced."""

    def __init__(self):
        super().__init__()
        self.dense = keras.layers.Dense(1)
        self.seen = []

    def call(self, x):
        return self.dense(x)

    def train_step(self, data):
        logs = super().train_step(data)
        self.seen.append(float(logs["loss"]))
        return logs


def test_an_untraceable_step_warns_once_and_gives_the_eager_results():
    x, y = regression(80)
    results = {}
    for run_eagerly in (True, False):
        keras.utils.set_random_seed(1)
        model = HostReading()
        model.compile("sgd", "mse", metrics=["mae"], run_eagerly=run_eagerly)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            history = model.fit(x, y, batch_size=32, epochs=3, verbose=0)
            model.fit(x, y, batch_size=32, epochs=1, verbose=0)
        messages = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
        results[run_eagerly] = (history.history, model.seen, model.get_weights(), messages)
    eager, traced = results[True], results[False]
    assert eager[3] == []
    assert len(traced[3]) == 1, traced[3]  # one warning, though each shape traced once
    assert "HostReading.train_step runs eagerly" in traced[3][0]
    assert "float() or int() reads a traced float32 tensor's value" in traced[3][0]
    assert len(traced[1]) == len(eager[1]) == 12  # the Python line ran on every batch
    np.testing.assert_allclose(traced[1], eager[1], rtol=1e-6)
    assert traced[0] == eager[0]
    for a, b in zip(eager[2], traced[2], strict=True):
        np.testing.assert_array_equal(a, b)


@NO_EAGER_FALLBACK
def test_metrics_updated_inside_a_trace_accumulate_on_every_replay():
    values = np.array([[1.0, 2.0], [3.0, 5.0], [0.5, 0.25]], "float32")
    weights = np.array([1.0, 0.0, 2.0], "float32")
    eager_mean, traced_mean = keras.metrics.Mean(), keras.metrics.Mean()
    eager_sum, traced_sum = keras.metrics.Sum(), keras.metrics.Sum()
    eager_mae, traced_mae = (keras.metrics.MeanAbsoluteError() for _ in range(2))

    @ft.function
    def update(v, w):
        traced_mean.update_state(v, sample_weight=w)
        traced_sum.update_state(v)
        traced_mae.update_state(v, v * 0.5, sample_weight=w)
        return traced_mean.result(), traced_sum.result(), traced_mae.result()

    for scale in (1.0, 2.0, -1.0):
        v, w = values * scale, weights + scale
        eager_mean.update_state(v, sample_weight=w)
        eager_sum.update_state(v)
        eager_mae.update_state(v, v * 0.5, sample_weight=w)
        results = update(ft.constant(v), ft.constant(w))
        expected = (eager_mean.result(), eager_sum.result(), eager_mae.result())
        np.testing.assert_allclose(
            [float(r) for r in results], [float(e) for e in expected], rtol=1e-6
        )
    assert update.experimental_get_tracing_count() == 1
    # Hand-computed: the weighted mean of the per-row means over the three updates.
    rows = values.mean(axis=1)
    total = sum((rows * s * (weights + s)).sum() for s in (1.0, 2.0, -1.0))
    count = sum((weights + s).sum() for s in (1.0, 2.0, -1.0))
    assert float(traced_mean.result()) == pytest.approx(total / count, rel=1e-6)
    assert float(traced_sum.result()) == pytest.approx(values.sum() * 2.0, rel=1e-6)


@NO_EAGER_FALLBACK
def test_a_traced_optimizer_step_follows_its_schedule():
    schedule = keras.optimizers.schedules.PiecewiseConstantDecay([1, 2], [1.0, 0.5, 0.25])
    variable = ft.Variable([1.0])
    optimizer = keras.optimizers.SGD(schedule)

    @ft.function
    def step():
        optimizer.apply_gradients([(ft.constant([1.0]), variable)])

    values = []
    for _ in range(4):
        step()
        values.append(float(variable.numpy()[0]))
    assert step.experimental_get_tracing_count() == 1
    # Rates 1.0 at iterations 0 and 1 (step <= 1), 0.5 at 2, 0.25 after: a rate baked in at
    # trace time would give -1, -2, -3 instead.
    assert values == [0.0, -1.0, -1.5, -1.75]


def test_compile_makes_new_step_functions():
    x, y = regression(32)
    model = Counting()
    model.compile("sgd", "mse")
    assert model.train_function is None
    model.fit(x, y, verbose=0)
    first = model.train_function
    assert isinstance(first, polymorphic_function.Function)
    assert model.make_train_function() is first
    assert model.make_train_function(force=True) is not first
    model.compile("adam", "mse")
    assert model.train_function is model.test_function is model.predict_function is None


@pytest.mark.parametrize(
    "duplicate",
    [copy.deepcopy, lambda m: pickle.loads(pickle.dumps(m))],
    ids=["deepcopy", "pickle"],
)
def test_a_fitted_model_copies_and_its_copy_traces_its_own_steps(duplicate):
    x, y = regression(64)
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
    model.compile("sgd", "mse")
    model.fit(x, y, batch_size=32, verbose=0)
    twin = duplicate(model)
    assert twin.train_function is None  # a cache of the original's traces: not copied
    assert twin.evaluate(x, y, verbose=0) == model.evaluate(x, y, verbose=0)
    before = [w.copy() for w in model.get_weights()]
    twin.fit(x, y, batch_size=32, verbose=0)
    assert isinstance(twin.train_function, polymorphic_function.Function)
    assert twin.train_function is not model.train_function
    for a, b in zip(before, model.get_weights(), strict=True):
        np.testing.assert_array_equal(a, b)  # the copy trained its own variables
    assert any(not np.array_equal(a, b) for a, b in zip(before, twin.get_weights(), strict=True))


@NO_EAGER_FALLBACK
def test_metrics_computed_on_the_host_are_replayed_with_the_step():
    # AUC, precision, recall, F1, IoU and R² reduce with numpy on the host: inside the traced
    # step each update and result is a host callback run on every replay, in order.
    rng = np.random.default_rng(5)
    x = rng.normal(size=(70, 4)).astype("float32")
    y = (x[:, :1] + 0.5 * x[:, 1:2] > 0).astype("float32")

    def train(run_eagerly):
        keras.utils.set_random_seed(2)
        model = keras.Sequential(
            [
                keras.Input((4,)),
                keras.layers.Dense(8, activation="relu"),
                keras.layers.Dense(1, activation="sigmoid"),
            ]
        )
        model.compile(
            keras.optimizers.Adam(0.05),
            "binary_crossentropy",
            metrics=[
                keras.metrics.AUC(name="auc"),
                keras.metrics.AUC(curve="PR", name="pr_auc"),
                keras.metrics.Precision(name="precision"),
                keras.metrics.Recall(thresholds=[0.3, 0.7], name="recall"),
                keras.metrics.F1Score(threshold=0.5, name="f1"),
                keras.metrics.BinaryIoU(name="iou"),
                keras.metrics.R2Score(name="r2"),
                keras.metrics.TruePositives(name="tp"),
            ],
            run_eagerly=run_eagerly,
        )
        history = model.fit(x, y, batch_size=16, epochs=3, verbose=0)
        return (
            model,
            history.history,
            model.evaluate(x, y, batch_size=16, verbose=0, return_dict=True),
        )

    eager, traced = train(True), train(False)
    assert traced[0].train_function.experimental_get_tracing_count() == 2  # 16, then 6 rows
    assert eager[1].keys() == traced[1].keys()
    for key in eager[1]:
        np.testing.assert_allclose(traced[1][key], eager[1][key], rtol=1e-5, atol=1e-6, err_msg=key)
    for key in eager[2]:
        np.testing.assert_allclose(traced[2][key], eager[2][key], rtol=1e-5, atol=1e-6, err_msg=key)


def fit_eagerly_and_traced(make_optimizer):
    """A small regression model fitted for two epochs eagerly, then traced, from the same
    seed: ``[(model, losses)]`` of each run."""
    x, y = regression(70)
    runs = []
    for run_eagerly in (True, False):
        keras.utils.set_random_seed(4)
        model = keras.Sequential(
            [keras.Input((3,)), keras.layers.Dense(4, activation="relu"), keras.layers.Dense(1)]
        )
        model.compile(make_optimizer(), "mse", run_eagerly=run_eagerly)
        history = model.fit(x, y, batch_size=16, epochs=2, verbose=0)
        runs.append((model, history.history["loss"]))
    return runs


PYTHON_STEP_OPTIMIZERS = {
    # Weight decay and moving averages of native rules replay without a callback (see the
    # test after this one); with a Python step they are part of it.
    "Nadam weight_decay": lambda: keras.optimizers.Nadam(0.01, weight_decay=0.01),
    "Nadam use_ema": lambda: keras.optimizers.Nadam(0.01, use_ema=True),
    "Nadam": lambda: keras.optimizers.Nadam(0.01),
    "Lion": lambda: keras.optimizers.Lion(0.001),
    "SGD legacy decay": lambda: keras.optimizers.SGD(lr=0.05, decay=0.1),
}


@NO_EAGER_FALLBACK
@pytest.mark.parametrize("name", PYTHON_STEP_OPTIMIZERS)
def test_optimizers_with_a_python_step_are_replayed_with_the_traced_step(name):
    # Weight decay, moving averages, legacy decay and Python update_steps read the step number
    # and the learning rate into Python: the optimizer step is a host callback of the replay.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # the legacy lr= and decay=
        (eager, eager_loss), (traced, traced_loss) = fit_eagerly_and_traced(
            PYTHON_STEP_OPTIMIZERS[name]
        )
    assert traced.train_function.experimental_get_tracing_count() == 2
    np.testing.assert_allclose(traced_loss, eager_loss, rtol=1e-5, atol=1e-6)
    for a, b in zip(eager.weights, traced.weights, strict=True):
        np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=1e-5, atol=1e-6)
    assert int(traced.optimizer.iterations.numpy()) == 10


@NO_EAGER_FALLBACK
@pytest.mark.parametrize(
    "make",
    [
        lambda: keras.optimizers.AdamW(0.01, weight_decay=0.05),
        lambda: keras.optimizers.SGD(0.05, momentum=0.9, weight_decay=0.05),
        lambda: keras.optimizers.RMSprop(0.01, weight_decay=0.05),
        lambda: keras.optimizers.Adam(0.01, use_ema=True),
        lambda: keras.optimizers.AdamW(0.01, use_ema=True, ema_overwrite_frequency=3),
    ],
    ids=["AdamW", "SGD", "RMSprop", "Adam use_ema", "AdamW use_ema overwrite"],
)
def test_weight_decay_and_moving_averages_replay_without_python_in_a_trace(make):
    # The decay runs inside the optimizer's native call (with its exclusions), the moving
    # averages are tensor arithmetic on `iterations` (the overwrite a branch on it): the
    # replayed step calls no Python, and gives the eager step's weights.
    def make_excluding_biases():
        optimizer = make()
        optimizer.exclude_from_weight_decay(var_names=["bias"])
        return optimizer

    (eager, _), (traced, _) = fit_eagerly_and_traced(make_excluding_biases)
    for a, b in zip(eager.weights, traced.weights, strict=True):
        np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=1e-5, atol=1e-6)
    x, y = regression(70)
    batch = (ft.constant(x[:16], ft.float32), ft.constant(y[:16], ft.float32))
    names = traced.train_function.get_concrete_function(batch).graph.node_names()
    assert "OptimizerStep" in names and "HostCallback" not in names, names
