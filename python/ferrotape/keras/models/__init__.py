"""``ft.keras.models``, laid out as Keras 3's ``keras.src.models``: ``Model`` (``model.py``),
``Sequential``, functional models and ``clone_model``. The models import ``layers`` and
``trainers``; neither imports the models.
"""

from ..trainers.data_adapters import unpack_x_y_sample_weight
from .cloning import clone_model
from .functional import Functional
from .model import Model
from .sequential import Sequential

__all__ = ["unpack_x_y_sample_weight", "Functional", "Model", "Sequential", "clone_model"]
