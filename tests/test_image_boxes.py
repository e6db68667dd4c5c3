"""ft.image's box ops without TensorFlow: non-max suppression against a plain greedy reference
and hand-computed Soft-NMS scores, crop_and_resize against per-pixel bilinear sampling (with its
gradient), and draw_bounding_boxes on a small canvas."""

import math

import numpy as np
import pytest
from test_keras_layers import fd_grad

import ferrotape as ft

RNG = np.random.default_rng(5)


def iou(a, b):
    ya, xa = sorted(a[::2]), sorted(a[1::2])
    yb, xb = sorted(b[::2]), sorted(b[1::2])
    inter = max(0.0, min(ya[1], yb[1]) - max(ya[0], yb[0])) * max(
        0.0, min(xa[1], xb[1]) - max(xa[0], xb[0])
    )
    area_a = (ya[1] - ya[0]) * (xa[1] - xa[0])
    area_b = (yb[1] - yb[0]) * (xb[1] - xb[0])
    return 0.0 if area_a <= 0 or area_b <= 0 else inter / (area_a + area_b - inter)


def greedy_nms(boxes, scores, size, threshold, score_threshold):
    """Best score first (lower index among ties), kept unless it overlaps a kept box by more
    than the threshold."""
    kept = []
    for i in sorted(range(len(scores)), key=lambda i: (-scores[i], i)):
        if len(kept) == size or scores[i] <= score_threshold:
            break
        if all(iou(boxes[i], boxes[j]) <= threshold for j in kept):
            kept.append(i)
    return kept


def random_boxes(n):
    corner = RNG.random((n, 2))
    boxes = np.concatenate([corner, corner + RNG.random((n, 2)) * 0.4], 1)
    return boxes, np.round(RNG.random(n) * 8) / 8  # rounded scores: ties happen


@pytest.mark.parametrize("threshold, score_threshold", [(0.5, -np.inf), (0.2, 0.3), (0.0, 0.0)])
def test_non_max_suppression_matches_greedy_reference(threshold, score_threshold):
    for _ in range(10):
        boxes, scores = random_boxes(25)
        want = greedy_nms(boxes, scores, 8, threshold, score_threshold)
        got = ft.image.non_max_suppression(boxes, scores, 8, threshold, score_threshold)
        assert got.dtype == ft.int32 and got.numpy().tolist() == want
        idx, kept = ft.image.non_max_suppression_with_scores(
            boxes, scores, 8, threshold, score_threshold
        )
        assert idx.numpy().tolist() == want
        np.testing.assert_allclose(kept.numpy(), scores[want])
        overlaps = np.array([[iou(a, b) for b in boxes] for a in boxes])
        by_matrix = ft.image.non_max_suppression_overlaps(
            overlaps, scores, 8, threshold, score_threshold
        )
        assert by_matrix.numpy().tolist() == want


def test_soft_nms_decays_overlapping_scores():
    boxes = [[0, 0, 1, 1], [0, 0.5, 1, 1.5], [0, 0.9, 1, 1.9]]
    idx, kept = ft.image.non_max_suppression_with_scores(
        boxes, [0.9, 0.8, 0.85], 3, 0.0, soft_nms_sigma=0.5
    )
    # Each later box is multiplied by exp(-iou^2 / (2 * 0.5)) for every box selected before it.
    iou_02, iou_01, iou_12 = 0.1 / 1.9, 0.5 / 1.5, 0.6 / 1.4
    want = [0.9, 0.85 * math.exp(-(iou_02**2)), 0.8 * math.exp(-(iou_01**2) - iou_12**2)]
    assert idx.numpy().tolist() == [0, 2, 1]
    np.testing.assert_allclose(kept.numpy(), want, rtol=1e-6)


