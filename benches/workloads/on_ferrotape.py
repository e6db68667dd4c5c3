"""ferrotape's workloads: the TensorFlow-API code of `tape_api`, run eagerly by ferrotape and, for
the training steps and inference, inside `ft.function` (traced once, replayed from Rust).

The native thread pool reads RAYON_NUM_THREADS when the first op runs; compare.py sets it in the
worker's environment before this module is imported.
"""

import filecmp
import importlib.util
import os
import sys
from pathlib import Path

import numpy as np

# Under another interpreter (--python ferrotape=PATH), say what it lacks instead of failing
# obscurely: the bindings are built against numpy 2's ABI, and ft.keras imports tqdm.
if int(np.__version__.split(".")[0]) < 2:
    raise RuntimeError(
        f"ferrotape needs numpy>=2, but {sys.executable} has numpy {np.__version__}: "
        "run the ferrotape worker under another interpreter (--python ferrotape=PATH)"
    )
_MISSING = [name for name in ("tqdm", "safetensors") if importlib.util.find_spec(name) is None]
if _MISSING:
    raise RuntimeError(
        f"ferrotape's dependencies {', '.join(_MISSING)} are missing from {sys.executable}: "
        f"{sys.executable} -m pip install {' '.join(_MISSING)}"
    )

import ferrotape  # noqa: E402

from . import common, tape_api  # noqa: E402

FRAMEWORK = "ferrotape"


def build_profile():
    """ "release" or "debug" when the loaded extension is the repository's target/<profile>
    library (the editable install's copy or hard link), else "unknown". scripts/setup.sh builds
    release under target/x86_64-unknown-linux-gnu (the wheel's build, scripts/build_wheel.sh);
    `maturin develop --release` under target/release."""
    core = Path(ferrotape._core.__file__)
    target = Path(ferrotape.__file__).resolve().parents[2] / "target"
    for profile, built in (
        ("release", target / "x86_64-unknown-linux-gnu" / "release" / "lib_core.so"),
        ("release", target / "release" / "lib_core.so"),
        ("debug", target / "debug" / "lib_core.so"),
    ):
        try:
            if built.exists() and filecmp.cmp(core, built, shallow=False):
                return profile
        except OSError:
            continue
    return "unknown"


def setup(threads):
    """Reports the version, the module's location and the extension's build profile (the pool
    size comes from the environment), and the GPU under --device gpu."""
    gpu = None
    if common.DEVICE == "gpu":
        gpus = ferrotape._core.gpu_devices()
        if not gpus:
            raise common.NoGpu(
                "this build has no gpu feature or wgpu found no adapter "
                "(a software one needs FERROTAPE_GPU_ALLOW_SOFTWARE=1)"
            )
        gpu = f"{gpus[0][1]} ({gpus[0][2]}{', software' if gpus[0][3] else ''})"
    return {
        "version": ferrotape.__version__,
        "details": {
            "module": os.path.dirname(ferrotape.__file__),
            "build": build_profile(),
            "RAYON_NUM_THREADS": os.environ.get("RAYON_NUM_THREADS"),
            "gpu": gpu,
        },
    }


def _on_gpu(build):
    """`build` with its model, inputs and every call of its step placed on the first GPU."""

    def build_on_gpu(data):
        with ferrotape.device("/GPU:0"):
            step = build(data)

        def step_on_gpu():
            with ferrotape.device("/GPU:0"):
                return step()

        return step_on_gpu

    return build_on_gpu


VARIANTS = {
    family: tape_api.variants(ferrotape, family, "ft.function") for family in tape_api.FAMILIES
}
if common.DEVICE == "gpu":
    VARIANTS = {
        family: {variant: _on_gpu(build) for variant, build in builders.items()}
        for family, builders in VARIANTS.items()
    }


def to_numpy(result):
    return result.numpy()


def sync(result):
    """ferrotape's CPU ops have finished when they return; GPU work is queued, and reading the
    result waits for it."""
    if common.DEVICE == "gpu":
        for tensor in result if isinstance(result, (list, tuple)) else [result]:
            tensor.numpy()
