"""``ft.keras.utils``, laid out as Keras 3's ``keras.src.utils``: ``numerical_utils``
(``to_categorical``, ``normalize``), ``progbar`` (``Progbar``), ``io_utils`` (interactive
logging), ``sequence_utils`` (``pad_sequences``), ``config`` (``Config``), ``rng_utils``,
``summary_utils``, ``dataset_utils`` (``split_dataset``), ``timeseries_dataset_utils``,
``image_utils`` (image arrays and files, through Pillow when installed);
re-exported here: the serialization registry (``keras.object_registration``),
``PyDataset``/``Sequence`` and the batch packing helpers (``keras.trainers``), and
``clear_session``, ``is_keras_tensor`` and ``standardize_dtype`` (``keras.backend``),
``get_source_inputs`` (``keras.layers.keras_tensor``).

>>> to_categorical([0, 2, 1], num_classes=3)
array([[1., 0., 0.],
       [0., 0., 1.],
       [0., 1., 0.]], dtype=float32)
>>> format_logs({"loss": 0.123456, "accuracy": 0.9, "lr": 1e-4})
'loss: 0.1235 - accuracy: 0.9000 - lr: 1.0000e-04'
"""

from ..backend import clear_session, is_keras_tensor
from ..backend_dtypes import standardize_dtype
from ..layers.keras_tensor import get_source_inputs
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
from ..trainers.data_adapters import pack_x_y_sample_weight, unpack_x_y_sample_weight
from ..trainers.py_dataset_adapter import PyDataset
from .config import Config
from .dataset_utils import split_dataset
from .file_utils import get_file
from .image_dataset_utils import image_dataset_from_directory
from .image_utils import array_to_img, img_to_array, load_img, save_img
from .io_utils import (
    disable_interactive_logging,
    enable_interactive_logging,
    is_interactive_logging_enabled,
)
from .model_visualization import model_to_dot, plot_model
from .numerical_utils import normalize, to_categorical
from .progbar import Progbar, ProgressBar, format_logs
from .rng_utils import set_random_seed
from .sequence_utils import pad_sequences
from .timeseries_dataset_utils import timeseries_dataset_from_array

# Keras 2's name for PyDataset.
Sequence = PyDataset

__all__ = [
    "Config",
    "Progbar",
    "PyDataset",
    "Sequence",
    "clear_session",
    "disable_interactive_logging",
    "enable_interactive_logging",
    "is_interactive_logging_enabled",
    "is_keras_tensor",
    "pack_x_y_sample_weight",
    "pad_sequences",
    "standardize_dtype",
    "unpack_x_y_sample_weight",
    "get_source_inputs",
    "array_to_img",
    "img_to_array",
    "load_img",
    "save_img",
    "split_dataset",
    "timeseries_dataset_from_array",
    "CustomObjectScope",
    "custom_object_scope",
    "deserialize_keras_object",
    "get_custom_objects",
    "get_file",
    "image_dataset_from_directory",
    "model_to_dot",
    "plot_model",
    "get_registered_name",
    "get_registered_object",
    "register_keras_serializable",
    "serialize_keras_object",
    "ProgressBar",
    "format_logs",
    "normalize",
    "set_random_seed",
    "to_categorical",
]
