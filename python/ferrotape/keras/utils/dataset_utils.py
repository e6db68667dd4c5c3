"""Splitting a data set in two (Keras 3's ``keras.src.utils.dataset_utils``).

>>> import numpy as np
>>> left, right = split_dataset(np.arange(10), left_size=0.8)
>>> [int(x) for x in right]
[8, 9]
"""

import random

import numpy as np

from ... import data as ft_data


def _samples(dataset):
    """The data set as a list of samples and a function rebuilding its structure."""

    def columns(samples):
        return tuple(np.stack(column) for column in zip(*samples, strict=True))

    if isinstance(dataset, np.ndarray):
        if not len(dataset):
            raise ValueError("split_dataset: `dataset` must not be empty.")
        return list(dataset), np.stack
    if isinstance(dataset, list | tuple):
        if not dataset:
            raise ValueError("split_dataset: `dataset` must not be an empty list or tuple.")
        for index, element in enumerate(dataset):
            if not isinstance(element, np.ndarray):
                raise ValueError(
                    "split_dataset: expected a list or tuple of numpy arrays; element "
                    f"{index} is a {type(element).__name__}."
                )
            if len(element) != len(dataset[0]):
                raise ValueError(
                    "split_dataset: the arrays must have the same length (first dimension). "
                    f"Received lengths {[len(e) for e in dataset]}."
                )
        return list(zip(*dataset, strict=True)), columns
    if isinstance(dataset, ft_data.Dataset):
        samples = [
            tuple(np.asarray(v) for v in s) if isinstance(s, tuple) else np.asarray(s)
            for s in dataset
        ]
        if not samples:
            raise ValueError("split_dataset: `dataset` is empty.")
        if isinstance(samples[0], tuple):
            return samples, columns
        return samples, np.stack
    raise TypeError(
        "split_dataset: `dataset` must be a numpy array, a list or tuple of arrays, or a "
        f"ferrotape Dataset. Received: {type(dataset).__name__}"
    )


def _sizes(left_size, right_size, total):
    """Keras's ``_rescale_dataset_split_sizes``: fractions in (0, 1) or counts in (0, total),
    the missing side taking the rest."""
    for side, size in (("left", left_size), ("right", right_size)):
        if size is not None and type(size) not in (int, float):
            raise TypeError(
                f"split_dataset: invalid `{side}_size` type. Expected: int or float or None. "
                f"Received: type({side}_size)={type(size)}"
            )
        if (type(size) is int and not 0 < size < total) or (
            type(size) is float and not 0 < size < 1
        ):
            raise ValueError(
                f"split_dataset: `{side}_size` should be either a positive integer smaller "
                f"than {total}, or a float within the range `[0, 1]`. Received: "
                f"{side}_size={size}"
            )
    if type(left_size) is float and type(right_size) is float and left_size + right_size > 1:
        raise ValueError(
            "split_dataset: the sum of `left_size` and `right_size` is greater than 1."
        )
    left = round(left_size * total) if type(left_size) is float else left_size
    right = round(right_size * total) if type(right_size) is float else right_size
    left = total - right if left is None else left
    right = total - left if right is None else right
    if left + right > total:
        raise ValueError(
            "split_dataset: the sum of `left_size` and `right_size` should be smaller than "
            f"{total}. Received: left_size + right_size = {left + right}"
        )
    for side, size in (("left", left), ("right", right)):
        if size == 0:
            raise ValueError(
                f"split_dataset: with a dataset of length {total}, the {side} split would be "
                "empty; adjust `left_size` or `right_size`."
            )
    return int(left), int(right)


def split_dataset(dataset, left_size=None, right_size=None, shuffle=False, seed=None):
    """Splits a data set into a left and a right ``ft.data.Dataset`` of samples.

    Args:
        dataset: a numpy array, a list or tuple of arrays of one length (the samples are
            their rows, kept together), or an unbatched ``ft.data.Dataset``.
        left_size: the left part: a fraction in (0, 1) or a number of samples; None takes
            what ``right_size`` leaves.
        right_size: the right part (the last samples), likewise.
        shuffle: shuffle the samples first (Python's ``random`` seeded with ``seed``, as
            Keras does, so a seed gives Keras's order).
        seed: the shuffling seed.

    Returns:
        ``(left, right)``: two ``ft.data.Dataset``s.
    """
    if left_size is None and right_size is None:
        raise ValueError(
            "split_dataset: at least one of the `left_size` or `right_size` must be "
            "specified. Received: left_size=None and right_size=None"
        )
    samples, rebuild = _samples(dataset)
    if shuffle:
        random.Random(random.randint(0, int(1e6)) if seed is None else seed).shuffle(samples)
    left, right = _sizes(left_size, right_size, len(samples))
    return (
        ft_data.Dataset.from_tensor_slices(rebuild(samples[:left])),
        ft_data.Dataset.from_tensor_slices(rebuild(samples[-right:])),
    )
