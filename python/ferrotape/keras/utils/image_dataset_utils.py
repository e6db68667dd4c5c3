"""``image_dataset_from_directory`` (Keras 3's ``keras.src.utils.image_dataset_utils``):
a ``tf.data``-style data set of the images in a directory tree, labelled by subdirectory.
Images are decoded with Pillow (``load_img``) and resized with ``ft.image.resize``."""

import numpy as np

from ... import data as ft_data
from ... import image as ft_image
from ..backend_config import image_data_format
from . import dataset_utils
from .image_utils import img_to_array, load_img

ALLOWLIST_FORMATS = (".bmp", ".gif", ".jpeg", ".jpg", ".png")
_CHANNELS = {"rgb": 3, "rgba": 4, "grayscale": 1}


def _crop_to_aspect(array, size):
    """The centre of ``array`` with the aspect ratio of ``size`` (Keras's ``smart_resize``)."""
    height, width = array.shape[:2]
    target_h, target_w = size
    crop_h = max(min(height, int(width * target_h / target_w)), 1)
    crop_w = max(min(width, int(height * target_w / target_h)), 1)
    top, left = (height - crop_h) // 2, (width - crop_w) // 2
    return array[top : top + crop_h, left : left + crop_w]


def _load(path, size, color_mode, interpolation, crop, pad):
    array = img_to_array(load_img(path, color_mode=color_mode), "channels_last", "float32")
    if pad:  # Keras pads with tf.image.resize_with_pad
        return ft_image.resize_with_pad(array, size[0], size[1], method=interpolation).numpy()
    if crop:
        array = _crop_to_aspect(array, size)
    return ft_image.resize(array, size, method=interpolation).numpy()


def _dataset(paths, labels, label_mode, num_classes, options, shuffle, buffer, seed):
    size, color_mode, interpolation, crop, pad, data_format = options
    images = np.stack([_load(p, size, color_mode, interpolation, crop, pad) for p in paths])
    if data_format == "channels_first":
        images = images.transpose(0, 3, 1, 2)
    if label_mode == "binary":
        labels = np.asarray(labels, "float32")[:, None]
    elif label_mode == "categorical":
        labels = np.eye(num_classes, dtype="float32")[labels]
    elif label_mode == "int":
        labels = np.asarray(labels, "int32")
    parts = images if label_mode is None else (images, labels)
    dataset = ft_data.Dataset.from_tensor_slices(parts)
    return dataset.shuffle(buffer, seed=seed) if shuffle else dataset


