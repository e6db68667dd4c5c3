#!/usr/bin/env bash
# The quick edit-test loop: a debug build of the extension (tens of seconds, versus minutes for
# the release build) dropped where the editable install (scripts/setup.sh) imports it from.
# Timings taken with this build mean nothing: benchmark after `maturin develop --release`.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
PYO3_BUILD_EXTENSION_MODULE=1 cargo build -p ferrotape-py
# The extension is an abi3 build (rust/ferrotape-py/Cargo.toml), named as the release build names
# it; a leftover version-specific _core.cpython-3XX-....so would be imported before it.
rm -f python/ferrotape/_core.cpython-*.so
# Copy then rename: a running Python that has the old library mapped keeps its (unlinked) file.
cp target/debug/lib_core.so python/ferrotape/_core.abi3.so.tmp
mv python/ferrotape/_core.abi3.so.tmp python/ferrotape/_core.abi3.so
