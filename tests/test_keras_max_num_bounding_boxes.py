"""``MaxNumBoundingBoxes`` cuts and pads boxes and labels to ``max_number`` (hand values), and
agrees with Keras where TensorFlow is installed."""

import numpy as np
import pytest

import ferrotape as ft

IMAGES = np.arange(2 * 4 * 4 * 3, dtype="uint8").reshape(2, 4, 4, 3)
BOXES = {
    "boxes": np.array(
        [[[1, 2, 3, 4], [5, 6, 7, 8], [0, 0, 5, 5]], [[1, 1, 2, 2], [3, 3, 4, 4], [0, 0, 1, 1]]],
        "float32",
    ),
    "labels": np.array([[1, 2, 3], [4, 5, 6]]),
}


def test_cuts_and_pads_boxes_and_labels():
    layer = ft.keras.layers.MaxNumBoundingBoxes(2, bounding_box_format="xyxy")
    out = layer({"images": IMAGES, "bounding_boxes": BOXES})
    assert out["bounding_boxes"]["boxes"].numpy().tolist() == BOXES["boxes"][:, :2].tolist()
    assert out["bounding_boxes"]["labels"].numpy().tolist() == [[1, 2], [4, 5]]
    padded = ft.keras.layers.MaxNumBoundingBoxes(4, fill_value=-7, bounding_box_format="xyxy")(
        {"images": IMAGES, "bounding_boxes": BOXES, "labels": np.array([0, 1])}, training=False
    )
    assert padded["bounding_boxes"]["boxes"].numpy()[:, 3].tolist() == [[-7.0] * 4] * 2
    assert padded["bounding_boxes"]["labels"].numpy().tolist() == [[1, 2, 3, -7], [4, 5, 6, -7]]
    np.testing.assert_array_equal(np.asarray(padded["images"]), IMAGES)  # untouched
    assert np.asarray(padded["labels"]).tolist() == [0, 1]


def test_format_is_required_and_config_round_trips():
    layer = ft.keras.layers.MaxNumBoundingBoxes(3)
    with pytest.raises(ValueError, match="bounding_box_format"):
        layer({"images": IMAGES, "bounding_boxes": BOXES})
    np.testing.assert_array_equal(np.asarray(layer(IMAGES)), IMAGES)
    config = ft.keras.layers.MaxNumBoundingBoxes(3, -2, "xywh").get_config()
    again = ft.keras.layers.MaxNumBoundingBoxes.from_config(config)
    assert (again.max_number, again.fill_value, again.bounding_box_format) == (3, -2, "xywh")
    shape = layer.compute_output_shape(
        {"images": (2, 4, 4, 3), "bounding_boxes": {"boxes": (2, 9, 4), "labels": (2, 9)}}
    )
    assert shape["bounding_boxes"] == {"boxes": (2, 3, 4), "labels": (2, 3)}


def test_matches_keras():
    keras = pytest.importorskip("keras", reason="Keras 3 (with TensorFlow) is not installed")
    for number in (2, 5):
        data = {"images": IMAGES, "bounding_boxes": BOXES}
        theirs = keras.layers.MaxNumBoundingBoxes(number, bounding_box_format="xyxy")(data)
        ours = ft.keras.layers.MaxNumBoundingBoxes(number, bounding_box_format="xyxy")(data)
        for key in ("boxes", "labels"):
            np.testing.assert_array_equal(
                ours["bounding_boxes"][key].numpy(), np.asarray(theirs["bounding_boxes"][key])
            )