def image_dataset_from_directory(
    directory,
    labels="inferred",
    label_mode="int",
    class_names=None,
    color_mode="rgb",
    batch_size=32,
    image_size=(256, 256),
    shuffle=True,
    seed=None,
    validation_split=None,
    subset=None,
    interpolation="bilinear",
    follow_links=False,
    crop_to_aspect_ratio=False,
    pad_to_aspect_ratio=False,
    data_format=None,
    verbose=True,
):
    """A data set of ``(images, labels)`` batches from a directory with one subdirectory per
    class (``main/class_a/*.png``, ``main/class_b/*.jpg``...), as Keras 3 builds it.

    Files are indexed in sorted order, class by class, then shuffled with ``seed``; with
    ``validation_split`` the last fraction is the validation subset. Images (bmp, gif, jpeg,
    png) are decoded and resized to ``image_size`` as float32; the training data set is also
    reshuffled every epoch (buffer ``8 * batch_size``).

    Args:
        directory: the root directory.
        labels: ``"inferred"`` (from the subdirectories), None (images only), or a list of
            integer labels in the sorted order of the file paths.
        label_mode: ``"int"``, ``"categorical"`` (one-hot), ``"binary"`` (float ``[n, 1]``,
            two classes) or None.
        class_names: the subdirectories to use, in this order (``labels="inferred"`` only).
        color_mode: ``"rgb"``, ``"rgba"`` or ``"grayscale"``.
        batch_size: the batch size, or None for single images.
        image_size: ``(height, width)`` (or one int) to resize to.
        shuffle: whether to shuffle (else alphanumeric order).
        seed: the shuffling seed.
        validation_split: the fraction reserved for validation.
        subset: ``"training"``, ``"validation"`` or ``"both"`` (a list of the two).
        interpolation: ``"bilinear"``, ``"nearest"`` or ``"bicubic"``.
        follow_links: whether to follow symbolic links to subdirectories.
        crop_to_aspect_ratio: centre-crop to ``image_size``'s aspect ratio before resizing.
        pad_to_aspect_ratio: zero-pad to that aspect ratio instead.
        data_format: ``"channels_last"`` or ``"channels_first"``.
        verbose: print how many files and classes were found.

    Returns:
        A ``Dataset`` (with ``class_names`` and ``file_paths`` attributes), or two of them for
        ``subset="both"``.

    Raises:
        ImportError: without Pillow.
        ValueError: for bad arguments, or a directory without images.
    """
    if labels not in ("inferred", None):
        if not isinstance(labels, (list, tuple)):
            raise ValueError(
                "`labels` argument should be a list/tuple of integer labels, of the same size "
                "as the number of image files in the target directory. If you wish to infer "
                "the labels from the subdirectory names in the target directory, pass "
                '`labels="inferred"`. If you wish to get a dataset that only contains images '
                f"(no labels), pass `labels=None`. Received: labels={labels}"
            )
        if class_names:
            raise ValueError(
                'You can only pass `class_names` if `labels="inferred"`. Received: '
                f"labels={labels}, and class_names={class_names}"
            )
    if label_mode not in {"int", "categorical", "binary", None}:
        raise ValueError(
            '`label_mode` argument must be one of "int", "categorical", "binary", or None. '
            f"Received: label_mode={label_mode}"
        )
    if labels is None or label_mode is None:
        labels, label_mode = None, None
    if color_mode not in _CHANNELS:
        raise ValueError(
            '`color_mode` must be one of {"rgb", "rgba", "grayscale"}. Received: '
            f"color_mode={color_mode}"
        )
    if isinstance(image_size, int):
        image_size = (image_size, image_size)
    elif not isinstance(image_size, (list, tuple)) or len(image_size) != 2:
        raise ValueError(
            "Invalid `image_size` value. Expected a tuple of 2 integers. Received: "
            f"image_size={image_size}"
        )
    interpolation = interpolation.lower()
    if interpolation not in ("bilinear", "nearest", "bicubic"):
        raise ValueError(
            "Argument `interpolation` should be one of ('bilinear', 'nearest', 'bicubic') "
            f"in ferrotape. Received: interpolation={interpolation}"
        )
    if crop_to_aspect_ratio and pad_to_aspect_ratio:
        raise ValueError(
            "Only one of `pad_to_aspect_ratio`, `crop_to_aspect_ratio` can be set to `True`."
        )
    dataset_utils.check_validation_split_arg(validation_split, subset, shuffle, seed)
    if seed is None:
        seed = np.random.randint(1e6)
    paths, labels, class_names = dataset_utils.index_directory(
        directory, labels, ALLOWLIST_FORMATS, class_names, shuffle, seed, follow_links, verbose
    )
    if label_mode == "binary" and len(class_names) != 2:
        raise ValueError(
            'When passing `label_mode="binary"`, there must be exactly 2 class_names. '
            f"Received: class_names={class_names}"
        )
    options = (
        tuple(image_size),
        color_mode,
        interpolation,
        crop_to_aspect_ratio,
        pad_to_aspect_ratio,
        data_format or image_data_format(),
    )
    buffer = batch_size * 8 if batch_size is not None else 1024
    num_classes = len(class_names) if class_names else 0
    subsets = ["training", "validation"] if subset == "both" else [subset]
    datasets = []
    for part in subsets:
        part_paths, part_labels = dataset_utils.get_training_or_validation_split(
            paths, labels, validation_split, part
        )
        if not part_paths:
            kind = {"training": "training ", "validation": "validation "}.get(part, "")
            kind = kind if subset == "both" else ""
            raise ValueError(
                f"No {kind}images found in directory {directory}. Allowed formats: "
                f"{ALLOWLIST_FORMATS}"
            )
        reshuffle = shuffle and part != "validation" if subset == "both" else shuffle
        dataset = _dataset(
            part_paths, part_labels, label_mode, num_classes, options, reshuffle, buffer, seed
        )
        if batch_size is not None:
            dataset = dataset.batch(batch_size)
        dataset.class_names = class_names
        dataset.file_paths = part_paths
        datasets.append(dataset)
    return datasets if subset == "both" else datasets[0]
