"""``Bidirectional`` (Keras 3's ``keras.src.layers.rnn.bidirectional``).

>>> import ferrotape as ft
>>> layer = ft.keras.layers.Bidirectional(ft.keras.layers.LSTM(4, return_sequences=True))
>>> layer(ft.ones([2, 5, 3])).shape
TensorShape([2, 5, 8])
"""

from .... import _core
from ... import object_registration
from ..core.wrapper import Wrapper
from ..layer import Layer

_MERGES = ("sum", "mul", "ave", "concat", None)


def _renamed_copy(layer, prefix, **changes):
    """A fresh layer with ``layer``'s config, named ``prefix + name`` (and ``changes``)."""
    config = object_registration.serialize_keras_object(layer)
    name = layer.name
    for p in ("forward_", "backward_"):
        name = name[len(p) :] if name.startswith(p) else name
    config["config"] = {**config["config"], "name": prefix + name, **changes}
    return object_registration.deserialize_keras_object(config)


class Bidirectional(Wrapper):
    """Runs an RNN layer over the sequence forwards (``forward_layer``, a copy of ``layer``)
    and backwards (``backward_layer``, a copy with ``go_backwards=True`` unless given) and
    merges the two outputs: ``concat`` (default) along the features, ``sum``, ``mul``,
    ``ave``, or ``None`` for the pair. With ``return_sequences`` the backward outputs are put
    back in time order first; with ``return_state`` the forward then the backward final states
    follow the output. ``initial_state`` is the forward states then the backward ones."""

    def __init__(self, layer, merge_mode="concat", weights=None, backward_layer=None, **kwargs):
        if not isinstance(layer, Layer):
            raise ValueError(
                "Please initialize `Bidirectional` layer with a `keras.layers.Layer` "
                f"instance. Received: {layer}"
            )
        if backward_layer is not None and not isinstance(backward_layer, Layer):
            raise ValueError(
                "`backward_layer` need to be a `keras.layers.Layer` instance. "
                f"Received: {backward_layer}"
            )
        if merge_mode not in _MERGES:
            raise ValueError(
                f"Invalid merge mode. Received: {merge_mode}. Merge mode should be one of "
                '{"sum", "mul", "ave", "concat", None}'
            )
        if weights is not None:
            raise ValueError("Bidirectional: `weights` is not supported; set them after build")
        super().__init__(layer, **kwargs)
        forward = _renamed_copy(layer, "forward_")
        backward = backward_layer or _renamed_copy(layer, "backward_", go_backwards=True)
        if forward.go_backwards == backward.go_backwards:
            raise ValueError(
                "Forward layer and backward layer should have different `go_backwards` value. "
                f"Received: forward_layer.go_backwards {forward.go_backwards}, "
                f"backward_layer.go_backwards={backward.go_backwards}"
            )
        for attribute in ("stateful", "return_sequences", "return_state"):
            if getattr(forward, attribute) != getattr(backward, attribute):
                raise ValueError(
                    "Forward layer and backward layer are expected to have the same value for "
                    f'attribute "{attribute}", got "{getattr(forward, attribute)}" for forward '
                    f'layer and "{getattr(backward, attribute)}" for backward layer'
                )
        for rnn in (forward, backward):
            # Masked steps of the sequences must come out as 0 on both sides.
            rnn.zero_output_for_mask = rnn.return_sequences
        self.forward_layer = forward
        self.backward_layer = backward
        # The given layer is only a template: the copies hold the weights.
        object.__setattr__(self, "layer", layer)
        self.merge_mode = merge_mode
        self.stateful = layer.stateful
        self.return_sequences = layer.return_sequences
        self.return_state = layer.return_state
        self.supports_masking = True

    def build(self, sequences_shape, initial_state_shape=None):
        for rnn in (self.forward_layer, self.backward_layer):
            if not rnn.built:
                rnn.build(sequences_shape)
                rnn.built = True

    def call(self, sequences, initial_state=None, mask=None, training=None):
        forward_state = backward_state = None
        if initial_state is not None:
            half = len(initial_state) // 2
            forward_state, backward_state = initial_state[:half], initial_state[half:]
        kwargs = {"mask": mask, "training": training}
        y = self.forward_layer(sequences, initial_state=forward_state, **kwargs)
        y_rev = self.backward_layer(sequences, initial_state=backward_state, **kwargs)
        states = []
        if self.return_state:
            states = list(y[1:]) + list(y_rev[1:])
            y, y_rev = y[0], y_rev[0]
        if self.return_sequences:
            y_rev = y_rev[:, ::-1]
        if self.merge_mode == "concat":
            output = _core.concat([y, y_rev], -1)
        elif self.merge_mode == "sum":
            output = y + y_rev
        elif self.merge_mode == "ave":
            output = (y + y_rev) / 2.0
        elif self.merge_mode == "mul":
            output = y * y_rev
        else:
            output = [y, y_rev]
        if self.return_state:
            return (output if isinstance(output, list) else [output]) + states
        return output

    def compute_mask(self, inputs, previous_mask):
        """The output's mask: the input's with ``return_sequences`` (for each of the pair when
        ``merge_mode`` is None), else None; None for each state with ``return_state``.

        Args:
            inputs: The sequences.
            previous_mask: Their ``[batch, steps]`` mask, or None.

        Returns:
            The mask, or a list of them.
        """
        del inputs
        mask = previous_mask[0] if isinstance(previous_mask, (list, tuple)) else previous_mask
        if self.return_sequences:
            output_mask = [mask, mask] if self.merge_mode is None else [mask]
        else:
            output_mask = [None, None] if self.merge_mode is None else [None]
        if self.return_state:
            states = len(self.forward_layer.state_size) + len(self.backward_layer.state_size)
            return output_mask + [None] * states
        return output_mask if len(output_mask) > 1 else output_mask[0]

    def reset_states(self):
        """Zeroes both directions' states (stateful layers)."""
        self.forward_layer.reset_states()
        self.backward_layer.reset_states()

    def get_config(self):
        config = {**super().get_config(), "merge_mode": self.merge_mode}
        config["backward_layer"] = object_registration.serialize_keras_object(self.backward_layer)
        return config

    @classmethod
    def from_config(cls, config, custom_objects=None):
        """A Bidirectional layer made from ``get_config``'s output.

        Args:
            config: The dict ``get_config`` returned.
            custom_objects: Classes the wrapped layers' configs may name.

        Returns:
            The new layer.
        """
        config = dict(config)
        backward = config.pop("backward_layer", None)
        if backward is not None:
            config["backward_layer"] = object_registration.deserialize_keras_object(
                backward, custom_objects=custom_objects
            )
        return super().from_config(config, custom_objects=custom_objects)
