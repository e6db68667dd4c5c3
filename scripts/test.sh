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
cargo test --workspace --exclude ferrotape-py --exclude ferrotape-benches --quiet

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
