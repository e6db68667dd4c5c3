"""``RNN`` (Keras 3's ``keras.src.layers.rnn.rnn``): runs a cell over the steps of a
sequence. The loop is a Python loop over ferrotape ops, so the gradient (backpropagation
through time) is the tape's.

>>> import ferrotape as ft
>>> layer = ft.keras.layers.RNN(ft.keras.layers.SimpleRNNCell(4), return_sequences=True)
>>> layer(ft.ones([2, 5, 3])).shape
TensorShape([2, 5, 4])
"""

from .... import _core, nest
from ....framework_ops import init_scope
from ... import object_registration
from ..layer import Layer
from .stacked_rnn_cells import StackedRNNCells


def _select(keep, new, old):
    """``new`` where ``keep``, else ``old``, through nested lists of states."""
    if isinstance(new, (list, tuple)):
        return [_select(keep, n, o) for n, o in zip(new, old, strict=True)]
    return _core.select(keep, new, old)


def _flat(states):
    for s in states:
        if isinstance(s, (list, tuple)):
            yield from _flat(s)
        else:
            yield s


def _unflatten(template, flat):
    out = []
    for s in template:
        out.append(_unflatten(s, flat) if isinstance(s, (list, tuple)) else next(flat))
    return out


class RNN(Layer):
    """Applies ``cell`` (a layer with ``state_size`` whose ``call(inputs, states, training)``
    returns ``(output, new_states)``, or a list of them, stacked) to each step of
    ``[batch, steps, features]`` inputs. Returns the last output ``[batch, units]``, or every
    output ``[batch, steps, units]`` with ``return_sequences``, followed by the final states
    with ``return_state``. ``go_backwards`` runs from the last step (the outputs come in that
    order); ``stateful`` starts each call from the previous call's final states
    (``reset_states()`` zeroes them). The call takes ``initial_state``, a ``mask``
    ``[batch, steps]`` (a masked step keeps the states and repeats the previous output, or 0
    with ``zero_output_for_mask``) and ``training`` (the cells' dropout)."""

    def __init__(
        self,
        cell,
        return_sequences=False,
        return_state=False,
        go_backwards=False,
        stateful=False,
        unroll=False,
        zero_output_for_mask=False,
        **kwargs,
    ):
        if isinstance(cell, (list, tuple)):
            cell = StackedRNNCells(cell, dtype=kwargs.get("dtype"))
        if not callable(getattr(cell, "call", None)):
            raise ValueError(f"Argument `cell` should have a `call` method. Received: cell={cell}")
        state_size = getattr(cell, "state_size", None)
        if not isinstance(state_size, (list, tuple, int)):
            raise ValueError(
                "The RNN cell should have a `state_size` attribute (single integer or list of "
                f"integers, one integer per RNN state). Received: cell={cell}"
            )
        super().__init__(**kwargs)
        self.cell = cell
        self.return_sequences = bool(return_sequences)
        self.return_state = bool(return_state)
        self.go_backwards = bool(go_backwards)
        self.stateful = bool(stateful)
        # An eager loop is already unrolled; the flag is kept for the config.
        self.unroll = bool(unroll)
        self.zero_output_for_mask = bool(zero_output_for_mask)
        self.supports_masking = True
        self.single_state = isinstance(state_size, int)
        self.state_size = [state_size] if self.single_state else list(state_size)
        object.__setattr__(self, "states", None)

    def build(self, sequences_shape, initial_state_shape=None):
        if len(sequences_shape) < 3:
            raise ValueError(
                f"{type(self).__name__}: expected sequences of rank >= 3 [batch, steps, "
                f"features], received shape {tuple(sequences_shape)}"
            )
        if isinstance(self.cell, Layer) and not self.cell.built:
            self.cell.build((sequences_shape[0], *sequences_shape[2:]))
            self.cell.built = True

    def get_initial_state(self, batch_size):
        """Zero states for a batch (the cell's own ``get_initial_state`` if it has one).

        Args:
            batch_size: The number of sequences.

        Returns:
            A list of ``[batch_size, size]`` tensors, one per state.
        """
        if hasattr(self.cell, "get_initial_state"):
            states = self.cell.get_initial_state(batch_size)
            return list(states) if isinstance(states, (list, tuple)) else [states]
        return [
            _core.zeros([batch_size, size], dtype=self.compute_dtype) for size in self.state_size
        ]

    def reset_states(self):
        """Zeroes a stateful layer's states (the next call starts from zeros)."""
        for variable in _flat(self.states or ()):
            variable.assign(_core.zeros_like(variable))

    def _state_variables(self, batch):
        """The variables that carry a stateful layer's states from one call to the next, as
        Keras 3's (untracked: not among the weights): made as zeros on the first call, so that
        a traced call reads and writes them on every replay."""
        if self.states is None:
            with init_scope():  # made once, outside any trace being recorded
                initial = self.get_initial_state(batch)
                held = iter(
                    [_core.Variable(s, trainable=False, name="rnn_state") for s in _flat(initial)]
                )
                object.__setattr__(self, "states", _unflatten(initial, held))
        expected = next(_flat(self.states)).shape[0]
        if expected != batch:
            raise ValueError(
                f"{type(self).__name__}: if an RNN is stateful, the batch size of the input "
                "sequences must be the same as the batch size of the initial state. Expected "
                f"batch size: {expected}. Received batch size: {batch}."
            )
        return self.states

    reset_state = reset_states

    def _step(self, inputs, states, training):
        cell_states = states[0] if self.single_state else states
        kwargs = {"training": training} if training is not None else {}
        output, new_states = self.cell(inputs, cell_states, **kwargs)
        if not isinstance(new_states, (list, tuple)):
            new_states = [new_states]
        return output, list(new_states)

    def call(self, sequences, initial_state=None, mask=None, training=False):
        batch, steps = sequences.shape[0], sequences.shape[1]
        if initial_state is not None:
            states = (
                list(initial_state) if isinstance(initial_state, (list, tuple)) else [initial_state]
            )
        elif self.stateful:
            held = self._state_variables(batch)
            states = _unflatten(held, iter([v.read_value() for v in _flat(held)]))
        else:
            states = self.get_initial_state(batch)
        for reset in ("reset_dropout_mask", "reset_recurrent_dropout_mask"):
            if hasattr(self.cell, reset):
                getattr(self.cell, reset)()
        if isinstance(mask, (list, tuple)):
            mask = mask[0]  # one mask per step, whatever the inputs' structure
        if mask is not None:
            mask = _core.cast(_core.convert_to_tensor(mask), "bool")
        order = range(steps - 1, -1, -1) if self.go_backwards else range(steps)
        outputs, previous = [], None
        for t in order:
            output, new_states = self._step(sequences[:, t], states, training)
            if mask is not None:
                keep = _core.expand_dims(mask[:, t], -1)
                states = _select(keep, new_states, states)
                if previous is None or self.zero_output_for_mask:
                    previous = _core.zeros_like(output)
                output = _core.select(keep, output, previous)
            else:
                states = new_states
            outputs.append(output)
            previous = output
        if self.stateful:
            held = _flat(self._state_variables(batch))
            for variable, state in zip(held, _flat(states), strict=True):
                variable.assign(state)
        result = _core.stack(outputs, 1) if self.return_sequences else outputs[-1]
        return [result, *states] if self.return_state else result

    def compute_mask(self, inputs, previous_mask):
        """The output's mask: the input's with ``return_sequences``, else None (and None for
        each state with ``return_state``).

        Args:
            inputs: The sequences.
            previous_mask: Their ``[batch, steps]`` mask, or None.

        Returns:
            The mask, or the list ``[output mask, None per state]``.
        """
        del inputs
        mask = nest.flatten(previous_mask)[0] if previous_mask is not None else None
        output_mask = mask if self.return_sequences else None
        if self.return_state:
            return [output_mask] + [None for _ in self.state_size]
        return output_mask

    def _rnn_config(self):
        return {
            **super().get_config(),
            "return_sequences": self.return_sequences,
            "return_state": self.return_state,
            "go_backwards": self.go_backwards,
            "stateful": self.stateful,
            "unroll": self.unroll,
            "zero_output_for_mask": self.zero_output_for_mask,
        }

    def get_config(self):
        return {**self._rnn_config(), "cell": object_registration.serialize_keras_object(self.cell)}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        """An RNN made from ``get_config``'s output.

        Args:
            config: The dict ``get_config`` returned.
            custom_objects: Classes the cell's config may name.

        Returns:
            The new layer.
        """
        config = dict(config)
        config["cell"] = object_registration.deserialize_keras_object(
            config["cell"], custom_objects=custom_objects
        )
        return cls(**config)
