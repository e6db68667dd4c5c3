"""Tracebacks are filtered as TensorFlow's and Keras's are, and a layer's error names the layer
and its call's arguments (issue 38, item 2; ``ferrotape/_public_api.py``)."""

import sys
import traceback

import numpy as np
import pytest

import ferrotape as tf
from ferrotape import keras

pytestmark = pytest.mark.skipif(sys.version_info < (3, 11), reason="exception notes: Python 3.11")


def frames(error):
    return traceback.extract_tb(error.__traceback__)


@pytest.fixture
def unfiltered():
    tf.debugging.disable_traceback_filtering()
    yield
    tf.debugging.enable_traceback_filtering()


def dense_model():
    return keras.Sequential([keras.Input((4,)), keras.layers.Dense(3)])


def test_a_layer_error_names_the_innermost_layer_and_its_arguments():
    with pytest.raises(tf.errors.InvalidArgumentError) as caught:
        dense_model()(np.ones((2, 5), "float32"))
    message = str(caught.value)
    assert message.startswith("Exception encountered when calling Dense.call().\n\n")
    assert "expected an input whose last axis has 4 features" in message
    assert message.endswith(
        "Arguments received by Dense.call():\n  • inputs=tf.Tensor(shape=(2, 5), dtype=float32)"
    )
    assert "Sequential" not in message  # only the innermost failing call says it
    assert len(frames(caught.value)) <= 5


class Failing(keras.layers.Layer):
    def call(self, inputs, training=None, scale=2.0):
        raise ValueError("no good") from KeyError("why")


def test_a_user_layer_error_keeps_its_type_cause_and_lists_defaults():
    with pytest.raises(ValueError) as caught:
        Failing()(tf.ones([1, 2]), scale=3.0)
    message = str(caught.value)
    assert "Exception encountered when calling Failing.call()" in message
    assert "• inputs=tf.Tensor(shape=(1, 2), dtype=float32)" in message
    assert "• training=None" in message and "• scale=3.0" in message
    assert isinstance(caught.value.__cause__, KeyError)
    # The user's own frame (the raise in `call`) is kept; the library's between are not.
    names = [frame.name for frame in frames(caught.value)]
    assert "call" in names and "_fill_mask_arguments" not in names


class OddError(Exception):
    def __init__(self, code, text):
        super().__init__(code, text)


class RaisesOdd(keras.layers.Layer):
    def call(self, inputs):
        raise OddError(7, "odd")


def test_an_exception_with_its_own_arguments_passes_unchanged():
    with pytest.raises(OddError) as caught:
        RaisesOdd()(tf.ones([1]))
    assert caught.value.args == (7, "odd")


def test_filtering_off_shows_every_frame_and_the_plain_message(unfiltered):
    assert not keras.config.is_traceback_filtering_enabled()  # one switch for both
    with pytest.raises(tf.errors.InvalidArgumentError) as caught:
        dense_model()(np.ones((2, 5), "float32"))
    assert str(caught.value).startswith("Dense: expected an input")
    files = {frame.filename for frame in frames(caught.value)}
    assert any(name.endswith("layer.py") for name in files)
    assert len(frames(caught.value)) > 5


def test_the_common_mistakes_show_few_frames_and_keras_types():
    model = dense_model()
    with pytest.raises(ValueError, match="^You must call `compile") as caught:
        model.fit(np.ones((8, 4)), np.ones((8, 3)), verbose=0)
    assert len(frames(caught.value)) <= 5
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3, activation="softmax")])
    model.compile(optimizer="adam", loss="categorical_crossentropy")
    with pytest.raises(ValueError, match="same rank") as caught:
        model.fit(np.ones((8, 4), "float32"), np.array([0, 1, 2, 0, 1, 2, 0, 1]), verbose=0)
    assert len(frames(caught.value)) <= 5
    with pytest.raises(tf.errors.InvalidArgumentError) as caught:
        tf.constant(1) * tf.constant(2.0)
    assert len(frames(caught.value)) <= 5


def test_a_python_op_shows_the_caller_and_the_line_that_raised():
    with pytest.raises(TypeError) as caught:
        tf.math.cumsum(tf.float32)
    found = frames(caught.value)
    assert found[0].filename == __file__
    assert len(found) == 3  # the caller, the wrapper, the library line that raised


def test_keras_config_reads_and_sets_the_global_settings():
    config = keras.config
    assert config.backend() == "tensorflow" and config.floatx() == "float32"
    config.set_epsilon(1e-5)
    try:
        assert config.epsilon() == 1e-5 and keras.backend.epsilon() == 1e-5
    finally:
        config.set_epsilon(1e-7)
    assert config.dtype_policy().name == "float32"
    config.set_backend("tensorflow")
    with pytest.raises(ValueError, match="backend='jax'"):
        config.set_backend("jax")
    config.disable_traceback_filtering()
    try:
        assert not tf.debugging.is_traceback_filtering_enabled()
    finally:
        config.enable_traceback_filtering()
    assert tf.debugging.is_traceback_filtering_enabled()


def test_a_missing_optional_package_is_one_line_saying_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "tensorboard", None)  # as if not installed
    with pytest.raises(ImportError, match=r"pip install 'ferrotape\[tensorboard\]'") as caught:
        keras.callbacks.TensorBoard("unused")
    assert "\n" not in str(caught.value)
