#!/usr/bin/env bash
# The main job: installs ferrotape (release build, into .venv) and trains the seed tutorial's
# Keras CNN on Fashion-MNIST with `ferrotape train` (a GradientTape loop, progress bars,
# per-epoch accuracy and throughput, weights + history + training curves in ./ferrotape-run).
# Arguments go to `ferrotape train`, e.g. `scripts/train.sh --full --epochs 3` for the full data
# set (Debian: apt install dataset-fashion-mnist), or `--fit`, `--model mlp`; see --help.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
. scripts/setup.sh
ferrotape train "$@"
