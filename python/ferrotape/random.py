"""``ft.random``: seeded sampling (``set_seed`` makes programs reproducible)."""

from ._core.random import normal, set_seed, shuffle, truncated_normal, uniform

__all__ = ["normal", "set_seed", "shuffle", "truncated_normal", "uniform"]
