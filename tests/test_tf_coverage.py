"""scripts/tf_coverage.py: it runs, counts what ferrotape has, and honours docs/unsupported.md.

TensorFlow is only needed here; without it the module is skipped. To run it:

    pip install tensorflow-cpu
"""

import importlib.util
import os
import pathlib
import re
import subprocess
import sys
import types

import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
real_tf = pytest.importorskip(
    "tensorflow", reason="TensorFlow is not installed (pip install tensorflow-cpu)"
)

import ferrotape  # noqa: E402 - after the skip, so that a missing TensorFlow skips cleanly

ROOT = pathlib.Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "tf_coverage.py"


def load_script():
    spec = importlib.util.spec_from_file_location("tf_coverage", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


cov = load_script()


@pytest.fixture(scope="module")
def patterns():
    return cov.load_patterns()


@pytest.fixture(scope="module")
def rows(patterns):
    return {row.namespace: row for row in cov.measure(real_tf, ferrotape, patterns)}


def test_script_runs_and_reports_every_namespace():
    # The child imports the ferrotape this test imported, wherever that came from.
    package_root = str(pathlib.Path(ferrotape.__file__).resolve().parent.parent)
    path = os.pathsep.join(filter(None, [package_root, os.environ.get("PYTHONPATH")]))
    env = dict(os.environ, PYTHONPATH=path)
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--missing"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    figures = dict(re.findall(r"^(\S+)\s+(\d+/\d+) \(\d+\.\d%\)", done.stdout, re.MULTILINE))
    assert set(figures) == set(cov.NAMESPACES) | {"overall"}
    pairs = [tuple(map(int, figures[ns].split("/"))) for ns in cov.NAMESPACES]
    have, total = map(int, figures["overall"].split("/"))
    assert have == sum(h for h, _ in pairs)
    assert total == sum(t for _, t in pairs)
    assert 0 < have < total
    # --missing lists each missing name under its full path.
    missing = re.findall(r"^  (tf\.\S+)$", done.stdout, re.MULTILINE)
    assert len(missing) == total - have


def test_known_names_are_present(rows):
    assert "GradientTape" in rows["tf"].present
    assert "Variable" in rows["tf"].present
    assert "reduce_sum" in rows["tf.math"].present
    assert "Dense" in rows["tf.keras.layers"].present
    assert "Adam" in rows["tf.keras.optimizers"].present
    assert "Checkpoint" in rows["tf.train"].present


def test_figures_add_up(rows):
    have, total, pct = cov.overall(rows.values())
    assert have == sum(len(r.present) for r in rows.values())
    assert total == sum(len(r.present) + len(r.missing) for r in rows.values())
    assert pct == pytest.approx(100 * have / total)


def test_private_names_and_submodules_are_not_names(rows):
    every = [n for r in rows.values() for n in r.present + r.missing]
    assert not [n for n in every if n.startswith("_")]
    # tf.math is a submodule of tf: measured as its own namespace, not a name of tf.
    assert "math" not in rows["tf"].present + rows["tf"].missing
    assert "schedules" not in rows["tf.keras.optimizers"].present
    assert "schedules" not in rows["tf.keras.optimizers"].missing


def test_missing_names_are_those_ferrotape_lacks():
    # A stand-in for ferrotape with one name: everything else in `tf` must be missing.
    fake = types.SimpleNamespace(GradientTape=object)
    (row,) = cov.measure(real_tf, fake, [], namespaces=["tf"])
    assert row.present == ["GradientTape"]
    assert "Variable" in row.missing
    assert row.excluded == 0
    # A namespace ferrotape lacks altogether counts all its names as missing.
    (row,) = cov.measure(real_tf, fake, [], namespaces=["tf.math"])
    assert row.present == [] and "reduce_sum" in row.missing


def test_unsupported_patterns_remove_names(rows, patterns):
    assert "RaggedTensor" not in rows["tf"].present + rows["tf"].missing
    assert rows["tf"].excluded > 0
    (unfiltered,) = cov.measure(real_tf, ferrotape, [], namespaces=["tf"])
    assert "RaggedTensor" in unfiltered.missing
    assert unfiltered.total == rows["tf"].total + rows["tf"].excluded


def test_pattern_file_format(tmp_path):
    doc = tmp_path / "scope.md"
    doc.write_text(
        "# Scope\n\nprose `tf.keras.layers.Conv*` is not a pattern\n\n"
        "```patterns\n# a comment\n\ntf.keras.layers.Dens*\n```\n\n"
        "```python\ntf.keras.layers.Flatten\n```\n"
    )
    found = cov.load_patterns(doc)
    assert found == ["tf.keras.layers.Dens*"]
    (row,) = cov.measure(real_tf, ferrotape, found, namespaces=["tf.keras.layers"])
    assert "Dense" not in row.present + row.missing
    assert "Flatten" in row.present and "Conv2D" in row.present
    assert row.excluded == 1


def test_every_pattern_of_a_measured_namespace_matches_a_name(patterns):
    # Catches typos and names TensorFlow dropped: a pattern inside the measured namespaces that
    # matches nothing excludes nothing. Patterns for unmeasured namespaces (tf.compat.*) are
    # records of scope and are skipped.
    paths = [
        f"{ns}.{name}"
        for ns in cov.NAMESPACES
        for name in cov.public_names(cov.resolve(real_tf, ns))
    ]
    measured = set(cov.NAMESPACES)
    for pattern in patterns:
        namespace = pattern.rsplit(".", 1)[0]
        if namespace in measured:
            assert any(cov.is_excluded(p, [pattern]) for p in paths), pattern
