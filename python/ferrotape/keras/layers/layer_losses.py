"""The loss half of the base ``Layer`` (``add_loss``, ``losses``, weight regularizers), as in
Keras 3's ``keras.src.layers.layer``; a mixin so ``layer.py`` stays readable.
"""

from ... import _core, nest
from .layer_utils import _PENDING_LOSSES


class LayerLosses:
    """``add_loss``/``losses`` of :class:`~ferrotape.keras.layers.Layer`."""

    # ------------------------------------------------------------------ losses
    def add_loss(self, loss):
        """Adds scalar loss tensors (e.g. activity penalties) to ``losses`` until the next
        outermost call."""
        for value in nest.flatten(loss):
            if not isinstance(value, (_core.Tensor, _core.Variable)):
                value = _core.convert_to_tensor(value)
            self._losses.append(value)
        _PENDING_LOSSES.add(self)

    @property
    def losses(self):
        """Losses added during the last call (``add_loss``, activity regularizers) by this layer
        and its sublayers, then the weight regularization penalties of the trainable weights,
        computed from the current values."""
        layers = self._flatten_layers()
        result = []
        for layer in layers:
            result.extend(layer._losses)
        result.extend(regularizer(v) for v, regularizer in self._regularized_weights())
        return result

    def _regularized_weights(self):
        """(weight, regularizer) for the trainable weights that have a regularizer."""

        def collect():
            trainable = {id(v) for v in self._weights_of_kind("trainable")}
            return [
                (variable, regularizer)
                for layer in self._flatten_layers()
                for variable, regularizer in layer._regularizers
                if id(variable) in trainable
            ]

        return self._cached_walk("regularized", collect)

    def _activity_loss(self, output):
        """The activity regulariser's penalty of ``output``, divided by the batch size (Keras
        3 keeps the strength independent of the batch size so; an empty batch adds 0)."""
        loss = self.activity_regularizer(output)
        if len(output.shape) > 0:
            batch = output.shape[0]
            loss = loss / float(batch) if batch else loss * 0.0
        return loss

    def _clear_losses(self):
        if not _PENDING_LOSSES:
            return
        for layer in self._flatten_layers():
            if layer._losses:
                layer._losses.clear()
                _PENDING_LOSSES.discard(layer)
