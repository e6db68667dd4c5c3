"""ferrotape's workloads: the TensorFlow-API code of `tape_api`, run eagerly by ferrotape.

The native thread pool reads RAYON_NUM_THREADS when the first op runs; compare.py sets it in the
worker's environment before this module is imported.
"""

import os
import sys

import numpy as np

if int(np.__version__.split(".")[0]) < 2:
    # ferrotape's bindings are built against numpy 2's ABI; say so instead of failing obscurely.
    raise RuntimeError(
        f"ferrotape needs numpy>=2, but {sys.executable} has numpy {np.__version__}: "
        "run the ferrotape worker under another interpreter (--python ferrotape=PATH)"
    )

import ferrotape  # noqa: E402

from . import tape_api  # noqa: E402

FRAMEWORK = "ferrotape"


def setup(threads):
    """Reports the version and the module's location (its pool size comes from the env)."""
    return {
        "version": ferrotape.__version__,
        "details": {
            "module": os.path.dirname(ferrotape.__file__),
            "RAYON_NUM_THREADS": os.environ.get("RAYON_NUM_THREADS"),
        },
    }


def _eager(family):
    return {"eager": lambda data: tape_api.FAMILIES[family](ferrotape, data)}


VARIANTS = {family: _eager(family) for family in tape_api.FAMILIES}


def to_numpy(result):
    return result.numpy()


def sync(result):
    """ferrotape's ops have finished when they return."""
