"""Every error a public op raises names the op (issue 34, item 6).

The message stays TensorFlow's; the op's name comes as a note below it ("while calling
'reduce_sum'"), added by the bindings' ``#[op_errors]`` for native functions and by
``ferrotape/_public_api.py`` for the functions written in Python. Walking every public function
of the op namespaces with a value no op takes makes a new function without the note fail here.
"""

import inspect
import sys

import pytest

import ferrotape as tf
from ferrotape import _public_api

pytestmark = pytest.mark.skipif(sys.version_info < (3, 11), reason="exception notes: Python 3.11")


def shown(error):
    """The message and the notes, as a traceback prints them."""
    return "\n".join([str(error), *getattr(error, "__notes__", ())])


def test_a_native_op_names_itself_below_tensorflows_message():
    with pytest.raises(TypeError, match=r"^Attempt to convert a value \(None\)") as caught:
        tf.math.reduce_sum(None)
    assert caught.value.__notes__ == ["while calling 'reduce_sum'"]


def test_an_operator_names_its_op():
    with pytest.raises(Exception) as caught:
        tf.constant([1.0, 2.0]) + {"a": 1}
    assert "while calling 'add'" in shown(caught.value)
    with pytest.raises(Exception) as caught:
        tf.constant([1.0, 2.0])["a"]
    assert "while calling 'strided_slice'" in shown(caught.value)


def test_tape_watch_keeps_tensorflows_message_and_names_the_method():
    with tf.GradientTape() as tape:
        with pytest.raises(ValueError, match="^Passed in object 3 of type 'int'") as caught:
            tape.watch(3)
    assert caught.value.__notes__ == ["while calling 'GradientTape.watch'"]


def test_a_python_op_names_itself():
    with pytest.raises(TypeError) as caught:
        tf.math.cumsum(tf.float32)
    assert "while calling 'cumsum'" in caught.value.__notes__


def test_a_message_that_names_the_op_gets_no_note():
    with pytest.raises(tf.errors.InvalidArgumentError) as caught:
        tf.math.reduce_sum(tf.ones([2]), axis=5)
    # TensorFlow's kernel name ("Sum: axis 5 ...") is not the function's: the note maps them.
    assert caught.value.__notes__ == ["while calling 'reduce_sum'"]
    error = ValueError("cumsum: bad axis")
    _public_api.note_op(error, "cumsum")
    _public_api.note_op(error, "cumsum_extra")
    _public_api.note_op(error, "cumsum_extra")  # once only
    assert error.__notes__ == ["while calling 'cumsum_extra'"]


def test_wrapping_keeps_the_public_functions_themselves():
    assert tf.cumsum is tf.math.cumsum  # one wrapper per function, whatever its names
    assert list(inspect.signature(tf.math.cumsum).parameters)[:2] == ["x", "axis"]
    assert "cumulative sum" in tf.math.cumsum.__doc__.lower()
    assert (
        tf.math.cumsum.__module__ == tf.math.cumsum.__wrapped__.__module__
    )  # its doctests run once
    x = tf.constant([1.0, 2.0, 3.0])
    assert tf.math.cumsum(x).numpy().tolist() == [1.0, 3.0, 6.0]


def _public_functions():
    """``(qualified name, function)`` of every public function of the op namespaces."""
    found = {}
    for path in _public_api.OP_NAMESPACES:
        module = tf if not path else eval(f"tf.{path}")
        for name in getattr(module, "__all__", None) or dir(module):
            function = vars(module).get(name)
            if not name.startswith("_") and callable(function) and not isinstance(function, type):
                found.setdefault(id(function), (f"tf.{path}.{name}".replace("..", "."), function))
    return sorted(found.values(), key=lambda pair: pair[0])


FUNCTIONS = _public_functions()


class Unconvertible:
    """A value no op takes (not a tensor, a number, a sequence or a dtype)."""

    def __repr__(self):
        return "Unconvertible()"


@pytest.mark.parametrize("name, function", FUNCTIONS, ids=[name for name, _ in FUNCTIONS])
def test_every_public_op_names_itself_in_its_errors(name, function):
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        pytest.fail(f"{name} has no signature")
    required = [p for p in parameters if p.default is p.empty and p.kind <= p.POSITIONAL_OR_KEYWORD]
    if not required:
        return
    try:
        function(*[Unconvertible() for _ in required])
    except Exception as error:
        short = name.rsplit(".", 1)[1]
        message = shown(error)
        # The op under either of its names (tf.matrix_square_root is sqrtm), or the argument
        # PyO3 could not convert before the function ran ("while processing 'num_rows'").
        named = short in message or function.__name__ in message
        named = named or any(f"while processing '{p.name}'" in message for p in required)
        assert named, f"{name}: {type(error).__name__}: {message}"
