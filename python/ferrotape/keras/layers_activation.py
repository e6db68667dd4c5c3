"""Former home of the ReLU-family layers, now ``layers/activations/relu.py``; kept so old
imports still work."""

from .layers.activations.relu import ELU, LeakyReLU, PReLU, ReLU

__all__ = ["ELU", "LeakyReLU", "PReLU", "ReLU"]
