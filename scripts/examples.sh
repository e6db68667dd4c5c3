#!/usr/bin/env bash
# Installs ferrotape (release build) and runs every example program in examples/ with its default
# (full, tutorial) settings, one per seed tutorial:
#   tape_basics.py         seed 001 and seed 000's tape snippets
#   linear_regression.py   seed 000's linear regression (100,000 steps)
#   keras_linear_model.py  seed 002: subclassed Keras model, tf.data, SGD
#   advanced_tape.py       seed 003: tape techniques, MLP on MNIST (5 epochs), GAN
#   autodiff_guide.py      seed 004: TensorFlow's advanced autodiff guide, with Keras layers
#   keras_cnn.py           seed 000's Keras CNN (25 epochs on MNIST or Fashion-MNIST: the long one)
#   gpu_check.py           the CNN's training steps on the GPU against the CPU (a gpu build only)
# Arguments are passed to the CNN, e.g. `scripts/examples.sh --epochs 1`.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
. scripts/setup.sh
for example in tape_basics linear_regression keras_linear_model advanced_tape autodiff_guide; do
    echo "===================== examples/$example.py"
    python "examples/$example.py"
done
echo "===================== examples/keras_cnn.py $*"
python examples/keras_cnn.py "$@"
if python -c "import ferrotape as ft, sys; sys.exit(not ft.config.list_physical_devices('GPU'))"; then
    echo "===================== examples/gpu_check.py"
    python examples/gpu_check.py
else
    echo "===================== examples/gpu_check.py: skipped (this build lists no GPU)"
fi
