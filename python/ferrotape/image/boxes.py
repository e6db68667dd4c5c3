"""Bounding boxes: non-max suppression (greedy, soft, padded, per class), ``crop_and_resize``
and ``draw_bounding_boxes``. Boxes are ``[y1, x1, y2, x2]``, in either corner order.

Suppression picks indices, which have no gradient, so it runs in numpy; ``crop_and_resize``
samples the image with gathers, so its result is differentiable with respect to the image.
"""

import heapq
import math

import numpy as np

from .. import _core
from .._host_memory import check_host_size
from ..errors import InvalidArgumentError
from ._common import image_tensor


def _array(x, dtype=None):
    """An input's values in numpy, converted as TensorFlow converts it first (a string or a
    ragged list is TensorFlow's TypeError or ValueError, not numpy's)."""
    values = np.asarray(_core.convert_to_tensor(x).numpy())
    return values if dtype is None else values.astype(dtype)


def _ints(x):
    """An int32 input's values as int64: a tensor's as they are, anything else converted to
    int32 as TensorFlow does (a Python int past 32 bits wraps)."""
    if not _core.is_tensor(x):
        x = _core.convert_to_tensor(x, dtype="int32")
    return np.asarray(x.numpy()).astype(np.int64)


def _size(op, name, value):
    """A scalar int32 argument (``max_output_size``) as a Python int."""
    values = _ints(value)
    if values.ndim != 0:
        raise ValueError(f"{op}: {name} must be a scalar, received shape {list(values.shape)}")
    return int(values)


def _iou_matrix(boxes):
    """Intersection over union of every pair of ``[N, 4]`` boxes; 0 where an area is empty."""
    y1 = np.minimum(boxes[:, 0], boxes[:, 2])
    y2 = np.maximum(boxes[:, 0], boxes[:, 2])
    x1 = np.minimum(boxes[:, 1], boxes[:, 3])
    x2 = np.maximum(boxes[:, 1], boxes[:, 3])
    area = (y2 - y1) * (x2 - x1)
    h = np.clip(np.minimum(y2[:, None], y2[None]) - np.maximum(y1[:, None], y1[None]), 0, None)
    w = np.clip(np.minimum(x2[:, None], x2[None]) - np.maximum(x1[:, None], x1[None]), 0, None)
    inter = h * w
    union = area[:, None] + area[None] - inter
    with np.errstate(invalid="ignore", divide="ignore"):
        iou = np.where((area[:, None] > 0) & (area[None] > 0), inter / union, 0.0)
    return iou


def _suppress(similarity, scores, max_output_size, threshold, score_threshold, sigma=0.0):
    """TensorFlow's greedy (soft) NMS over a precomputed similarity matrix.

    Candidates come off a max-heap by score (lower index first among ties) and are compared
    with the boxes selected since they were last looked at. Hard NMS (``sigma == 0``) drops a
    candidate whose similarity to one of them is above ``threshold``; Soft-NMS instead decays
    its score by ``exp(-sim^2 / (2 sigma))`` (the threshold then plays no part, as in
    TensorFlow) and puts it back on the heap. Candidates whose score falls to
    ``score_threshold`` are dropped. Returns the selected indices and their scores.
    """
    scale = -0.5 / sigma if sigma > 0 else 0.0
    heap = [(-s, i, 0) for i, s in enumerate(scores) if s > score_threshold]
    heapq.heapify(heap)
    selected, selected_scores = [], []
    while heap and len(selected) < max_output_size:
        neg, index, begin = heapq.heappop(heap)
        score = original = -neg
        suppressed = False
        for j in range(len(selected) - 1, begin - 1, -1):
            sim = similarity[index, selected[j]]
            if sigma == 0.0 and sim > threshold:
                suppressed = True
                break
            score *= math.exp(scale * sim * sim)
            if score <= score_threshold:
                break
        if suppressed:
            continue
        if score == original:
            selected.append(index)
            selected_scores.append(score)
        elif score > score_threshold:
            heapq.heappush(heap, (-score, index, len(selected)))
    return selected, selected_scores


