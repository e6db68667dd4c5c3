"""``ft.keras.layers.serialize`` and ``deserialize`` (Keras 3 defines them in
``keras.src.layers``'s ``__init__``).

>>> import ferrotape as ft
>>> config = ft.keras.layers.serialize(ft.keras.layers.Dense(3, name="d"))
>>> config["class_name"], config["config"]["units"]
('Dense', 3)
>>> ft.keras.layers.deserialize(config).units
3
"""

from .. import object_registration


def serialize(layer):
    """A layer as Keras's serialised dict (``module``, ``class_name``, ``config``...).

    Args:
        layer: A ``Layer``.

    Returns:
        A JSON-compatible dict that ``deserialize`` turns back into the layer.
    """
    return object_registration.serialize_keras_object(layer)


def deserialize(config, custom_objects=None):
    """The layer a ``serialize`` dict describes (built-in or registered classes, or those in
    ``custom_objects``).

    Args:
        config: The dict ``serialize`` returned.
        custom_objects: A dict of class names to classes, for custom layers.

    Returns:
        A new, unbuilt layer.
    """
    return object_registration.deserialize_keras_object(config, custom_objects=custom_objects)
