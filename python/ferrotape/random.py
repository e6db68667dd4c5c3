"""``ft.random``: seeded sampling (``set_seed`` makes programs reproducible)."""

from ._exports.random import *  # noqa: F403 (the native names: scripts/gen_bindings.py)
from ._exports.random import __all__ as __all__
