"""Run-time SIMD dispatch: the level follows the CPU and the caps, and the kernels give the same
results at every level. The whole gradient-check, numpy-parity and layer suites also run once
more with the loops forced to the baseline (SSE2) path."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import ferrotape as ft
from ferrotape import _core

LEVELS = ("baseline", "avx2", "avx512")
ROOT = Path(__file__).resolve().parents[1]


def cpu_level():
    """The widest level /proc/cpuinfo's flags allow (what the library should detect)."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        pytest.skip("no /proc/cpuinfo to compare the detected level with")
    flags = set()
    for line in text.splitlines():
        if line.startswith("flags"):
            flags = set(line.split(":", 1)[1].split())
            break
    if {"avx512f", "avx512bw", "avx512dq", "avx512vl", "fma"} <= flags:
        return "avx512"
    if {"avx2", "fma"} <= flags:
        return "avx2"
    return "baseline"


@pytest.fixture
def restore_level():
    yield
    _core.set_simd_level(None)


def test_the_level_is_the_cpus_capped_by_the_environment():
    cap = os.environ.get("FERROTAPE_SIMD", "avx512").strip().lower()
    expected = LEVELS[min(LEVELS.index(cpu_level()), LEVELS.index(cap))]
    assert _core.simd_level() == expected


def test_set_simd_level_caps_and_lifts(restore_level):
    assert _core.set_simd_level("baseline") == "baseline"
    assert _core.simd_level() == "baseline"
    # A cap above the CPU's level does not raise it.
    top = _core.set_simd_level("avx512")
    assert top == LEVELS[min(LEVELS.index(cpu_level()), 2)]
    with pytest.raises(ValueError, match="set_simd_level: expected"):
        _core.set_simd_level("sse9")


def _kernel_outputs():
    """Results of the dispatched loops on awkward inputs: odd sizes, 1×N and N×1 broadcasts,
    non-contiguous views, empty tensors, large enough inputs to split across threads."""
    rng = np.random.default_rng(3)
    out = {}
    for shape in [(0,), (1, 7), (7, 1), (33, 17), (3, 40_001)]:
        x = rng.standard_normal(shape).astype(np.float32)
        t = ft.constant(x)
        out[f"exp{shape}"] = ft.exp(t)
        out[f"tanh{shape}"] = ft.tanh(t)
        out[f"relu{shape}"] = ft.nn.relu(t)
        out[f"add_row{shape}"] = t + ft.constant(x[:1])
        out[f"mul_col{shape}"] = t * ft.constant(x[:, :1] if x.ndim == 2 else x)
        with ft.GradientTape() as tape:
            tape.watch(t)
            y = ft.nn.relu(t) * ft.sigmoid(t)
        out[f"grad{shape}"] = tape.gradient(y, t)
    wide = ft.constant(rng.standard_normal((64, 129)).astype(np.float32))
    out["transposed"] = ft.exp(ft.transpose(wide)) + ft.transpose(wide)[::2][:1]
    images = ft.constant(rng.standard_normal((9, 13, 11, 3)))
    for channels in (1, 3, 20):
        kernel = ft.constant(rng.standard_normal((3, 3, 3, channels)))
        with ft.GradientTape() as tape:
            tape.watch([images, kernel])
            y = ft.nn.conv2d(images, kernel, strides=1, padding="SAME")
            pooled = ft.nn.max_pool2d(y, 2, 2, "SAME")
            loss = ft.reduce_sum(pooled * pooled)
        out[f"conv{channels}"] = y
        out[f"pool{channels}"] = pooled
        for name, g in zip(("dx", "dk"), tape.gradient(loss, [images, kernel]), strict=True):
            out[f"{name}{channels}"] = g
    bn = ft.keras.layers.BatchNormalization()
    feats = ft.constant(rng.standard_normal((50, 7, 7, 20)).astype(np.float32))
    with ft.GradientTape() as tape:
        tape.watch(feats)
        y = bn(feats, training=True)
        loss = ft.reduce_sum(y * y * feats)
    out["bn"] = y
    out["bn_dx"] = tape.gradient(loss, feats)
    out["bn_inference"] = bn(feats, training=False)
    return {k: v.numpy() for k, v in out.items()}


def test_every_level_computes_the_same_values(restore_level):
    top = _core.set_simd_level(None)
    reference = _kernel_outputs()
    levels = LEVELS[: LEVELS.index(top) + 1]
    for level in levels[:-1]:
        assert _core.set_simd_level(level) == level
        got = _kernel_outputs()
        for name, want in reference.items():
            np.testing.assert_allclose(
                got[name], want, rtol=2e-6, atol=1e-6, err_msg=f"{name} at {level}"
            )


@pytest.mark.skipif(
    os.environ.get("FERROTAPE_SIMD", "").lower() == "baseline",
    reason="this run is already the baseline one",
)
def test_the_kernel_suites_pass_at_the_baseline_level():
    env = dict(os.environ, FERROTAPE_SIMD="baseline")
    suites = [
        "tests/test_gradcheck.py",
        "tests/test_numpy_parity.py",
        "tests/test_keras_layers.py",
        "tests/test_simd_dispatch.py",
    ]
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *suites],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert " passed" in run.stdout
