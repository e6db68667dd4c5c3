"""``ft.keras.datasets``: MNIST and Fashion-MNIST as Keras loads them, read from local IDX files.

See :mod:`.fashion_mnist` and :mod:`.mnist` for where the files are looked for.
"""

from . import fashion_mnist, mnist

__all__ = ["fashion_mnist", "mnist"]
