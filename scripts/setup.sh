#!/usr/bin/env bash
# Creates .venv (if needed) with the Python packages ferrotape's tests and examples use, and
# builds ferrotape into it as a release build (the wheel's build, editable). Sourced by the
# other scripts; safe to run again (cargo's incremental build makes reruns quick).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
if [ ! -x .venv/bin/python ]; then
    python3 -m venv .venv
fi
# shellcheck disable=SC1091
. .venv/bin/activate
python -m pip install --quiet --disable-pip-version-check \
    "maturin>=1.9,<2" "numpy>=2" "safetensors>=0.4" "tqdm>=4.60" "ml_dtypes>=0.4" "matplotlib>=3.7" "h5py>=3.10" \
    "tensorboard>=2.12" \
    "pytest>=8" "hypothesis>=6" "ruff>=0.6" "mypy>=1.11" \
    "ziglang" "auditwheel"
# The docs build (mkdocs.yml), pinned: its griffe extension (scripts/docs_griffe.py) uses griffe's API.
python -m pip install --quiet --disable-pip-version-check \
    "mkdocs==1.6.1" "mkdocstrings==1.0.8" "mkdocstrings-python==2.0.11" "griffelib==2.4.1"
# Mesa's software Vulkan (lavapipe), on which the GPU tests run wgpu without a GPU (test.sh).
if command -v apt-get >/dev/null && ! dpkg -s mesa-vulkan-drivers libvulkan1 >/dev/null 2>&1; then
    sudo_if_needed=$([ "$(id -u)" -eq 0 ] || echo sudo)
    { $sudo_if_needed apt-get install -y -qq mesa-vulkan-drivers libvulkan1 >/dev/null \
        || { $sudo_if_needed apt-get update -qq \
            && $sudo_if_needed apt-get install -y -qq mesa-vulkan-drivers libvulkan1 >/dev/null; }; } \
        || echo "setup.sh: could not install mesa-vulkan-drivers and libvulkan1: the GPU tests need them" >&2
fi
# A version-specific extension left by an older build would be imported before _core.abi3.so.
rm -f python/ferrotape/_core.cpython-*.so
# The release build, installed editable; it is the wheel's build (same flags), so that
# scripts/build_wheel.sh afterwards only packs it.
bash scripts/build_wheel.sh --editable