def _nms_args(op, boxes, scores, max_output_size):
    boxes, scores = _array(boxes, np.float64), _array(scores, np.float64)
    if boxes.ndim != 2 or boxes.shape[1] != 4 or scores.shape != (boxes.shape[0],):
        raise ValueError(
            f"{op}: boxes must be [num_boxes, 4] and scores [num_boxes], received "
            f"{list(boxes.shape)} and {list(scores.shape)}"
        )
    size = _size(op, "max_output_size", max_output_size)
    if size < 0:
        raise InvalidArgumentError(f"{op}: max_output_size must be non-negative, received {size}")
    return boxes, scores, size


def non_max_suppression(
    boxes, scores, max_output_size, iou_threshold=0.5, score_threshold=float("-inf"), name=None
):
    """Greedily selects boxes by descending score, skipping those that overlap a selected box
    by more than ``iou_threshold`` (intersection over union).

    Args:
        boxes: A ``[num_boxes, 4]`` float tensor of ``[y1, x1, y2, x2]`` boxes.
        scores: A ``[num_boxes]`` float tensor.
        max_output_size: The most boxes to select.
        iou_threshold: Boxes overlapping a selected one by more than this are suppressed.
        score_threshold: Boxes scoring this or less are never selected.
        name: Ignored (TensorFlow's op name).

    Returns:
        An int32 tensor ``[selected]`` of indices into ``boxes``, best first.

    >>> import ferrotape as ft
    >>> boxes = [[0, 0, 1, 1], [0, 0.1, 1, 1.1], [0, 2, 1, 3]]
    >>> ft.image.non_max_suppression(boxes, [0.9, 0.8, 0.7], 3).numpy()
    array([0, 2], dtype=int32)
    """
    del name
    boxes, scores, size = _nms_args("non_max_suppression", boxes, scores, max_output_size)
    selected, _ = _suppress(
        _iou_matrix(boxes), scores, size, float(iou_threshold), float(score_threshold)
    )
    return _core.constant(np.array(selected, np.int32))


def non_max_suppression_with_scores(
    boxes,
    scores,
    max_output_size,
    iou_threshold=0.5,
    score_threshold=float("-inf"),
    soft_nms_sigma=0.0,
    name=None,
):
    """``non_max_suppression`` that also returns the scores, with optional Soft-NMS.

    With ``soft_nms_sigma > 0``, overlapping boxes are not dropped but have their score
    multiplied by ``exp(-iou^2 / (2 * soft_nms_sigma))`` (Bodla et al., 2017).

    Args:
        boxes: A ``[num_boxes, 4]`` float tensor.
        scores: A ``[num_boxes]`` float tensor.
        max_output_size: The most boxes to select.
        iou_threshold: The overlap above which a box is suppressed (hard NMS only: with
            ``soft_nms_sigma > 0`` TensorFlow ignores it, and so does ferrotape).
        score_threshold: Boxes whose (decayed) score falls to this are dropped.
        soft_nms_sigma: The Soft-NMS width; 0 is hard NMS.
        name: Ignored (TensorFlow's op name).

    Returns:
        A pair: int32 indices ``[selected]`` and their float scores ``[selected]``.

    >>> import ferrotape as ft
    >>> boxes = [[0, 0, 1, 1], [0, 0.5, 1, 1.5]]
    >>> idx, s = ft.image.non_max_suppression_with_scores(boxes, [0.9, 0.8], 2, 1.0,
    ...                                                    soft_nms_sigma=0.5)
    >>> idx.numpy(), s.numpy().round(4)
    (array([0, 1], dtype=int32), array([0.9   , 0.7159], dtype=float32))
    """
    del name
    op = "non_max_suppression_with_scores"
    boxes, scores, size = _nms_args(op, boxes, scores, max_output_size)
    sigma = float(soft_nms_sigma)
    if sigma < 0:
        raise ValueError(f"{op}: soft_nms_sigma must be non-negative, received {sigma}")
    selected, kept = _suppress(
        _iou_matrix(boxes), scores, size, float(iou_threshold), float(score_threshold), sigma
    )
    return _core.constant(np.array(selected, np.int32)), _core.constant(np.float32(kept))


