"""The typed stub tells the truth: ``mypy.stubtest`` finds it consistent with the native module
(no allowlist), and mypy accepts a typed user program (``tests/typed_example.py``) under
``--strict``. mypy is a test dependency (``scripts/setup.sh`` installs it)."""

import os
import pathlib
import subprocess
import sys

import pytest

import ferrotape

ROOT = pathlib.Path(__file__).resolve().parent.parent
# The package the tests import (a worktree's python/ or an installed copy).
PACKAGE_PARENT = pathlib.Path(ferrotape.__file__).resolve().parent.parent


def run_mypy_tool(args, tmp_path):
    try:
        import mypy  # noqa: F401
    except ImportError:
        pytest.fail("mypy is a test dependency: install it (scripts/setup.sh does)")
    path = os.pathsep.join(filter(None, [str(PACKAGE_PARENT), os.environ.get("PYTHONPATH")]))
    env = dict(os.environ, PYTHONPATH=path, MYPYPATH=str(PACKAGE_PARENT))
    # A fresh working directory: mypy's cache and no relative paths that name a module twice.
    return subprocess.run(
        [sys.executable, "-m", *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_stubtest_is_clean(tmp_path):
    done = run_mypy_tool(["mypy.stubtest", "ferrotape._core"], tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr


def test_typed_example_passes_mypy(tmp_path):
    example = str(ROOT / "tests" / "typed_example.py")
    args = ["mypy", "--strict", "--follow-imports=silent", "--no-incremental", example]
    done = run_mypy_tool(args, tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr


def test_typed_example_runs():
    done = subprocess.run(
        [sys.executable, str(ROOT / "tests" / "typed_example.py")],
        env=dict(os.environ, PYTHONPATH=str(PACKAGE_PARENT)),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
