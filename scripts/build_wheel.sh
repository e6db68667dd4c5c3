#!/usr/bin/env bash
# Builds the wheel users install, into dist/: one file for every CPython from 3.10 on (abi3), for
# every Linux with glibc 2.28 or newer (manylinux_2_28: zig links against glibc 2.28's symbols, so
# no manylinux container is needed), debug info stripped. Prints its path and size, then fails if
# it is over MAX_BYTES or if `auditwheel show` finds it needs a newer glibc than its tag says.
#
# `scripts/build_wheel.sh --editable` instead installs the same build editable into the active
# virtual environment (the python/ sources plus the built extension, as `maturin develop` does):
# scripts/setup.sh uses it, so the development build and the wheel share one cargo build.
#
# Runs in the active virtual environment, else in .venv (created if missing); installs maturin,
# ziglang and auditwheel into it when they are missing. x86-64 only (the tags checked below).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# The flags that make the wheel; `--editable` passes the same ones so that cargo sees the same
# build. --target spells out the host triple because --zig builds with it anyway: without it, a
# plain build would put its artifacts elsewhere (target/release, not target/<triple>/release).
FLAGS=(--release --zig --compatibility manylinux_2_28 --strip --target x86_64-unknown-linux-gnu)
# Under 6 MB (5.09 MB on 2026-12-07): the stripped extension (9.39 MB) compresses to 3.12 MB, the
# embedded Fashion-MNIST subset (keras/datasets/data: 16 grey levels, LZMA) is 1.15 MB and the
# Python sources 0.72 MB. The limit was 5 MB until the checkpoint reader and writer
# (ferrotape-checkpoint, 0.06 MB of the wheel) took it past. What keeps the extension small:
# element-wise loops reach rayon through one driver per element type (kernels/elementwise.rs,
# `fill_chunks`; 4.5 MB less than a driver per loop), deflate at level 9, no SBOM, the docs' front
# page as the package description. (The binding crate stays at opt-level 3: see Cargo.toml.)
MAX_BYTES=6000000

if [ -z "${VIRTUAL_ENV:-}" ]; then
    [ -x .venv/bin/python ] || python3 -m venv .venv
    # shellcheck disable=SC1091
    . .venv/bin/activate
fi
missing=()
python -c "import maturin" 2>/dev/null || missing+=("maturin>=1.9,<2")
python -c "import ziglang" 2>/dev/null || missing+=("ziglang")
python -c "import auditwheel" 2>/dev/null || missing+=("auditwheel")
if [ "${#missing[@]}" -gt 0 ]; then
    python -m pip install --quiet --disable-pip-version-check "${missing[@]}"
fi

if [ "${1:-}" = "--editable" ]; then
    # pip runs maturin's build backend, which takes its flags from MATURIN_PEP517_ARGS (--release
    # is its default). --no-build-isolation: the build sees this environment's maturin and zig.
    MATURIN_PEP517_ARGS="${FLAGS[*]:1}" python -m pip install --quiet --disable-pip-version-check \
        --no-build-isolation --no-deps --editable .
    exit 0
fi

rm -f dist/ferrotape-*.whl
# Deflate at its highest level: about 25 kB smaller than the default, for the size limit below.
maturin build "${FLAGS[@]}" --compression-method deflated --compression-level 9 --out dist
wheels=(dist/ferrotape-*.whl)
wheel=${wheels[0]}
bytes=$(stat -c %s "$wheel")
echo "wheel: $wheel ($bytes bytes, $(python -c "print(f'{$bytes / 1e6:.2f}')") MB)"

status=0
if [ "$bytes" -ge "$MAX_BYTES" ]; then
    echo "build_wheel: $wheel is $bytes bytes, over the $MAX_BYTES byte limit" >&2
    status=1
fi
# The file name's tags are what pip matches: cp310-abi3 (any CPython >= 3.10) and manylinux 2.x
# with x <= 28.
case "$(basename "$wheel")" in
    *-cp310-abi3-manylinux_2_28_x86_64.whl | *-cp310-abi3-manylinux_2_2[0-7]_x86_64.whl) ;;
    *-cp310-abi3-manylinux_2_1[0-9]_x86_64.whl | *-cp310-abi3-manylinux2014_x86_64.whl) ;;
    *)
        echo "build_wheel: $wheel is not tagged cp310-abi3 and manylinux_2_28 or lower" >&2
        status=1
        ;;
esac
# auditwheel reads the symbol versions the extension needs: the tag must not promise more. Its
# report is wrapped to the terminal's width, so join the lines before reading it.
audit=$(auditwheel show "$wheel" 2>&1 | tr -s ' \n' ' ') || true
policy=$(echo "$audit" | grep -o 'consistent with the following platform tag: "[^"]*"' || true)
echo "auditwheel show: ${policy:-no platform tag found}"
glibc=$(echo "$policy" | grep -o 'manylinux_2_[0-9]*' | grep -o '[0-9]*$' || true)
if [ -z "$glibc" ] || [ "$glibc" -gt 28 ]; then
    echo "build_wheel: auditwheel show does not confirm manylinux_2_28 or lower:" >&2
    echo "$audit" >&2
    status=1
fi
exit "$status"