def test_padded_and_combined_suppression():
    boxes, scores = random_boxes(20)
    batch = np.stack([boxes, boxes[::-1]]), np.stack([scores, scores[::-1]])
    idx, valid = ft.image.non_max_suppression_padded(*batch, 30, 0.3, pad_to_max_output_size=True)
    assert idx.shape == [2, 30] and valid.shape == [2]
    for b in range(2):
        want = greedy_nms(batch[0][b], batch[1][b], 30, 0.3, -np.inf)
        assert valid.numpy()[b] == len(want)
        assert idx.numpy()[b].tolist() == want + [0] * (30 - len(want))
    with pytest.raises(ValueError, match="pad_to_max_output_size must be True"):
        ft.image.non_max_suppression_padded(*batch, 3)
    shared = [[[[0.0, 0.0, 1.0, 1.0]], [[0.0, 0.0, 1.0, 1.0]], [[-0.5, 2.0, 0.5, 3.0]]]]
    class_scores = [[[0.9, 0.1], [0.8, 0.7], [0.3, 0.95]]]
    boxes_out, scores_out, classes, valid = ft.image.combined_non_max_suppression(
        shared, class_scores, 2, 4, 0.5, 0.2
    )
    # class 0 keeps box 0 (0.9) and box 2 (0.3); class 1 keeps box 2 (0.95) and box 1 (0.7).
    np.testing.assert_allclose(scores_out.numpy(), [[0.95, 0.9, 0.7, 0.3]])
    np.testing.assert_array_equal(classes.numpy(), [[1, 0, 1, 0]])
    np.testing.assert_allclose(boxes_out.numpy()[0, 0], [0.0, 1.0, 0.5, 1.0])  # clipped to [0, 1]
    assert valid.numpy().tolist() == [4]


def bilinear_crop_ref(image, box, size, fill):
    h, w = image.shape[:2]
    y1, x1, y2, x2 = box
    out = np.zeros((*size, image.shape[2]))
    for i in range(size[0]):
        y = (
            y1 * (h - 1) + i * (y2 - y1) * (h - 1) / (size[0] - 1)
            if size[0] > 1
            else 0.5 * (y1 + y2) * (h - 1)
        )
        for j in range(size[1]):
            x = (
                x1 * (w - 1) + j * (x2 - x1) * (w - 1) / (size[1] - 1)
                if size[1] > 1
                else 0.5 * (x1 + x2) * (w - 1)
            )
            if not (0 <= y <= h - 1 and 0 <= x <= w - 1):
                out[i, j] = fill
                continue
            t, lft = math.floor(y), math.floor(x)
            b, r = math.ceil(y), math.ceil(x)
            fy, fx = y - t, x - lft
            top = image[t, lft] * (1 - fx) + image[t, r] * fx
            bottom = image[b, lft] * (1 - fx) + image[b, r] * fx
            out[i, j] = top * (1 - fy) + bottom * fy
    return out


def test_crop_and_resize_matches_bilinear_sampling_with_gradient():
    image = RNG.random((2, 5, 6, 2))
    boxes = np.array([[0.1, 0.2, 0.8, 0.9], [-0.2, 0.3, 1.3, 0.6], [0.9, 0.9, 0.1, 0.1]])
    where = [0, 1, 1]
    got = ft.image.crop_and_resize(image, boxes, where, [3, 4], extrapolation_value=0.5)
    assert got.dtype == ft.float32
    want = [bilinear_crop_ref(image[i], b, (3, 4), 0.5) for b, i in zip(boxes, where, strict=True)]
    np.testing.assert_allclose(got.numpy(), want, atol=1e-6)
    nearest = ft.image.crop_and_resize(image, boxes[:1], [0], [1, 1], method="nearest").numpy()
    np.testing.assert_allclose(nearest[0, 0, 0], image[0, 2, 3], rtol=1e-6)  # centre (1.8, 2.75)
    # The crop is linear in the image, so unit-size differences are exact up to float32.
    w = RNG.standard_normal((3, 3, 4, 2))

    def loss(x):
        return float(ft.reduce_sum(ft.image.crop_and_resize(x, boxes, where, [3, 4]) * w))

    x = ft.constant(image)
    with ft.GradientTape() as tape:
        tape.watch(x)
        y = ft.reduce_sum(ft.cast(ft.image.crop_and_resize(x, boxes, where, [3, 4]), "float64") * w)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), fd_grad(loss, image, 0.5), atol=1e-5)
    with pytest.raises(ValueError, match="box_indices must be in"):
        ft.image.crop_and_resize(image, boxes, [0, 1, 2], [2, 2])


