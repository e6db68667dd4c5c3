"""The device API: ``ft.config``'s device lists, ``ft.device`` placement, ``.device`` strings.

The first tests run on every build. The GPU tests need an extension built with the ``gpu``
feature and an adapter (CI: Mesa's lavapipe with ``FERROTAPE_GPU_ALLOW_SOFTWARE=1``, see
scripts/test.sh); elsewhere they skip.
"""

import os
import subprocess
import sys

import numpy as np
import pytest

import ferrotape as ft

CPU = "/job:localhost/replica:0/task:0/device:CPU:0"
GPU = "/job:localhost/replica:0/task:0/device:GPU:0"

if os.environ.get("FERROTAPE_GPU_REQUIRE") == "1" and not ft.config.list_physical_devices("GPU"):
    # scripts/test.sh's GPU run: skipping there would hide a broken build or driver.
    raise RuntimeError("FERROTAPE_GPU_REQUIRE=1 but ferrotape lists no GPU")

needs_gpu = pytest.mark.skipif(
    not ft.config.list_physical_devices("GPU"),
    reason="no GPU: the extension was built without the gpu feature, or no adapter was found",
)


@pytest.fixture
def hard_placement():
    ft.config.set_soft_device_placement(False)
    yield
    ft.config.set_soft_device_placement(True)


def test_the_cpu_is_always_listed_first():
    physical = ft.config.list_physical_devices()
    assert physical[0] == ft.config.PhysicalDevice("/physical_device:CPU:0", "CPU")
    logical = ft.config.list_logical_devices()
    assert logical[0] == ft.config.LogicalDevice("/device:CPU:0", "CPU")
    gpus = ft.config.list_physical_devices("gpu")
    assert [d.name for d in gpus] == [f"/physical_device:GPU:{i}" for i in range(len(gpus))]
    assert len(ft.config.list_logical_devices("GPU")) == len(gpus)


def test_tensors_made_outside_any_scope_live_on_the_cpu():
    x = ft.constant([1.0, 2.0])
    v = ft.Variable([1.0])
    assert x.device == CPU
    assert v.device == CPU
    with ft.device("/cpu:0"):
        assert (x + 1).device == CPU


@pytest.mark.parametrize(
    "name",
    ["/CPU:0", "CPU:0", "/device:CPU:0", "/job:localhost/replica:0/task:0/device:CPU:0", "cpu"],
)
def test_tensorflow_device_names_are_understood(name):
    with ft.device(name):
        assert ft.constant(1.0).device == CPU


@pytest.mark.parametrize("name", ["/XPU:0", "blah", "/device:CPU:x"])
def test_malformed_device_names_are_value_errors(name):
    with pytest.raises(ValueError, match="device"):
        with ft.device(name):
            pass


def test_a_missing_gpu_is_the_cpu_under_soft_placement():
    count = len(ft.config.list_physical_devices("GPU"))
    with ft.device(f"/GPU:{count}"):
        y = ft.identity(ft.constant([1.0]))
    assert y.device == CPU
    assert ft.config.get_soft_device_placement()


def test_a_missing_gpu_is_an_error_without_soft_placement(hard_placement):
    count = len(ft.config.list_physical_devices("GPU"))
    with pytest.raises(ft.errors.InvalidArgumentError, match="Could not satisfy device"):
        with ft.device(f"/GPU:{count}"):
            pass


def test_scopes_nest_and_restore():
    with ft.device("/CPU:0"):
        with ft.device(None):
            assert ft.constant(1.0).device == CPU
        with ft.device("/job:localhost"):
            assert ft.constant(1.0).device == CPU
    assert ft.constant(1.0).device == CPU


