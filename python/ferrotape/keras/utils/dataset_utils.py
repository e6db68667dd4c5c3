"""Splitting a data set in two (Keras 3's ``keras.src.utils.dataset_utils``).

>>> import numpy as np
>>> left, right = split_dataset(np.arange(10), left_size=0.8)
>>> [int(x) for x in right]
[8, 9]
"""

import os
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


# ----------------------------------------------------------------------------- directories


def index_directory(
    directory,
    labels,
    formats,
    class_names=None,
    shuffle=True,
    seed=None,
    follow_links=False,
    verbose=True,
):
    """The files of ``directory`` with an extension in ``formats``, and their labels (Keras
    3's ``dataset_utils.index_directory``): with ``labels="inferred"`` each subdirectory is a
    class (alphanumeric order, or ``class_names``'s), files are listed class by class in
    sorted order, then shuffled with ``seed`` (paths and labels alike).

    Returns:
        ``(file_paths, labels, class_names)``; labels an int32 array, or None.
    """
    if labels == "inferred":
        subdirs = sorted(
            name
            for name in os.listdir(directory)
            if os.path.isdir(os.path.join(directory, name)) and not name.startswith(".")
        )
        if class_names is not None:
            if not set(class_names) <= set(subdirs):
                raise ValueError(
                    "The `class_names` passed did not match the names of the subdirectories "
                    f"of the target directory. Expected: {subdirs} (or a subset of it), but "
                    f"received: class_names={class_names}"
                )
            subdirs = list(class_names)
    else:
        if class_names is not None:
            raise ValueError(
                "When `labels=None` (no labels), argument `class_names` cannot be specified."
                if labels is None
                else "When argument `labels` is specified, argument `class_names` cannot be "
                "specified (the `class_names` will be the sorted list of labels)."
            )
        subdirs = [""]
    paths, found = [], []
    for index, subdir in enumerate(subdirs):
        root_dir = os.path.join(directory, subdir)
        walk = sorted(os.walk(root_dir, followlinks=follow_links), key=lambda entry: entry[0])
        for root, _, files in walk:
            for name in sorted(files):
                if name.lower().endswith(tuple(formats)):
                    paths.append(os.path.join(root, name))
                    found.append(index)
    if labels == "inferred":
        labels, class_names = np.asarray(found, dtype="int32"), list(subdirs)
    elif labels is None:
        class_names = None
    else:
        if len(labels) != len(paths):
            raise ValueError(
                "Expected the lengths of `labels` to match the number of files in the target "
                f"directory. len(labels) is {len(labels)} while we found {len(paths)} files in "
                f"directory {directory}."
            )
        class_names = [str(label) for label in sorted(set(labels))]
        labels = np.asarray(labels)
    if verbose:
        counted = "" if labels is None else f" belonging to {len(class_names)} classes"
        print(f"Found {len(paths)} files{counted}.")
    if shuffle:
        seed = np.random.randint(1e6) if seed is None else seed
        np.random.RandomState(seed).shuffle(paths)
        if labels is not None:
            np.random.RandomState(seed).shuffle(labels)  # the same permutation
    return paths, labels, class_names


def check_validation_split_arg(validation_split, subset, shuffle, seed):
    """Keras's checks of ``validation_split``/``subset``: both or neither, and a seed when
    shuffling (so the two subsets do not overlap)."""
    if validation_split and not 0 < validation_split < 1:
        raise ValueError(
            f"`validation_split` must be between 0 and 1, received: {validation_split}"
        )
    if (validation_split or subset) and not (validation_split and subset):
        raise ValueError("If `subset` is set, `validation_split` must be set, and inversely.")
    if subset not in ("training", "validation", "both", None):
        raise ValueError(
            f'`subset` must be either "training", "validation" or "both", received: {subset}'
        )
    if validation_split and shuffle and seed is None:
        raise ValueError(
            "If using `validation_split` and shuffling the data, you must provide a `seed` "
            "argument, to make sure that there is no overlap between the training and "
            "validation subset."
        )


def get_training_or_validation_split(samples, labels, validation_split, subset):
    """The ``subset`` of ``samples`` (and labels): the validation subset is the last
    ``int(validation_split * n)`` samples, the training subset the others."""
    if not validation_split:
        return samples, labels
    count = int(validation_split * len(samples))
    if subset == "training":
        print(f"Using {len(samples) - count} files for training.")
        return samples[:-count], None if labels is None else labels[:-count]
    if subset == "validation":
        print(f"Using {count} files for validation.")
        return samples[-count:], None if labels is None else labels[-count:]
    raise ValueError(f'`subset` must be either "training" or "validation", received: {subset}')