def non_max_suppression_overlaps(
    overlaps,
    scores,
    max_output_size,
    overlap_threshold=0.5,
    score_threshold=float("-inf"),
    name=None,
):
    """``non_max_suppression`` with a given ``[num_boxes, num_boxes]`` overlap matrix in place
    of the boxes' IoU.

    Args:
        overlaps: A square float tensor: ``overlaps[i, j]`` is how much boxes i and j overlap.
        scores: A ``[num_boxes]`` float tensor.
        max_output_size: The most boxes to select.
        overlap_threshold: Boxes overlapping a selected one by more than this are suppressed.
        score_threshold: Boxes scoring this or less are never selected.
        name: Ignored (TensorFlow's op name).

    Returns:
        An int32 tensor ``[selected]`` of indices, best first.

    >>> import ferrotape as ft
    >>> overlaps = [[1.0, 0.9], [0.9, 1.0]]
    >>> ft.image.non_max_suppression_overlaps(overlaps, [0.5, 0.7], 2).numpy()
    array([1], dtype=int32)
    """
    del name
    op = "non_max_suppression_overlaps"
    matrix, scores = _array(overlaps, np.float64), _array(scores, np.float64)
    if matrix.ndim != 2 or matrix.shape != (scores.shape[0],) * 2:
        raise ValueError(
            f"{op}: overlaps must be [num_boxes, num_boxes] for scores of shape "
            f"{list(scores.shape)}, received {list(matrix.shape)}"
        )
    size = _size(op, "max_output_size", max_output_size)
    if size < 0:
        raise InvalidArgumentError(f"{op}: max_output_size must be non-negative, received {size}")
    selected, _ = _suppress(matrix, scores, size, float(overlap_threshold), float(score_threshold))
    return _core.constant(np.array(selected, np.int32))


def non_max_suppression_padded(
    boxes,
    scores,
    max_output_size,
    iou_threshold=0.5,
    score_threshold=float("-inf"),
    pad_to_max_output_size=False,
    name=None,
    sorted_input=False,
    canonicalized_coordinates=False,
    tile_size=512,
):
    """``non_max_suppression`` over batches, with the indices zero-padded to
    ``max_output_size``.

    Each batch entry selects what ``non_max_suppression`` selects (TensorFlow's tiled kernel
    agrees for boxes given as ``[y_min, x_min, y_max, x_max]``).

    Args:
        boxes: A float tensor ``[..., num_boxes, 4]``.
        scores: A float tensor ``[..., num_boxes]``.
        max_output_size: The most boxes to select per batch entry.
        iou_threshold: As in ``non_max_suppression``.
        score_threshold: As in ``non_max_suppression``.
        pad_to_max_output_size: Pad the indices to ``max_output_size``; required for batches.
        name: Ignored (TensorFlow's op name).
        sorted_input: Ignored (the order is found either way).
        canonicalized_coordinates: Ignored (both corner orders are accepted).
        tile_size: Ignored (a performance setting).

    Returns:
        A pair: int32 indices ``[..., max_output_size]`` (``[num_valid]`` unpadded), and the
        int32 number of valid indices per batch entry.

    Raises:
        ValueError: for batched boxes without ``pad_to_max_output_size``.

    >>> import ferrotape as ft
    >>> idx, n = ft.image.non_max_suppression_padded(
    ...     [[0, 0, 1, 1], [0, 0, 1, 1]], [0.9, 0.8], 3, pad_to_max_output_size=True)
    >>> idx.numpy(), n.numpy()
    (array([0, 0, 0], dtype=int32), np.int32(1))
    """
    del name, sorted_input, canonicalized_coordinates, tile_size
    op = "non_max_suppression_padded"
    all_boxes, all_scores = _array(boxes, np.float64), _array(scores, np.float64)
    if all_boxes.ndim > 2 and not pad_to_max_output_size:
        raise ValueError(f"{op}: pad_to_max_output_size must be True for batched input")
    size = _size(op, "max_output_size", max_output_size)
    if size < 0:
        raise InvalidArgumentError(f"{op}: max_output_size must be non-negative, received {size}")
    lead = all_boxes.shape[:-2]
    flat_boxes = all_boxes.reshape(-1, *all_boxes.shape[-2:])
    flat_scores = all_scores.reshape(-1, all_scores.shape[-1])
    check_host_size(op, [flat_boxes.shape[0], size], "int32")
    indices = np.zeros((flat_boxes.shape[0], size), np.int32)
    valid = np.zeros(flat_boxes.shape[0], np.int32)
    for b in range(flat_boxes.shape[0]):
        chosen, _ = _suppress(
            _iou_matrix(flat_boxes[b]),
            flat_scores[b],
            size,
            float(iou_threshold),
            float(score_threshold),
        )
        indices[b, : len(chosen)] = chosen
        valid[b] = len(chosen)
    if not pad_to_max_output_size:
        return _core.constant(indices[0, : valid[0]]), _core.constant(valid[0])
    return _core.constant(indices.reshape(*lead, size)), _core.constant(valid.reshape(lead))