@needs_gpu
def test_a_gpu_scope_places_new_tensors_and_variables():
    with ft.device("/GPU:0"):
        x = ft.constant([[1.0, 2.0], [3.0, 4.0]])
        v = ft.Variable(ft.ones([2]))
        y = ft.matmul(x, x) + 1.0
    assert x.device == GPU
    assert v.device == GPU
    assert y.device == GPU
    np.testing.assert_allclose(y.numpy(), [[8.0, 11.0], [16.0, 23.0]])
    # Ops follow their device inputs outside the scope too.
    assert ft.exp(x).device == GPU
    assert ft.reduce_sum(x, axis=0).device == GPU


@needs_gpu
def test_numpy_round_trips_every_dtype():
    for value in [
        np.arange(6, dtype=np.float32).reshape(2, 3),
        np.array([1, -2], np.int64),
        np.array([True, False]),
        np.float64(2.5),
        np.zeros((0, 3), np.float32),
    ]:
        with ft.device("/GPU:0"):
            t = ft.constant(value)
        assert t.device == GPU
        assert t.dtype == ft.as_dtype(value.dtype)
        np.testing.assert_array_equal(t.numpy(), value)


@needs_gpu
def test_identity_copies_between_devices():
    x = ft.constant([1.0, 2.0])
    with ft.device("/GPU:0"):
        on_gpu = ft.identity(x)
    with ft.device("/CPU:0"):
        back = ft.identity(on_gpu)
    assert (x.device, on_gpu.device, back.device) == (CPU, GPU, CPU)
    np.testing.assert_array_equal(back.numpy(), [1.0, 2.0])


@needs_gpu
def test_ops_without_a_gpu_kernel_fall_back_to_the_cpu():
    with ft.device("/GPU:0"):
        x = ft.constant([0.5, 1.5, 2.5])
        y = ft.math.lgamma(x)
    assert y.device == CPU
    np.testing.assert_allclose(y.numpy(), ft.math.lgamma([0.5, 1.5, 2.5]).numpy())


def _loss_and_grads(device):
    with ft.device(device):
        x = ft.constant(np.linspace(-1.0, 1.0, 12, dtype=np.float32).reshape(4, 3))
        w = ft.Variable(np.linspace(0.5, -0.5, 6, dtype=np.float32).reshape(3, 2))
        with ft.GradientTape() as outer:
            outer.watch(x)
            with ft.GradientTape() as tape:
                tape.watch(x)
                loss = ft.reduce_mean(ft.tanh(ft.matmul(x, w)) ** 2) + ft.reduce_sum(x * x * x)
            gx, gw = tape.gradient(loss, [x, w])
        second = outer.gradient(gx, x)
    return loss, gx, gw, second


@needs_gpu
def test_tape_gradients_on_the_gpu_equal_the_cpu_ones():
    on_gpu, on_cpu = _loss_and_grads("/GPU:0"), _loss_and_grads("/CPU:0")
    assert on_gpu[1].device == GPU
    assert on_gpu[3].device == GPU
    for g, c in zip(on_gpu, on_cpu, strict=True):
        np.testing.assert_allclose(g.numpy(), c.numpy(), rtol=1e-5, atol=1e-6)


@needs_gpu
def test_an_optimizer_step_keeps_variables_on_the_gpu():
    with ft.device("/GPU:0"):
        w = ft.Variable([1.0, -2.0])
    opt = ft.keras.optimizers.Adam(0.1)
    for _ in range(3):
        with ft.GradientTape() as tape:
            loss = ft.reduce_sum(w * w)
        opt.apply_gradients([(tape.gradient(loss, w), w)])
    assert w.device == GPU
    w.assign([3.0, 4.0])
    assert w.device == GPU
    np.testing.assert_array_equal(w.numpy(), [3.0, 4.0])


@pytest.mark.skipif(
    not any(gpu[3] for gpu in ft._core.gpu_devices()),
    reason="needs a software adapter (lavapipe) listed under FERROTAPE_GPU_ALLOW_SOFTWARE=1",
)
def test_software_adapters_are_listed_only_when_allowed():
    env = {k: v for k, v in os.environ.items() if k != "FERROTAPE_GPU_ALLOW_SOFTWARE"}
    code = "import ferrotape as ft; print([g[3] for g in ft._core.gpu_devices()])"
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    # Only hardware adapters remain: none of those listed is software.
    assert "True" not in out.stdout


