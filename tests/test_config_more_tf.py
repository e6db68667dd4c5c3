"""ft.DeviceSpec, ft.config's logical device configuration and the traceback switches
compared with TensorFlow 2.21: parsed fields, printed names, merges and the errors. Skipped
without TensorFlow (``pip install tensorflow-cpu``); tests/test_config_more.py covers the same
names without it."""

import os

import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
tf = pytest.importorskip("tensorflow", reason="TensorFlow is not installed")

import ferrotape as ft  # noqa: E402 - after the skip

SPECS = [
    "/job:ps/replica:1/task:2/device:GPU:3",
    "/cpu:0",
    "/GPU:*",
    "/job:worker",
    "",
    "/device:CUSTOM:1/task:4",
    "/task:0/CPU",
]


def fields(spec):
    return (spec.job, spec.replica, spec.task, spec.device_type, spec.device_index)


@pytest.mark.parametrize("text", SPECS)
def test_device_spec_matches(text):
    want, got = tf.DeviceSpec.from_string(text), ft.DeviceSpec.from_string(text)
    assert fields(got) == fields(want)
    assert got.to_string() == want.to_string()
    assert repr(got) == repr(want)
    other = "/job:x/device:TPU:2"
    merged = got.make_merged_spec(ft.DeviceSpec.from_string(other)).to_string()
    assert merged == want.make_merged_spec(tf.DeviceSpec.from_string(other)).to_string()
    replaced = got.replace(task=7, device_type="gpu").to_string()
    assert replaced == want.replace(task=7, device_type="gpu").to_string()


@pytest.mark.parametrize("text", ["/CPU:0/GPU:0", "/foo:1"])
def test_device_spec_errors_match(text):
    with pytest.raises(ValueError) as want:
        tf.DeviceSpec.from_string(text)
    with pytest.raises(ValueError) as got:
        ft.DeviceSpec.from_string(text)
    assert str(got.value) == str(want.value)


def test_logical_device_configuration_and_switches_match():
    assert ft.config.LogicalDeviceConfiguration(memory_limit=5) == tuple(
        tf.config.LogicalDeviceConfiguration(memory_limit=5)
    )
    for lib in (tf, ft):
        cpu = lib.config.list_physical_devices("CPU")[0]
        with pytest.raises(ValueError, match="memory limit on CPU"):
            lib.config.set_logical_device_configuration(
                cpu, [lib.config.LogicalDeviceConfiguration(memory_limit=10)]
            )
        assert lib.debugging.is_traceback_filtering_enabled() is True
