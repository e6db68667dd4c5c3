"""ft.config's logical device configuration and deprecated eager switches, ft.DeviceSpec,
ft.register_tensor_conversion_function with ft.convert_to_tensor, and ft.debugging's traceback
filtering switches. Runs without TensorFlow (tests/test_config_more_tf.py compares with it)."""

import numpy as np
import pytest

import ferrotape as ft

CPU = ft.config.list_physical_devices("CPU")[0]


@pytest.fixture
def fresh_devices(monkeypatch):
    """Devices as before their first use: the switches set here vanish after the test."""
    monkeypatch.setitem(ft.config._state, "initialized", False)
    monkeypatch.setitem(ft.config._state, "logical", {})
    monkeypatch.setitem(ft.config._state, "soft_placement", False)


def test_logical_cpus_are_listed_and_placeable(fresh_devices):
    assert ft.config.get_logical_device_configuration(CPU) is None
    configs = [ft.config.LogicalDeviceConfiguration()] * 3
    ft.config.set_logical_device_configuration(CPU, configs)
    assert ft.config.get_logical_device_configuration(CPU) == configs
    assert [d.name for d in ft.config.list_logical_devices("CPU")] == [
        "/device:CPU:0",
        "/device:CPU:1",
        "/device:CPU:2",
    ]
    # Each logical CPU computes on the one CPU; a fourth does not exist.
    with ft.device("/CPU:2"):
        x = ft.constant([1.0]) * 2
    assert x.device.endswith("CPU:0") and float(x[0]) == 2.0
    with pytest.raises(ft.errors.InvalidArgumentError, match="device:CPU:3"):
        with ft.device("/CPU:3"):
            pass


def test_configuration_is_fixed_once_devices_are_used(fresh_devices):
    ft.config.set_logical_device_configuration(CPU, [ft.config.LogicalDeviceConfiguration()] * 2)
    ft.config.list_logical_devices()
    with pytest.raises(RuntimeError, match="cannot be modified after being initialized"):
        ft.config.set_logical_device_configuration(CPU, [ft.config.LogicalDeviceConfiguration()])
    # The same configuration again changes nothing and is allowed.
    ft.config.set_logical_device_configuration(CPU, [ft.config.LogicalDeviceConfiguration()] * 2)


def test_logical_configuration_bad_input(fresh_devices):
    with pytest.raises(ValueError, match="memory limit on CPU"):
        ft.config.set_logical_device_configuration(
            CPU, [ft.config.LogicalDeviceConfiguration(memory_limit=10)]
        )
    with pytest.raises(ValueError, match="Unrecognized device"):
        ft.config.set_logical_device_configuration("x", [])
    with pytest.raises(ValueError, match="Unrecognized device"):
        ft.config.get_logical_device_configuration(ft.config.PhysicalDevice("/x:0", "GPU"))
    with pytest.raises(ValueError, match="list of LogicalDeviceConfiguration"):
        ft.config.set_logical_device_configuration(CPU, [1024])
    assert ft.config.experimental.VirtualDeviceConfiguration is ft.config.LogicalDeviceConfiguration


def test_logical_device_configuration_fields():
    config = ft.config.LogicalDeviceConfiguration(memory_limit=512)
    assert config.memory_limit == 512
    assert config.experimental_priority is None and config.experimental_device_ordinal is None


def test_deprecated_eager_switches_alias_the_current_ones():
    try:
        ft.config.experimental_run_functions_eagerly(True)
        assert ft.config.functions_run_eagerly() is True
        assert ft.config.experimental_functions_run_eagerly() is True
    finally:
        ft.config.run_functions_eagerly(False)
    assert ft.config.experimental_functions_run_eagerly() is False


def test_traceback_filtering_switches():
    assert ft.debugging.is_traceback_filtering_enabled() is True
    try:
        ft.debugging.disable_traceback_filtering()
        assert ft.debugging.is_traceback_filtering_enabled() is False
    finally:
        ft.debugging.enable_traceback_filtering()
    assert ft.debugging.is_traceback_filtering_enabled() is True


# ---------------------------------------------------------------- DeviceSpec


