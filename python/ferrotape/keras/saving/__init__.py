"""``ft.keras.saving`` (Keras 3's ``keras.saving``): whole-model ``.keras`` files
(``save_model``/``load_model``), weight files (``.weights.h5`` in Keras 3's HDF5 layout, or
``.safetensors``), and the registry that lets configs name custom classes.

Laid out as ``keras.src.saving``: ``saving_api`` picks the format from the file name,
``saving_lib`` reads and writes Keras 3's layouts, ``safetensors_file`` the safetensors
files, ``file_io`` the atomic writes every file goes through.

>>> import os, tempfile, numpy as np, ferrotape as ft
>>> model = ft.keras.Sequential([ft.keras.Input(shape=(2,)), ft.keras.layers.Dense(1)])
>>> path = os.path.join(tempfile.mkdtemp(), "model.keras")
>>> ft.keras.saving.save_model(model, path)
>>> ft.keras.saving.load_model(path).get_weights()[0].shape
(2, 1)
"""

from ..object_registration import (
    CustomObjectScope,
    custom_object_scope,
    deserialize_keras_object,
    get_custom_objects,
    get_registered_name,
    get_registered_object,
    register_keras_serializable,
    serialize_keras_object,
)
from .safetensors_file import load_weights_file, save_weights_file
from .saving_api import load_model, load_weights, save_model, save_weights

__all__ = [
    "CustomObjectScope",
    "custom_object_scope",
    "deserialize_keras_object",
    "get_custom_objects",
    "get_registered_name",
    "get_registered_object",
    "load_model",
    "load_weights",
    "load_weights_file",
    "register_keras_serializable",
    "save_model",
    "save_weights",
    "save_weights_file",
    "serialize_keras_object",
]
