"""Records the checkpoint keys TensorFlow 2.21 with Keras 3 writes for a set of programs, as the
oracle of ``tests/test_checkpoint_keys.py`` (which runs the same programs on ferrotape, without
TensorFlow). Run it in an environment with ``tensorflow-cpu`` installed:

    python scripts/make_checkpoint_key_fixtures.py > tests/data/checkpoint_keys_tf.json

Each case is a program over ``tf``, ``keras`` and ``np`` that binds ``ckpt`` (a
``tf.train.Checkpoint``); the fixture holds the sorted ``(key, shape)`` pairs of
``tf.train.list_variables`` after ``ckpt.write``. The programs live in
``tests/checkpoint_key_cases.py``, shared with the test.
"""

import json
import os
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests"))

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from checkpoint_key_cases import CASES  # noqa: E402


def main():
    results = {}
    directory = tempfile.mkdtemp()
    for name, program in CASES.items():
        keras.utils.clear_session()
        scope = {"tf": tf, "keras": keras, "np": np}
        exec(program, scope)  # noqa: S102 - the test's own programs
        path = scope["ckpt"].write(os.path.join(directory, name))
        results[name] = [[key, shape] for key, shape in tf.train.list_variables(path)]
    json.dump(
        {"tensorflow": tf.__version__, "keras": keras.__version__, "cases": results},
        sys.stdout,
        indent=1,
    )
    print()


if __name__ == "__main__":
    main()
