"""The ft.keras source tree is laid out as Keras 3's: every module imports alone (no import
circle hidden by the order ``ft.keras``'s ``__init__`` happens to use), no source file grows
past 600 lines, and the old import paths still reach the same objects."""

import pathlib
import subprocess
import sys

import pytest

import ferrotape as ft

KERAS = pathlib.Path(ft.__file__).parent / "keras"
MAX_LINES = 600


def _module_names():
    for path in sorted(KERAS.rglob("*.py")):
        parts = path.relative_to(KERAS.parent.parent).with_suffix("").parts
        yield ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@pytest.mark.parametrize("module", list(_module_names()))
def test_every_keras_module_imports_alone_in_a_fresh_interpreter(module):
    # Importing the module first, before ft.keras's __init__ has run, finds circular imports.
    done = subprocess.run(
        [sys.executable, "-c", f"import {module}"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]


def test_no_keras_source_file_exceeds_the_line_limit():
    too_long = {}
    for path in KERAS.rglob("*.py"):
        name = path.relative_to(KERAS).as_posix()
        count = len(path.read_text().splitlines())
        if count > MAX_LINES:
            too_long[name] = count
    assert not too_long, too_long


def test_no_module_getattr_is_left_to_break_import_circles():
    users = [p.name for p in KERAS.rglob("*.py") if "def __getattr__(name)" in p.read_text()]
    assert users == []


def test_old_import_paths_reach_the_same_objects():
    from ferrotape.keras import engine, layers_activation, layers_reshaping, models

    keras = ft.keras
    assert engine.Layer is keras.layers.Layer is keras.Layer
    assert engine.Model is models.Model is keras.Model
    assert engine.Sequential is keras.Sequential is keras.models.Sequential
    assert engine.Input is keras.Input is keras.layers.Input
    assert layers_activation.ReLU is keras.layers.ReLU
    assert layers_reshaping.ZeroPadding2D is keras.layers.ZeroPadding2D
    assert keras.utils.ProgressBar is keras.utils.progbar.ProgressBar
    assert keras.callbacks.EarlyStopping.__module__ == "ferrotape.keras.callbacks.early_stopping"


def test_each_layer_class_owns_its_tracked_attribute_names():
    # The base Layer names only its own bookkeeping; Model and Functional extend it.
    from ferrotape.keras.models.functional import Functional

    layer_attrs = ft.keras.layers.Layer._engine_attrs
    assert "optimizer" not in layer_attrs and "_nodes" not in layer_attrs
    assert layer_attrs < ft.keras.Model._engine_attrs < Functional._engine_attrs
    assert "optimizer" in ft.keras.Model._engine_attrs and "_nodes" in Functional._engine_attrs


def _module_level_imports():
    """{module: {keras modules it imports at module level}} (imports inside functions are
    resolved at call time, after every module has loaded, so they are left out)."""
    import ast

    names = set(_module_names())
    graph = {}
    for path in sorted(KERAS.rglob("*.py")):
        parts = path.relative_to(KERAS.parent.parent).with_suffix("").parts
        is_package = parts[-1] == "__init__"
        package = list(parts[:-1])
        graph[".".join(package if is_package else parts)] = edges = set()
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.ImportFrom) and node.level:
                base = package[: len(package) - node.level + 1]
                base = ".".join(base + ([node.module] if node.module else []))
                for alias in node.names:
                    target = f"{base}.{alias.name}"
                    edges.add(target if target in names else base)
    return {m: {t for t in e if t in names and t != m} for m, e in graph.items()}


def test_module_level_imports_form_no_circle():
    graph = _module_level_imports()
    state = {}

    def visit(module, path):
        if state.get(module) == "open":
            raise AssertionError("import circle: " + " -> ".join(path + [module]))
        if state.get(module) is None:
            state[module] = "open"
            for target in sorted(graph[module]):
                visit(target, path + [module])
            state[module] = "done"

    for module in sorted(graph):
        visit(module, [])


def test_layers_import_no_model_and_trainers_import_no_model():
    graph = _module_level_imports()
    for module, targets in graph.items():
        if module.startswith(("ferrotape.keras.layers", "ferrotape.keras.trainers")):
            assert not any(t.startswith("ferrotape.keras.models") for t in targets), module
        if module.startswith("ferrotape.keras.layers"):
            assert not any(t.startswith("ferrotape.keras.trainers") for t in targets), module
