#!/usr/bin/env bash
# Installs ferrotape (release build) and runs the seed tutorial programs in examples/.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
. scripts/setup.sh
for example in tape_basics autodiff_guide advanced_tape linear_regression; do
    echo "===================== examples/$example.py"
    python "examples/$example.py"
done