def combined_non_max_suppression(
    boxes,
    scores,
    max_output_size_per_class,
    max_total_size,
    iou_threshold=0.5,
    score_threshold=float("-inf"),
    pad_per_class=False,
    clip_boxes=True,
    name=None,
):
    """Per-class non-max suppression for a batch, merged into the best ``max_total_size``
    detections per image.

    Args:
        boxes: ``[batch, num_boxes, q, 4]``: one box per class (``q = num_classes``) or one
            shared box (``q = 1``).
        scores: ``[batch, num_boxes, num_classes]``.
        max_output_size_per_class: The most boxes kept per class.
        max_total_size: The most detections kept per image.
        iou_threshold: As in ``non_max_suppression``.
        score_threshold: As in ``non_max_suppression``.
        pad_per_class: If true, the output holds ``min(max_total_size,
            max_output_size_per_class * num_classes)`` detections instead of ``max_total_size``.
        clip_boxes: Clip the boxes to ``[0, 1]``.
        name: Ignored (TensorFlow's op name).

    Returns:
        ``(nmsed_boxes [batch, k, 4], nmsed_scores [batch, k], nmsed_classes [batch, k],
        valid_detections [batch])``, zero-padded past the valid detections.

    >>> import ferrotape as ft
    >>> out = ft.image.combined_non_max_suppression(
    ...     [[[[0, 0, 1, 1]], [[0, 0, 1, 1]]]], [[[0.9, 0.1], [0.8, 0.7]]], 2, 3)
    >>> out[2].numpy(), out[3].numpy()
    (array([[0., 1., 0.]], dtype=float32), array([2], dtype=int32))
    """
    del name
    op = "combined_non_max_suppression"
    boxes, scores = _array(boxes, np.float64), _array(scores, np.float64)
    if boxes.ndim != 4 or scores.ndim != 3 or boxes.shape[:2] != scores.shape[:2]:
        raise ValueError(
            f"{op}: boxes must be [batch, num_boxes, q, 4] and scores [batch, num_boxes, "
            f"num_classes], received {list(boxes.shape)} and {list(scores.shape)}"
        )
    per_class = _size(op, "max_output_size_per_class", max_output_size_per_class)
    total = _size(op, "max_total_size", max_total_size)
    if per_class <= 0 or total <= 0:  # TensorFlow's kernel checks
        raise InvalidArgumentError(
            f"{op}: max_output_size_per_class and max_total_size must be positive, received "
            f"{per_class} and {total}"
        )
    classes = scores.shape[2]
    k = min(total, per_class * classes) if pad_per_class else total
    check_host_size(op, [boxes.shape[0], k, 4], "float32")
    out_boxes = np.zeros((boxes.shape[0], k, 4), np.float32)
    out_scores = np.zeros((boxes.shape[0], k), np.float32)
    out_classes = np.zeros((boxes.shape[0], k), np.float32)
    valid = np.zeros(boxes.shape[0], np.int32)
    for b in range(boxes.shape[0]):
        found = []
        for c in range(classes):
            class_boxes = boxes[b, :, c if boxes.shape[2] > 1 else 0]
            chosen, kept = _suppress(
                _iou_matrix(class_boxes),
                scores[b, :, c],
                per_class,
                float(iou_threshold),
                float(score_threshold),
            )
            found += [(s, c, i, class_boxes[i]) for i, s in zip(chosen, kept, strict=True)]
        # Best score first; among ties, the lower class, then the lower box index.
        found.sort(key=lambda item: (-item[0], item[1], item[2]))
        found = found[:k]
        valid[b] = len(found)
        for n, (s, c, _, box) in enumerate(found):
            out_boxes[b, n] = np.clip(box, 0, 1) if clip_boxes else box
            out_scores[b, n], out_classes[b, n] = s, c
    return tuple(_core.constant(a) for a in (out_boxes, out_scores, out_classes, valid))


