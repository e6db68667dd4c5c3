"""Sliding windows over a time series as a data set (Keras 3's
``keras.src.utils.timeseries_dataset_utils``).

>>> import numpy as np
>>> windows = timeseries_dataset_from_array(np.arange(6), None, sequence_length=3, batch_size=None)
>>> [w.numpy().tolist() for w in windows]
[[0, 1, 2], [1, 2, 3], [2, 3, 4], [3, 4, 5]]
"""

import numpy as np

from ... import data as ft_data


def _check(data, start_index, end_index, sampling_rate, sequence_stride):
    n = len(data)
    if start_index:
        if start_index < 0:
            raise ValueError(
                f"`start_index` must be 0 or greater. Received: start_index={start_index}"
            )
        if start_index >= n:
            raise ValueError(
                "`start_index` must be lower than the length of the data. Received: "
                f"start_index={start_index}, for data of length {n}"
            )
    if end_index:
        if start_index and end_index <= start_index:
            raise ValueError(
                "`end_index` must be higher than `start_index`. Received: "
                f"start_index={start_index}, and end_index={end_index}"
            )
        if end_index >= n:
            raise ValueError(
                "`end_index` must be lower than the length of the data. Received: "
                f"end_index={end_index}, for data of length {n}"
            )
        if end_index <= 0:
            raise ValueError(f"`end_index` must be higher than 0. Received: end_index={end_index}")
    for name, value in (("sampling_rate", sampling_rate), ("sequence_stride", sequence_stride)):
        if value <= 0:
            raise ValueError(f"`{name}` must be higher than 0. Received: {name}={value}")
        if value >= n:
            raise ValueError(
                f"`{name}` must be lower than the length of the data. Received: "
                f"{name}={value}, for data of length {n}"
            )


def timeseries_dataset_from_array(
    data,
    targets,
    sequence_length,
    sequence_stride=1,
    sampling_rate=1,
    batch_size=128,
    shuffle=False,
    seed=None,
    start_index=None,
    end_index=None,
):
    """The windows of ``data`` (and their targets) as an ``ft.data.Dataset``.

    Window ``i`` starts at ``start_index + p_i`` with ``p_i = i * sequence_stride`` and
    holds ``sequence_length`` steps ``sampling_rate`` apart; its target is
    ``targets[start_index + p_i]``.

    Args:
        data: an array (or tensor) whose first axis is time.
        targets: the targets, indexed as ``data``, or None for windows alone.
        sequence_length: the number of steps in a window.
        sequence_stride: the offset between consecutive windows.
        sampling_rate: the offset between the steps of a window.
        batch_size: windows per batch; None for unbatched windows.
        shuffle: shuffle the windows' start positions (numpy's ``RandomState(seed)``, as
            Keras; Keras also shuffles its batches through a TF buffer, which is not
            reproduced).
        seed: the shuffling seed.
        start_index: the first step used (default 0).
        end_index: the step after the last used (default ``len(data)``).

    Returns:
        An ``ft.data.Dataset`` of windows, or of ``(windows, targets)`` pairs.
    """
    _check(data, start_index, end_index, sampling_rate, sequence_stride)
    start_index = start_index or 0
    end_index = len(data) if end_index is None else end_index
    count = end_index - start_index - (sequence_length - 1) * sampling_rate
    if targets is not None:
        count = min(count, len(targets))
    positions = np.arange(0, max(count, 0), sequence_stride)
    if shuffle:
        np.random.RandomState(np.random.randint(1e6) if seed is None else seed).shuffle(positions)
    values = np.asarray(data.numpy() if hasattr(data, "numpy") else data)[start_index:end_index]
    offsets = np.arange(sequence_length) * sampling_rate
    windows = values[positions[:, None] + offsets[None, :]] if len(positions) else values[:0]
    if targets is None:
        dataset = ft_data.Dataset.from_tensor_slices(windows)
    else:
        labels = np.asarray(targets.numpy() if hasattr(targets, "numpy") else targets)
        dataset = ft_data.Dataset.from_tensor_slices(
            (windows, labels[start_index:end_index][positions])
        )
    return dataset if batch_size is None else dataset.batch(batch_size)
