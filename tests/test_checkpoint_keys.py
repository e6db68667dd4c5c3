"""Checkpoint keys equal to TensorFlow 2.21's with Keras 3: the programs of
``checkpoint_key_cases.py`` run on ferrotape, and ``tf.train.list_variables`` of what they write
must list the keys and shapes TensorFlow listed (``data/checkpoint_keys_tf.json``, recorded by
``scripts/make_checkpoint_key_fixtures.py``)."""

import json
import os

import numpy as np
import pytest
from checkpoint_key_cases import CASES

import ferrotape as ft

FIXTURE = os.path.join(os.path.dirname(__file__), "data", "checkpoint_keys_tf.json")
with open(FIXTURE, encoding="utf-8") as _file:
    TENSORFLOW_KEYS = json.load(_file)["cases"]

# Where Keras 3 on TensorFlow saves nothing for variables a program holds (layers in a list or
# dict attribute of a subclassed model; a weight kept in no attribute), ferrotape saves them:
# its keys are TensorFlow's plus these.
EXTRA_KEYS = {
    "subclassed_with_lists": {
        f"net/{path}/{name}/.ATTRIBUTES/VARIABLE_VALUE"
        for path in ("blocks/0", "blocks/1", "heads/a", "heads/b")
        for name in ("_kernel", "bias")
    },
}


def write_keys(name, directory):
    scope = {"tf": ft, "keras": ft.keras, "np": np}
    exec(CASES[name], scope)  # noqa: S102 - the test's own programs
    path = scope["ckpt"].write(os.path.join(directory, name))
    return [[key, shape] for key, shape in ft.train.list_variables(path)]


@pytest.mark.parametrize("name", sorted(CASES))
def test_keys_match_tensorflow(name, tmp_path):
    got = write_keys(name, str(tmp_path))
    want = [[k, s] for k, s in TENSORFLOW_KEYS[name]]
    extra = EXTRA_KEYS.get(name, set())
    assert [ks for ks in got if ks[0] not in extra] == want
    assert {k for k, _ in got} >= extra


def test_fixture_covers_every_case():
    assert sorted(TENSORFLOW_KEYS) == sorted(CASES)