def crop_and_resize(
    image,
    boxes,
    box_indices,
    crop_size,
    method="bilinear",
    extrapolation_value=0.0,
    name=None,
):
    """Crops each box out of its image and resizes it to ``crop_size`` (without keeping the
    aspect ratio).

    A box ``[y1, x1, y2, x2]`` is in normalized coordinates: 0 and 1 are the centres of the
    first and last pixels, so crop row ``i`` samples image row
    ``y1 * (H - 1) + i * (y2 - y1) * (H - 1) / (crop_height - 1)``. Samples outside the image
    take ``extrapolation_value``.

    Args:
        image: A 4-D tensor ``[batch, height, width, channels]``.
        boxes: A float tensor ``[num_boxes, 4]``.
        box_indices: An int tensor ``[num_boxes]``: the image each box is cut from.
        crop_size: ``[crop_height, crop_width]``, two positive ints.
        method: ``"bilinear"`` or ``"nearest"``.
        extrapolation_value: The value of samples outside the image.
        name: Ignored (TensorFlow's op name).

    Returns:
        A float32 tensor ``[num_boxes, crop_height, crop_width, channels]``.

    Gradient: with respect to ``image`` (the boxes are taken as constants).

    >>> import ferrotape as ft
    >>> x = ft.reshape(ft.range(16.0), [1, 4, 4, 1])
    >>> ft.image.crop_and_resize(x, [[0.0, 0.0, 1.0, 1.0]], [0], [2, 2])[0, :, :, 0].numpy()
    array([[ 0.,  3.],
           [12., 15.]], dtype=float32)
    """
    del name
    op = "crop_and_resize"
    x = image_tensor(op, image, ranks=(4,))
    if not x.dtype.is_floating:
        x = _core.cast(x, "float32")
    boxes, where, crop = _array(boxes, np.float64), _ints(box_indices), _ints(crop_size)
    if boxes.ndim != 2 or boxes.shape[1] != 4 or where.shape != (boxes.shape[0],):
        raise ValueError(
            f"{op}: boxes must be [num_boxes, 4] and box_indices [num_boxes], received "
            f"{list(boxes.shape)} and {list(where.shape)}"
        )
    if crop.shape != (2,) or (crop <= 0).any():
        raise InvalidArgumentError(
            f"{op}: crop_size must be 2 positive ints, received {crop.tolist()}"
        )
    if ((where < 0) | (where >= x.shape[0])).any():
        raise InvalidArgumentError(
            f"{op}: box_indices must be in [0, {x.shape[0]}), received {where}"
        )
    if method not in ("bilinear", "nearest"):
        raise ValueError(f"{op}: method must be 'bilinear' or 'nearest', received {method!r}")
    if isinstance(extrapolation_value, (str, bytes)):  # TensorFlow's make_float
        raise TypeError(
            f"{op}: Expected float for argument 'extrapolation_value' not {extrapolation_value!r}."
        )
    fill_value = float(extrapolation_value)
    batch, height, width, channels = x.shape
    # The index array of every output pixel, then the output itself.
    check_host_size(op, [boxes.shape[0], *crop.tolist()], "int64")
    check_host_size(op, [boxes.shape[0], *crop.tolist(), channels], "float32")

    def positions(lo, hi, size, count):
        if count > 1:
            return (
                lo[:, None] * (size - 1)
                + np.arange(count) * ((hi - lo) * (size - 1) / (count - 1))[:, None]
            )
        return np.broadcast_to((0.5 * (lo + hi) * (size - 1))[:, None], (lo.shape[0], 1))

    ys = positions(boxes[:, 0], boxes[:, 2], height, int(crop[0]))  # [n, ch]
    xs = positions(boxes[:, 1], boxes[:, 3], width, int(crop[1]))  # [n, cw]
    inside = ((ys >= 0) & (ys <= height - 1))[:, :, None] & ((xs >= 0) & (xs <= width - 1))[:, None]
    flat = _core.reshape(x, [-1, channels])
    base = where[:, None, None] * height * width

    def take(rows, cols):
        index = base + np.clip(rows, 0, height - 1)[:, :, None] * width
        index = index + np.clip(cols, 0, width - 1)[:, None, :]
        return _core.gather(flat, _core.constant(index.astype(np.int64)))

    if method == "nearest":
        out = take(np.rint(ys).astype(np.int64), np.rint(xs).astype(np.int64))
    else:
        top, left = np.floor(ys), np.floor(xs)
        fy = (ys - top)[:, :, None, None]
        fx = (xs - left)[:, None, :, None]
        top, left = top.astype(np.int64), left.astype(np.int64)
        bottom, right = np.ceil(ys).astype(np.int64), np.ceil(xs).astype(np.int64)
        dtype = x.dtype.as_numpy_dtype
        upper = take(top, left) * (1 - fx).astype(dtype) + take(top, right) * fx.astype(dtype)
        lower = take(bottom, left) * (1 - fx).astype(dtype) + take(bottom, right) * fx.astype(dtype)
        out = upper * (1 - fy).astype(dtype) + lower * fy.astype(dtype)
    mask = _core.constant(np.broadcast_to(inside[..., None], (*inside.shape, channels)).copy())
    fill = _core.fill(out.shape, fill_value)
    return _core.cast(_core.select(mask, out, _core.cast(fill, out.dtype)), "float32")


