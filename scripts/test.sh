#!/usr/bin/env bash
# Installs everything the tests need, then runs every test: lint checks, the Rust unit tests
# and the Python suite (which includes the seed tutorials and the example programs).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
. scripts/setup.sh

echo "== formatting and lint"
cargo fmt --all -- --check
ruff format --check python tests examples benches scripts
ruff check python tests examples benches scripts

echo "== Rust tests"
# The GPU crate's tests run on Mesa's lavapipe (setup.sh installs it), required to be there.
export FERROTAPE_GPU_ALLOW_SOFTWARE=1 FERROTAPE_GPU_REQUIRE=1
cargo test --workspace --exclude ferrotape-py --exclude ferrotape-benches --quiet

echo "== AddressSanitizer (nightly) on the unsafe kernels"
# ferrotape-core's tests at every SIMD level this CPU has, in target/asan; skipped without a
# nightly toolchain, bounded by FERROTAPE_SANITIZE_BUDGET_S (scripts/sanitize.sh).
bash scripts/sanitize.sh

echo "== GPU tests (the gpu-feature extension on lavapipe: correctness only, never speed)"
# A debug build (it reuses the Rust tests' dependencies) in a separate copy of the package, so
# the default build the rest of the suite imports stays as it is.
cargo build -p ferrotape-py --features gpu --quiet
gpu_pkg=$(mktemp -d)
cp -r python/ferrotape "$gpu_pkg/ferrotape"
rm -f "$gpu_pkg"/ferrotape/_core*.so
cp target/debug/lib_core.so "$gpu_pkg/ferrotape/_core.abi3.so"
PYTHONPATH="$gpu_pkg" python -m pytest -q -p no:randomly tests/test_gpu.py
rm -rf "$gpu_pkg"
unset FERROTAPE_GPU_ALLOW_SOFTWARE FERROTAPE_GPU_REQUIRE

echo "== docs (the API reference and guides; --strict fails on a reference that points nowhere)"
# Not --quiet: mkdocs counts the warnings that --strict turns into failures only when it shows them.
mkdocs build --strict

echo "== wheel"
# The wheel users install, checked as they meet it: built (setup.sh's release build, packed),
# installed into a fresh venv holding nothing else (pip fetches its declared dependencies) and
# run from outside the repository's python/ (scripts/wheel_smoke.py).
bash scripts/build_wheel.sh
wheel_venv=$(mktemp -d)
python -m venv "$wheel_venv"
"$wheel_venv/bin/python" -m pip install --quiet --disable-pip-version-check dist/ferrotape-*.whl
"$wheel_venv/bin/python" scripts/wheel_smoke.py
rm -rf "$wheel_venv"

echo "== Python tests"
status=0
python -m pytest -q || status=$?
if [ "$status" -eq 5 ]; then
    echo "pytest collected no tests" >&2
fi
exit "$status"
