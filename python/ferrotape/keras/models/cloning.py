"""``clone_model`` (Keras 3's ``keras.src.models.cloning``)."""

from ..layers.core.input_layer import InputLayer
from .functional import Functional
from .sequential import Sequential


def clone_model(model, input_tensors=None, clone_function=None):
    """A new model with the same layers rebuilt from their configs (fresh weights, as Keras);
    for a Sequential model ``clone_function(layer)`` may build each new layer instead. A
    functional model is rebuilt from its config (``get_config``/``from_config``)."""
    if input_tensors is not None:
        raise ValueError("clone_model: input_tensors is not supported by ferrotape")
    if isinstance(model, Functional) and clone_function is None:
        return type(model).from_config(model.get_config())
    if not isinstance(model, Sequential):
        raise ValueError(
            f"clone_model: only Sequential and functional models (the latter without "
            f"clone_function) can be cloned by ferrotape, received "
            f"{type(model).__name__}"
        )

    def rebuild(layer):
        return layer.__class__.from_config(layer.get_config())

    clone = clone_function or rebuild
    cloned = Sequential(name=model.name + "_clone")
    if model._input_layer is not None:
        cloned.add(InputLayer(batch_shape=model._input_layer.batch_shape))
    for layer in model.layers:
        cloned.add(clone(layer), rebuild=False)
    cloned._maybe_rebuild()
    return cloned