@pytest.mark.parametrize(
    "text, parts, string",
    [
        ("/job:ps/replica:1/task:2/device:GPU:3", ("ps", 1, 2, "GPU", 3), None),
        ("/cpu:0", (None, None, None, "CPU", 0), "/device:CPU:0"),
        ("/GPU:*", (None, None, None, "GPU", None), "/device:GPU:*"),
        ("/job:worker", ("worker", None, None, None, None), None),
        ("", (None, None, None, None, None), None),
        ("/device:CUSTOM:1/task:4", (None, None, 4, "CUSTOM", 1), "/task:4/device:CUSTOM:1"),
    ],
)
def test_device_spec_parses_and_prints(text, parts, string):
    spec = ft.DeviceSpec.from_string(text)
    assert (spec.job, spec.replica, spec.task, spec.device_type, spec.device_index) == parts
    assert spec.to_string() == (text if string is None else string)
    assert spec == ft.DeviceSpec(*parts) and hash(spec) == hash(ft.DeviceSpec(*parts))


def test_device_spec_merge_replace_and_errors():
    base = ft.DeviceSpec(job="worker", task=1, device_type="cpu", device_index=0)
    assert base.device_type == "CPU"
    merged = base.make_merged_spec(ft.DeviceSpec(device_type="GPU", replica=0))
    assert merged.to_string() == "/job:worker/replica:0/task:1/device:GPU:0"
    assert base.to_string() == "/job:worker/task:1/device:CPU:0"  # unchanged
    assert base.replace(task=None, device_index=2).to_string() == "/job:worker/device:CPU:2"
    assert repr(ft.DeviceSpec(device_type="GPU")) == (
        "<DeviceSpec(job=None, replica=None, task=None, device_type=GPU, device_index=None)>"
    )
    with pytest.raises(ValueError, match="Multiple device types"):
        ft.DeviceSpec.from_string("/CPU:0/GPU:0")
    with pytest.raises(ValueError, match="Unknown attribute 'foo'"):
        ft.DeviceSpec.from_string("/foo:1")
    with ft.device(ft.DeviceSpec(device_type="CPU", device_index=0)):
        assert ft.constant(1.0).device.endswith("CPU:0")


# ---------------------------------------------------------------- tensor conversion


class Meters:
    def __init__(self, value):
        self.value = value


class Feet(Meters):
    pass


@pytest.fixture
def registry(monkeypatch):
    from ferrotape import framework_ops

    monkeypatch.setattr(framework_ops, "_CONVERSIONS", {})
    return framework_ops


def test_registered_conversions_honour_dtype_priority_and_subclasses(registry):
    calls = []

    def to_tensor(m, dtype=None, name=None, as_ref=False):
        calls.append(dtype)
        return ft.constant(m.value, dtype=dtype)

    ft.register_tensor_conversion_function(Meters, to_tensor)
    assert ft.convert_to_tensor(Meters(2)).dtype == ft.int32
    assert ft.convert_to_tensor(Meters(2), dtype="float64").dtype == ft.float64
    assert ft.convert_to_tensor(Meters(2), dtype_hint=ft.float32).dtype == ft.float32
    assert calls == [None, ft.float64, ft.float32]
    # A subclass matches; a lower priority runs first, and NotImplemented passes it on.
    ft.register_tensor_conversion_function(
        Feet, lambda m, dtype=None, name=None, as_ref=False: NotImplemented, priority=1
    )
    np.testing.assert_array_equal(ft.convert_to_tensor(Feet([1, 2])).numpy(), [1, 2])
    # Tensors and plain values never reach the registry.
    assert ft.convert_to_tensor([1.5]).dtype == ft.float32
    assert len(calls) == 4


def test_registered_conversion_errors(registry):
    ft.register_tensor_conversion_function(
        Meters, lambda m, dtype=None, name=None, as_ref=False: ft.constant(1.0)
    )
    with pytest.raises(RuntimeError, match="returned incompatible dtype"):
        ft.convert_to_tensor(Meters(1), dtype=ft.int32)
    ft.register_tensor_conversion_function(
        Feet, lambda m, dtype=None, name=None, as_ref=False: [1.0], priority=0
    )
    with pytest.raises(RuntimeError, match="returned non-Tensor"):
        ft.convert_to_tensor(Feet(1))
    with pytest.raises(TypeError, match="Python numeric types"):
        ft.register_tensor_conversion_function(np.ndarray, lambda *a, **k: None)
    with pytest.raises(TypeError, match="must be a type"):
        ft.register_tensor_conversion_function("Meters", lambda *a, **k: None)
    with pytest.raises(TypeError, match="must be callable"):
        ft.register_tensor_conversion_function(Meters, 3)
    with pytest.raises(TypeError, match="unsupported type"):
        ft.convert_to_tensor(object())
