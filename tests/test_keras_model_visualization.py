"""``keras.utils.model_to_dot``/``plot_model``: Keras's ImportError without pydot (or
without Graphviz), and the graph they build, checked through a stand-in ``pydot`` module that
records nodes and edges (pydot itself is optional and not installed for the tests)."""

import sys
import types

import numpy as np
import pytest

import ferrotape as ft

keras = ft.keras


def _functional():
    x = keras.Input((4,), name="x")
    h = keras.layers.Dense(3, activation="relu", name="hidden")(x)
    return keras.Model(x, keras.layers.Dense(1, name="out")(h * 2.0))


def test_without_pydot_both_raise_keras_import_errors(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "pydot", None)  # import pydot fails, as when absent
    model = _functional()
    with pytest.raises(ImportError, match=r"install pydot \(`pip install pydot`\) for model_to"):
        keras.utils.model_to_dot(model)
    with pytest.raises(ImportError, match="for `plot_model` to work"):
        keras.utils.plot_model(model, to_file=tmp_path / "m.png")
    assert not (tmp_path / "m.png").exists()


class _Graph:
    def __init__(self, *args, **kwargs):
        self.attributes, self.nodes, self.edges, self.written = dict(kwargs), [], [], None

    def set(self, key, value):
        self.attributes[key] = value

    def set_node_defaults(self, **kwargs):
        self.attributes["node_defaults"] = kwargs

    def add_node(self, node):
        self.nodes.append(node)

    def add_edge(self, edge):
        self.edges.append(edge)

    def create(self):
        if FAKE.no_graphviz:
            raise OSError("dot not found")
        return b""

    def write(self, path, format):
        self.written = (str(path), format)
        FAKE.last_written = self


FAKE = types.ModuleType("pydot")
FAKE.Dot = FAKE.Cluster = _Graph
FAKE.Node = lambda name, label: (name, label)
FAKE.Edge = lambda source, target: (source, target)


@pytest.fixture
def fake_pydot(monkeypatch):
    FAKE.no_graphviz, FAKE.last_written = False, None
    monkeypatch.setitem(sys.modules, "pydot", FAKE)
    return FAKE


def test_functional_graph_has_a_node_per_step_and_an_edge_per_tensor(fake_pydot):
    model = _functional()
    dot = keras.utils.model_to_dot(model, show_shapes=True, show_layer_activations=True)
    labels = {name: label for name, label in dot.nodes}
    by_name = {step.name: str(id(step)) for step in model._functional_layers}
    assert len(labels) == 4  # x, hidden, the multiply operation, out
    assert labels[by_name["hidden"]] == (
        "{hidden (Dense)|Activation: relu|Output shape: (None, 3)}"
    )
    multiply = next(n for n in by_name if n.startswith("multiply"))
    assert dot.edges == [
        (by_name["x"], by_name["hidden"]),
        (by_name["hidden"], by_name[multiply]),
        (by_name[multiply], by_name["out"]),
    ]
    assert dot.attributes["rankdir"] == "TB"
    with pytest.raises(ValueError, match="layer_range"):
        keras.utils.model_to_dot(model, layer_range=["a", "b"])


def test_sequential_is_a_chain_and_plot_model_writes_by_extension(fake_pydot, tmp_path):
    model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(2), keras.layers.Dense(1)])
    model(np.zeros((1, 2), "float32"))
    keras.utils.plot_model(model, to_file=tmp_path / "m.svg", rankdir="LR")
    dot = fake_pydot.last_written
    assert dot.written == (str(tmp_path / "m.svg"), "svg")
    assert [label for _, label in dot.nodes] == ["{Dense}", "{Dense}"]  # names off by default
    assert len(dot.edges) == 1 and dot.attributes["rankdir"] == "LR"
    fake_pydot.no_graphviz = True
    with pytest.raises(ImportError, match="You must install graphviz"):
        keras.utils.plot_model(model, to_file=tmp_path / "n.png")