MADE_ON_A_DEVICE = {
    "random.uniform": lambda: ft.random.uniform([3, 2]),
    "random.normal": lambda: ft.random.normal([4]),
    "random.truncated_normal": lambda: ft.random.truncated_normal([4]),
    "fill": lambda: ft.fill([2, 3], 1.5),
    "one_hot": lambda: ft.one_hot([2, 0, 1], 3),
    "eye": lambda: ft.eye(3, 2),
    "range": lambda: ft.range(1.0, 4.0, 0.5),
    "linspace": lambda: ft.linspace(-1.0, 1.0, 5),
    "concat": lambda: ft.concat([ft.ones([2, 1]), ft.zeros([2, 2])], axis=1),
    "tile": lambda: ft.tile(ft.constant([[1.0, 2.0]]), [2, 3]),
    "gather": lambda: ft.gather(ft.reshape(ft.range(12.0), [4, 3]), [3, 0, 3], axis=0),
    "gather_nd": lambda: ft.gather_nd(ft.reshape(ft.range(12.0), [4, 3]), [[1, 2], [3, 0]]),
    "pad": lambda: ft.pad(ft.ones([2, 2]), [[1, 0], [0, 2]], constant_values=7.0),
    "scatter_nd": lambda: ft.scatter_nd([[1], [3], [1]], ft.constant([1.0, 2.0, 4.0]), [5]),
}


@needs_gpu
@pytest.mark.parametrize("name", sorted(MADE_ON_A_DEVICE))
def test_ops_that_make_or_move_elements_give_their_result_on_the_gpu(name):
    # Random draws come from the same seeded stream on every device: the same numbers.
    ft.random.set_seed(5)
    on_cpu = MADE_ON_A_DEVICE[name]()
    ft.random.set_seed(5)
    with ft.device("/GPU:0"):
        on_gpu = MADE_ON_A_DEVICE[name]()
    assert on_gpu.device == GPU
    np.testing.assert_array_equal(on_gpu.numpy(), on_cpu.numpy())