def test_draw_bounding_boxes_outlines_each_box_in_its_colour():
    canvas = np.zeros((1, 5, 6, 3))
    boxes = [[[0.0, 0.0, 0.5, 0.4], [0.5, 0.6, 1.0, 1.0]]]
    colors = [[1.0, 0.0, 0.0, 1.0], [0.0, 0.0, 1.0, 1.0]]
    out = ft.image.draw_bounding_boxes(canvas, boxes, colors).numpy()[0]
    red = out[..., 0] == 1
    blue = out[..., 2] == 1
    # Rows floor(y * 4), columns floor(x * 5): red spans rows 0-2, columns 0-2.
    assert red[[0, 2], 0:3].all() and red[0:3, [0, 2]].all() and not red[1, 1]
    assert blue[[2, 4], 3:6].all() and blue[2:5, [3, 5]].all() and not blue[3, 4]
    assert red.sum() == 8 and blue.sum() == 8


def test_box_ops_convert_and_size_their_arguments_as_tf_does():
    box, score = [[0.0, 0.0, 1.0, 1.0]], [0.9]
    # max_output_size is int32: 2**40 wraps to 0 (TensorFlow selects nothing).
    assert ft.image.non_max_suppression(box, score, 2**40).numpy().tolist() == []
    assert ft.image.non_max_suppression_overlaps([[1.0]], score, 2**40).numpy().tolist() == []
    with pytest.raises(ft.errors.InvalidArgumentError, match="must be non-negative"):
        ft.image.non_max_suppression(box, score, -1)
    with pytest.raises(ft.errors.InvalidArgumentError, match="must be positive"):
        ft.image.combined_non_max_suppression([[[[0.0, 0.0, 1.0, 1.0]]]], [[[0.9]]], 1, -1)
    # A size that cannot fit is refused before numpy allocates it (was numpy's MemoryError).
    many_boxes, many_scores = np.zeros((4096, 1, 4)), np.zeros((4096, 1))
    with pytest.raises(ft.errors.ResourceExhaustedError, match="non_max_suppression_padded"):
        ft.image.non_max_suppression_padded(
            many_boxes, many_scores, 2**31 - 1, pad_to_max_output_size=True
        )
    with pytest.raises(ft.errors.ResourceExhaustedError, match="combined_non_max_suppression"):
        ft.image.combined_non_max_suppression(
            many_boxes[:, :, None], many_scores[:, :, None], 2**31 - 1, 2**31 - 1
        )
    image = ft.ones([1, 2, 2, 1])
    with pytest.raises(ft.errors.ResourceExhaustedError, match="crop_and_resize: OOM"):
        ft.image.crop_and_resize(image, box, [0], [2**31 - 1, 2**31 - 1])
    with pytest.raises(ft.errors.InvalidArgumentError, match="crop_size must be 2 positive"):
        ft.image.crop_and_resize(image, box, [0], [2**40, 2])  # wraps to 0
    # box_indices wrap too: 2**40 is image 0, as in TensorFlow.
    assert ft.image.crop_and_resize(image, box, [2**40], [2, 2]).numpy().tolist() == [
        [[[1.0], [1.0]], [[1.0], [1.0]]]
    ]
    with pytest.raises(TypeError, match="Expected float for argument 'extrapolation_value'"):
        ft.image.crop_and_resize(image, box, [0], [2, 2], extrapolation_value="a")
    for bad in ([["a", 0, 1, 1]], [[0.0, 0.0, 1.0, 1.0], [0.0]]):
        with pytest.raises((TypeError, ValueError)) as info:
            ft.image.non_max_suppression(bad, [0.9], 1)
        assert "could not convert" not in str(info.value)  # TensorFlow's conversion, not numpy's
