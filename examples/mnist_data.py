"""MNIST for the examples, with Fashion-MNIST standing in when MNIST is not on the machine.

The tutorials these examples follow train on MNIST, which Keras downloads. On a machine without
it (and without a network) the examples fall back to Fashion-MNIST, its drop-in replacement
(same shapes, ten classes): first the full data set (Debian's `dataset-fashion-mnist` package),
then the 6,000 + 1,000 image subset shipped inside ferrotape, so an example always has data to
run on.
"""

import ferrotape as tf

DATASETS = ("auto", "mnist", "fashion_mnist", "fashion_mnist_small")


def load_data(dataset="auto"):
    """`((x_train, y_train), (x_test, y_test))` as `mnist.load_data()` returns it, and the name
    of the data set actually loaded.

    `dataset` is one of DATASETS; "auto" tries MNIST, then Fashion-MNIST, then the shipped
    Fashion-MNIST subset, and says on stdout which one it fell back to and why.
    """
    if dataset not in DATASETS:
        raise ValueError(f"load_data: dataset must be one of {DATASETS}, received {dataset!r}")
    if dataset == "mnist":
        return tf.keras.datasets.mnist.load_data(), "mnist"
    if dataset == "fashion_mnist":
        return tf.keras.datasets.fashion_mnist.load_data(), "fashion_mnist"
    if dataset == "fashion_mnist_small":
        return tf.keras.datasets.fashion_mnist.load_data(subset="small"), "fashion_mnist_small"
    # The loaders' FileNotFoundError lists every directory tried; stderr shows the download
    # attempt, so one line here is enough.
    try:
        return tf.keras.datasets.mnist.load_data(), "mnist"
    except FileNotFoundError:
        print("[INFO] MNIST is not on this machine and could not be downloaded")
    try:
        data = tf.keras.datasets.fashion_mnist.load_data()
        print("[INFO] using Fashion-MNIST, its drop-in replacement, instead")
        return data, "fashion_mnist"
    except FileNotFoundError:
        print("[INFO] nor is Fashion-MNIST: using the subset shipped with ferrotape")
    return tf.keras.datasets.fashion_mnist.load_data(subset="small"), "fashion_mnist_small"