@needs_gpu
def test_an_embedding_lookup_and_its_gradient_stay_on_the_gpu():
    def lookup(device):
        with ft.device(device):
            table = ft.Variable(np.arange(15, dtype=np.float32).reshape(5, 3) / 7.0)
            with ft.GradientTape() as tape:
                rows = ft.nn.embedding_lookup(table, [[4, 0], [4, 2]])
                loss = ft.reduce_sum(rows * rows)
            return rows, ft.convert_to_tensor(tape.gradient(loss, table))

    (rows, grad), (cpu_rows, cpu_grad) = lookup("/GPU:0"), lookup("/CPU:0")
    assert (rows.device, grad.device) == (GPU, GPU)
    np.testing.assert_array_equal(rows.numpy(), cpu_rows.numpy())
    np.testing.assert_array_equal(grad.numpy(), cpu_grad.numpy())


ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _run(args, cwd):
    """Runs ``python ARGS`` with this process's package (the GPU run's is a copy elsewhere)."""
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(ft.__file__)))
    return subprocess.run(
        [sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600
    )


@needs_gpu
def test_the_tutorial_cnn_trains_on_the_gpu_as_on_the_cpu():
    # examples/gpu_check.py: three Adam steps of the tutorial CNN on each device from the same
    # weights and batches; it exits 1 when they differ by more than float32 rounding allows.
    done = _run(["gpu_check.py", "--batch-size", "8"], cwd=os.path.join(ROOT, "examples"))
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"variables live on: ['{GPU}']" in done.stdout
    assert "step 3: loss on the CPU" in done.stdout


@needs_gpu
def test_the_train_command_trains_on_the_gpu(tmp_path):
    args = ["-m", "ferrotape", "train", "--device", "gpu", "--limit", "64", "--epochs", "1"]
    done = _run([*args, "--seed", "3", "--out", str(tmp_path)], cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "on the GPU" in done.stdout  # the start line
    assert (tmp_path / "weights.safetensors").exists()


@pytest.mark.skipif(bool(ft.config.list_physical_devices("GPU")), reason="a GPU is listed")
def test_the_train_command_without_a_gpu_is_a_usage_error(tmp_path):
    args = ["-m", "ferrotape", "train", "--device", "gpu", "--limit", "8", "--quiet"]
    done = _run(args, cwd=tmp_path)
    assert done.returncode == 2
    assert "--device gpu: no GPU was found" in done.stderr


def _conv_net(device, conv, pool, images):
    """A Conv2D + MaxPooling2D forward pass on ``device`` and its gradients."""
    with ft.device(device):
        x = ft.identity(ft.constant(images))
        with ft.GradientTape() as tape:
            tape.watch(x)
            h = conv(x)
            y = pool(h)
            loss = ft.reduce_sum(y * y)
        grads = tape.gradient(loss, [x, conv.kernel, conv.bias])
    return [h, y, *grads]


@needs_gpu
@pytest.mark.parametrize(("strides", "padding"), [(1, "same"), (2, "valid")])
def test_keras_conv_and_pooling_run_on_the_gpu_and_equal_the_cpu(strides, padding):
    rng = np.random.default_rng(0)
    images = rng.standard_normal((2, 9, 7, 3)).astype(np.float32)
    conv = ft.keras.layers.Conv2D(5, (3, 2), strides=strides, padding=padding)
    pool = ft.keras.layers.MaxPooling2D(2, padding="same")
    conv.build((None, 9, 7, 3))
    conv.bias.assign(rng.standard_normal(5).astype(np.float32))
    on_gpu = _conv_net("/GPU:0", conv, pool, images)
    on_cpu = _conv_net("/CPU:0", conv, pool, images)
    for name, g, c in zip(["conv", "pool", "dx", "dkernel", "dbias"], on_gpu, on_cpu, strict=True):
        assert g.device == GPU, name
        assert c.device == CPU, name
        np.testing.assert_allclose(g.numpy(), c.numpy(), rtol=1e-5, atol=1e-5, err_msg=name)


def _train_small_model(device):
    """Three Adam steps of Dense + BatchNormalization + relu + Dropout + softmax on `device`;
    the losses, and the model and optimizer variables afterwards."""
    ft.keras.utils.set_random_seed(7)
    rng = np.random.default_rng(3)
    x = rng.normal(size=(16, 5)).astype(np.float32)
    y = np.eye(3, dtype=np.float32)[rng.integers(0, 3, size=16)]
    with ft.device(device):
        model = ft.keras.Sequential(
            [
                ft.keras.Input((5,)),
                # No bias before the normalisation: its gradient is 0 up to rounding, which
                # Adam would scale into steps of random sign on either device.
                ft.keras.layers.Dense(8, use_bias=False),
                ft.keras.layers.BatchNormalization(),
                ft.keras.layers.Activation("relu"),
                ft.keras.layers.Dropout(0.25, seed=11),
                ft.keras.layers.Dense(3, activation="softmax"),
            ]
        )
        opt = ft.keras.optimizers.Adam(0.01)
        loss_fn = ft.keras.losses.CategoricalCrossentropy()
        losses = []
        for _ in range(3):
            with ft.GradientTape() as tape:
                loss = loss_fn(y, model(x, training=True))
            grads = tape.gradient(loss, model.trainable_variables)
            opt.apply_gradients(zip(grads, model.trainable_variables, strict=True))
            losses.append(loss)
        inference = model(x, training=False)
    return losses, model.variables, opt.variables, inference


@needs_gpu
def test_a_small_keras_model_trains_on_the_gpu_as_on_the_cpu():
    on_gpu, on_cpu = _train_small_model("/GPU:0"), _train_small_model("/CPU:0")
    losses, variables, slots, inference = on_gpu
    # Every model variable (BatchNormalization's moving statistics included), every Adam slot,
    # the losses and the inference output stay on the device.
    assert {v.device for v in variables} == {GPU}
    assert {v.device for v in slots if v.dtype == ft.float32} == {GPU}
    assert {t.device for t in [*losses, inference]} == {GPU}
    for g, c in zip(losses, on_cpu[0], strict=True):
        np.testing.assert_allclose(g.numpy(), c.numpy(), rtol=1e-5)
    for g, c in zip(variables, on_cpu[1], strict=True):
        np.testing.assert_allclose(g.numpy(), c.numpy(), rtol=1e-4, atol=1e-5, err_msg=g.name)
    np.testing.assert_allclose(inference.numpy(), on_cpu[3].numpy(), rtol=1e-4, atol=1e-6)


@needs_gpu
def test_comparisons_selections_and_casts_stay_on_the_gpu():
    with ft.device("/GPU:0"):
        x = ft.constant([[1.0, -2.0, np.nan], [0.0, 3.0, -1.0]])
        mask = x > 0.0
        picked = ft.where(mask, x, ft.zeros_like(x))
        as_int = ft.cast(x * 2.0, ft.int32)
        back = ft.cast(mask, ft.float32)
        biggest = ft.reduce_max(x, axis=1)
        mean = ft.reduce_mean(x, axis=0)
    for t in [mask, picked, as_int, back, biggest, mean]:
        assert t.device == GPU
    np.testing.assert_array_equal(mask.numpy(), [[True, False, False], [False, True, False]])
    np.testing.assert_array_equal(picked.numpy(), [[1.0, 0.0, 0.0], [0.0, 3.0, 0.0]])
    # NaN casts to the minimum, as TensorFlow's conversion on x86 does (and the CPU kernel).
    np.testing.assert_array_equal(as_int.numpy(), [[2, -4, -(2**31)], [0, 6, -2]])
    np.testing.assert_array_equal(back.numpy(), [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    np.testing.assert_array_equal(biggest.numpy(), [np.nan, 3.0])
    np.testing.assert_allclose(mean.numpy(), [0.5, 0.5, np.nan])


def _gathered_ops(x):
    """TensorFlow's top-level rearrangements (array_ops.py, sort_ops.py, scatter_ops.py) and
    the gradient of their weighted sum: gathers and scatters with host-computed indices."""
    with ft.GradientTape() as tape:
        tape.watch(x)
        outs = [
            ft.sort(x, axis=0),
            ft.roll(x, [1, -1], [0, 1]),
            ft.repeat(x, [1, 0, 2], axis=0),
            ft.reverse_sequence(x, [1, 3, 2], seq_axis=1),
            ft.boolean_mask(x, [True, False, True]),
            ft.meshgrid(x[0], x[1])[1],
            ft.tensor_scatter_nd_add(x, [[1]], ft.ones([1, 4])),
            ft.tensor_scatter_nd_max(x, [[0, 1]], [5.0]),
            ft.dynamic_stitch([[1, 0]], [x[:2]]),
        ]
        loss = ft.add_n([ft.reduce_sum(v * v) for v in outs])
    return [*outs, tape.gradient(loss, x)]


@needs_gpu
def test_the_gather_based_top_level_ops_run_on_the_gpu_as_on_the_cpu():
    x = ft.constant(np.random.default_rng(4).standard_normal((3, 4)).astype(np.float32))
    want = _gathered_ops(x)
    with ft.device("/GPU:0"):
        got = _gathered_ops(ft.identity(x))
    for g, w in zip(got, want, strict=True):
        assert g.device == GPU
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-6)
