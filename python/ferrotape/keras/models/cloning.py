"""``clone_model`` (Keras 3's ``keras.src.models.cloning``)."""

from ..layers.core.input_layer import InputLayer
from .sequential import Sequential


def clone_model(model, input_tensors=None, clone_function=None):
    """A new Sequential model with the same layers rebuilt from their configs (fresh weights,
    as Keras); ``clone_function(layer)`` may build each new layer instead."""
    if input_tensors is not None:
        raise ValueError("clone_model: input_tensors is not supported by ferrotape")
    if not isinstance(model, Sequential):
        raise ValueError(
            f"clone_model: only Sequential models can be cloned by ferrotape, received "
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
