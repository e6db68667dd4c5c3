"""``ft.keras.models``, laid out as Keras 3's ``keras.src.models``: ``Model`` (``model.py``),
``Sequential``, functional models and ``clone_model``; ``load_model``, ``save_model`` and
``model_from_json`` for Keras 3's file formats (``keras.saving``). The models import ``layers`` and
``trainers``; neither imports the models.
"""

from ..saving.saving_api import load_model, save_model
from ..trainers.data_adapters import unpack_x_y_sample_weight
from .cloning import clone_model
from .functional import Functional
from .model import Model, model_from_json
from .sequential import Sequential

__all__ = [
    "unpack_x_y_sample_weight",
    "Functional",
    "Model",
    "Sequential",
    "clone_model",
    "load_model",
    "model_from_json",
    "save_model",
]