def draw_bounding_boxes(images, boxes, colors, name=None):
    """Draws the outline of each box on its image, one pixel wide.

    Box ``[y1, x1, y2, x2]`` (normalized: 0 and 1 are the first and last pixels) covers rows
    ``floor(y1 * (H - 1))`` to ``floor(y2 * (H - 1))``; box ``j`` takes colour
    ``colors[j % len(colors)]`` (its first ``channels`` entries). Boxes partly outside the image
    are drawn where they fall inside it.

    Args:
        images: A float tensor ``[batch, height, width, channels]`` (1 to 4 channels).
        boxes: A float tensor ``[batch, num_boxes, 4]``.
        colors: A float array ``[num_colors, 4]`` (RGBA, values in the image's range).
        name: Ignored (TensorFlow's op name).

    Returns:
        A tensor of ``images``' shape and dtype.

    >>> import ferrotape as ft
    >>> out = ft.image.draw_bounding_boxes(ft.zeros([1, 3, 3, 1]), [[[0, 0, 1, 1]]], [[1, 0, 0, 1]])
    >>> out[0, :, :, 0].numpy()
    array([[1., 1., 1.],
           [1., 0., 1.],
           [1., 1., 1.]], dtype=float32)
    """
    del name
    op = "draw_bounding_boxes"
    x = image_tensor(op, images, ranks=(4,))
    canvas = x.numpy().copy()
    boxes, palette = _array(boxes, np.float64), _array(colors, np.float64)
    if boxes.ndim != 3 or boxes.shape[0] != canvas.shape[0] or boxes.shape[2] != 4:
        raise ValueError(
            f"{op}: boxes must be [batch, num_boxes, 4] for images of batch {canvas.shape[0]}, "
            f"received {list(boxes.shape)}"
        )
    if palette.ndim != 2 or palette.shape[0] == 0 or palette.shape[1] < canvas.shape[-1]:
        raise ValueError(
            f"{op}: colors must be [num_colors, >= channels], received {list(palette.shape)}"
        )
    _, height, width, channels = canvas.shape
    for b in range(canvas.shape[0]):
        for j, (y1, x1, y2, x2) in enumerate(boxes[b]):
            color = palette[j % palette.shape[0], :channels]
            top, bottom = math.floor(y1 * (height - 1)), math.floor(y2 * (height - 1))
            left, right = math.floor(x1 * (width - 1)), math.floor(x2 * (width - 1))
            if top > bottom or left > right or bottom < 0 or right < 0:
                continue
            if top >= height or left >= width:
                continue
            rows = slice(max(top, 0), min(bottom, height - 1) + 1)
            cols = slice(max(left, 0), min(right, width - 1) + 1)
            for row in (top, bottom):
                if 0 <= row < height:
                    canvas[b, row, cols] = color
            for col in (left, right):
                if 0 <= col < width:
                    canvas[b, rows, col] = color
    return _core.constant(canvas)
