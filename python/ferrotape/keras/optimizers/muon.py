"""Muon."""

import re

import ferrotape as ft

from .optimizer import Optimizer


class Muon(Optimizer):
    """Muon (Jordan et al.; Liu et al., 2025), Keras 3's rule: 2-D weights move along an
    orthogonalised momentum, every other variable (and embeddings, and the layers named in
    ``exclude_layers``) by AdamW at ``learning_rate * adam_lr_ratio``. For a Muon variable::

        m = momentum * m + g
        u = newton_schulz5(g + momentum * m if nesterov else m)   # ~ U V^T of its SVD
        w -= learning_rate * u * sqrt(max(rows, cols)) * rms_rate

    where ``newton_schulz5`` scales ``u`` to unit Frobenius norm and runs ``ns_steps`` of
    ``u = a u + (b A + c A @ A) u`` with ``A = u u^T`` (``a, b, c = muon_a, muon_b, muon_c``),
    on the wide orientation of the matrix. Weight decay is ``weight_decay`` for Muon variables
    and ``adam_weight_decay`` for the AdamW ones.

    Args:
        learning_rate: float, schedule or callable; defaults to 0.001.
        adam_beta_1: AdamW's first-moment decay; defaults to 0.9.
        adam_beta_2: AdamW's second-moment decay; defaults to 0.999.
        adam_weight_decay: weight decay of the AdamW variables; defaults to 0.004.
        epsilon: AdamW's epsilon; defaults to 1e-7.
        weight_decay: weight decay of the Muon variables; defaults to 0.004.
        exclude_layers: regular expressions; variables whose path matches one use AdamW.
        exclude_embeddings: whether variables with "embedding" in their path use AdamW.
        muon_a: the Newton-Schulz iteration's ``a``; defaults to 3.4445.
        muon_b: its ``b``; defaults to -4.7750.
        muon_c: its ``c``; defaults to 2.0315.
        adam_lr_ratio: the AdamW learning rate as a fraction of ``learning_rate``.
        momentum: the momentum of the Muon update; defaults to 0.95.
        ns_steps: Newton-Schulz iterations; defaults to 5.
        nesterov: whether to use Nesterov momentum; defaults to True.
        rms_rate: the update's scale factor (``None``: no rescaling); defaults to 0.2.

    The other arguments (clipping, EMA, ``name``) are ``Optimizer``'s.

    >>> import ferrotape as ft
    >>> w = ft.Variable([[1.0, 0.0], [0.0, 1.0]])
    >>> opt = ft.keras.optimizers.Muon(learning_rate=0.1, weight_decay=None, rms_rate=None)
    >>> _ = opt.apply_gradients([(ft.constant([[1.0, 0.0], [0.0, 0.0]]), w)])
    >>> # A rank-one step on w[0, 0]: the iteration maps the singular value 1 to ~0.7, not 1.
    >>> [round(float(v), 3) for v in w.numpy().ravel()]
    [0.93, 0.0, 0.0, 1.0]
    """

    def __init__(
        self,
        learning_rate=0.001,
        adam_beta_1=0.9,
        adam_beta_2=0.999,
        adam_weight_decay=0.004,
        epsilon=1e-7,
        weight_decay=0.004,
        clipnorm=None,
        clipvalue=None,
        global_clipnorm=None,
        use_ema=False,
        ema_momentum=0.99,
        ema_overwrite_frequency=None,
        loss_scale_factor=None,
        gradient_accumulation_steps=None,
        name="muon",
        exclude_layers=None,
        exclude_embeddings=True,
        muon_a=3.4445,
        muon_b=-4.7750,
        muon_c=2.0315,
        adam_lr_ratio=1,
        momentum=0.95,
        ns_steps=5,
        nesterov=True,
        rms_rate=0.2,
        **kwargs,
    ):
        super().__init__(
            learning_rate=learning_rate,
            weight_decay=weight_decay,
            clipnorm=clipnorm,
            clipvalue=clipvalue,
            global_clipnorm=global_clipnorm,
            use_ema=use_ema,
            ema_momentum=ema_momentum,
            ema_overwrite_frequency=ema_overwrite_frequency,
            loss_scale_factor=loss_scale_factor,
            gradient_accumulation_steps=gradient_accumulation_steps,
            name=name,
            **kwargs,
        )
        self.adam_beta_1 = adam_beta_1
        self.adam_beta_2 = adam_beta_2
        self.epsilon = epsilon
        self.muon_a = muon_a
        self.muon_b = muon_b
        self.muon_c = muon_c
        self.adam_lr_ratio = adam_lr_ratio
        self.momentum = momentum
        self.ns_steps = ns_steps
        self.nesterov = nesterov
        self.exclude_embeddings = exclude_embeddings
        self.exclude_layers = exclude_layers or []
        self.adam_weight_decay = adam_weight_decay
        self.rms_rate = rms_rate

    def _uses_adamw(self, variable):
        if len(variable.shape) != 2:
            return True
        path = str(variable.name).split(":")[0]  # Keras's variable path, "dense/kernel"
        if self.exclude_embeddings and "embedding" in path.lower():
            return True
        return any(re.search(keyword, path) for keyword in self.exclude_layers)

    def _create_slots(self, variable):
        momentum = self.add_variable_from_reference(variable, "momentum")
        if not self._uses_adamw(variable):
            return (momentum,)
        return momentum, self.add_variable_from_reference(variable, "velocity")

    def update_step(self, gradient, variable, learning_rate):
        slots = self._slots_of(variable)
        if len(slots) == 2:
            self._adamw_step(gradient, variable, learning_rate * self.adam_lr_ratio, *slots)
        else:
            self._muon_step(gradient, variable, learning_rate, slots[0])

    def _muon_step(self, gradient, variable, learning_rate, m):
        m.assign_add(gradient + m * (self.momentum - 1))
        direction = gradient + self.momentum * m if self.nesterov else ft.identity(m)
        update = learning_rate * self._newton_schulz5(direction)
        if self.rms_rate is not None:  # Moonlight's scaling: Adam-like update sizes
            update = update * (max(variable.shape[0], variable.shape[1]) ** 0.5 * self.rms_rate)
        variable.assign_sub(update)

    def _adamw_step(self, gradient, variable, learning_rate, m, v):
        local_step = self._local_step()
        beta_1, beta_2 = float(self.adam_beta_1), float(self.adam_beta_2)
        alpha = learning_rate * (1 - beta_2**local_step) ** 0.5 / (1 - beta_1**local_step)
        m.assign_add((gradient - m) * (1 - beta_1))
        v.assign_add((ft.square(gradient) - v) * (1 - beta_2))
        variable.assign_sub(m * alpha / (ft.sqrt(v) + self.epsilon))

    def _newton_schulz5(self, x):
        """An approximate orthogonalisation ``U S' V^T`` of ``x`` (S' near 1), by the quintic
        Newton-Schulz iteration whose slope at zero is largest."""
        tall = x.shape[-2] > x.shape[-1]
        if tall:
            x = ft.linalg.matrix_transpose(x)
        x = x / (ft.norm(x) + 1e-7)
        a, b, c = self.muon_a, self.muon_b, self.muon_c
        for _ in range(self.ns_steps):
            gram = ft.matmul(x, x, transpose_b=True)
            x = a * x + ft.matmul(b * gram + c * ft.matmul(gram, gram), x)
        return ft.linalg.matrix_transpose(x) if tall else x

    def _decays_weights(self):
        # Keras applies adam_weight_decay to the AdamW variables even without weight_decay.
        return self.weight_decay is not None or self.adam_weight_decay is not None

    def _apply_weight_decay(self, variables, indices, learning_rate):
        flags = self._decay_flags
        for variable, index in zip(variables, indices, strict=True):
            decay = self.adam_weight_decay if self._uses_adamw(variable) else self.weight_decay
            if flags[index] and decay is not None:
                variable.assign_sub(variable * (float(decay) * learning_rate))

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "adam_beta_1": self.adam_beta_1,
                "adam_beta_2": self.adam_beta_2,
                "epsilon": self.epsilon,
                "exclude_layers": self.exclude_layers,
                "muon_a": self.muon_a,
                "muon_b": self.muon_b,
                "muon_c": self.muon_c,
                "adam_lr_ratio": self.adam_lr_ratio,
                "momentum": self.momentum,
                "ns_steps": self.ns_steps,
                "nesterov": self.nesterov,
                "exclude_embeddings": self.exclude_embeddings,
                "adam_weight_decay": self.adam_weight_decay,
                "rms_rate": self.rms_rate,
            }
        )
        return config
