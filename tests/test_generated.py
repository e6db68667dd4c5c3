"""The generated files match the binding rows: ``scripts/gen_bindings.py`` regenerates the export
lists (``python/ferrotape/_exports/``) and the typed stub (``python/ferrotape/_core/*.pyi``) from
the native module in memory, and any difference from the committed files fails with its diff
(fix: rebuild, then run ``python scripts/gen_bindings.py``)."""

import difflib
import importlib.util
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
GENERATED_DIRS = ("python/ferrotape/_exports", "python/ferrotape/_core")


def load_generator():
    spec = importlib.util.spec_from_file_location("gen_bindings", ROOT / "scripts/gen_bindings.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


GENERATED = load_generator().generated()


@pytest.mark.parametrize("path", sorted(GENERATED))
def test_generated_file_is_current(path):
    committed = (ROOT / path).read_text() if (ROOT / path).exists() else ""
    diff = "".join(
        difflib.unified_diff(
            committed.splitlines(keepends=True),
            GENERATED[path].splitlines(keepends=True),
            f"{path} (committed)",
            f"{path} (generated)",
        )
    )
    assert not diff, f"run `python scripts/gen_bindings.py`:\n{diff}"


def test_no_stale_generated_files():
    on_disk = {
        str(p.relative_to(ROOT))
        for d in GENERATED_DIRS
        for p in (ROOT / d).iterdir()
        if p.suffix in (".py", ".pyi")
    }
    assert on_disk <= set(GENERATED), f"not generated any more: {sorted(on_disk - set(GENERATED))}"


def test_every_exported_name_has_a_docstring():
    import ferrotape as tf

    namespaces = {
        "": tf,
        "math": tf.math,
        "math.special": tf.math.special,
        "nn": tf.nn,
        "linalg": tf.linalg,
        "random": tf.random,
    }
    missing = [
        f"tf.{tf_name}"
        for _, tf_names, _, _ in tf._core.op_table()
        for tf_name in tf_names
        if not (
            getattr(namespaces[tf_name.rpartition(".")[0]], tf_name.rpartition(".")[2]).__doc__
            or ""
        ).strip()
    ]
    assert not missing, f"native names without a docstring: {missing}"
