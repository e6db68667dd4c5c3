"""ft.config: the device queries TF2 programs start with, answered for ferrotape's one CPU."""

import pytest

import ferrotape as tf


def test_a_program_that_sets_memory_growth_on_every_gpu_runs():
    gpus = tf.config.list_physical_devices("GPU")
    for gpu in gpus:
        tf.config.experimental.set_memory_growth(gpu, True)
    assert gpus == []
    assert tf.config.experimental.list_physical_devices("GPU") == []


def test_the_cpu_is_listed_with_tensorflow_names():
    (cpu,) = tf.config.list_physical_devices()
    assert (cpu.name, cpu.device_type) == ("/physical_device:CPU:0", "CPU")
    assert tf.config.list_physical_devices("cpu") == [cpu]
    (logical,) = tf.config.list_logical_devices("CPU")
    assert logical.name == "/device:CPU:0"
    assert tf.config.get_visible_devices() == [cpu]
    tf.config.set_visible_devices([cpu], "CPU")
    tf.config.set_visible_devices([], "GPU")


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="device_type"):
        tf.config.list_physical_devices("QPU")
    with pytest.raises(ValueError, match="memory growth"):
        tf.config.experimental.set_memory_growth(tf.config.list_physical_devices()[0], True)
    with pytest.raises(ValueError, match="CPU must stay visible"):
        tf.config.set_visible_devices([], "CPU")


def test_run_functions_eagerly_round_trips_and_determinism_warns():
    assert tf.config.functions_run_eagerly() is False
    tf.config.run_functions_eagerly(True)
    try:
        assert tf.config.functions_run_eagerly() is True
    finally:
        tf.config.run_functions_eagerly(False)
    with pytest.warns(UserWarning, match="RAYON_NUM_THREADS=1"):
        tf.config.experimental.enable_op_determinism()
