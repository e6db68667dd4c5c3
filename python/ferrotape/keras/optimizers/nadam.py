"""Nadam."""

import ferrotape as ft

from .optimizer import Optimizer

# Keras's momentum schedule: mu_t = beta_1 * (1 - 0.5 * 0.96 ** t).
_DECAY = 0.96


class Nadam(Optimizer):
    """Nadam (Dozat): Adam with Nesterov momentum, Keras 3's rule, ``t`` counted from 1::

        u_t = beta_1 * (1 - 0.5 * 0.96 ** t);  P_t = u_1 * ... * u_t
        m += (g - m) * (1 - beta_1);  v += (g * g - v) * (1 - beta_2)
        m_hat = u_{t+1} * m / (1 - P_t * u_{t+1}) + (1 - u_t) * g / (1 - P_t)
        w -= learning_rate * m_hat / (sqrt(v / (1 - beta_2 ** t)) + epsilon)

    Keras keeps ``P_t`` in a variable; here it is recomputed from the step count (cached), so
    a checkpoint's ``iterations`` is all it needs.

    Args:
        learning_rate: float, schedule or callable; defaults to 0.001.
        beta_1: decay rate of the first-moment estimate; defaults to 0.9.
        beta_2: decay rate of the second-moment estimate; defaults to 0.999.
        epsilon: added to the denominator; defaults to 1e-7.

    The other arguments (clipping, weight decay, EMA, ``name``) are ``Optimizer``'s.

    >>> import ferrotape as ft
    >>> w = ft.Variable(1.0)
    >>> opt = ft.keras.optimizers.Nadam(learning_rate=0.1)
    >>> _ = opt.apply_gradients([(ft.constant(2.0), w)])
    >>> round(float(w.numpy()), 5)  # TF 2.21 gives the same
    0.89372
    """

    def __init__(
        self,
        learning_rate=0.001,
        beta_1=0.9,
        beta_2=0.999,
        epsilon=1e-7,
        weight_decay=None,
        clipnorm=None,
        clipvalue=None,
        global_clipnorm=None,
        use_ema=False,
        ema_momentum=0.99,
        ema_overwrite_frequency=None,
        loss_scale_factor=None,
        gradient_accumulation_steps=None,
        name="nadam",
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
        self.beta_1 = beta_1
        self.beta_2 = beta_2
        self.epsilon = epsilon
        self._u_product_cache = (0, 1.0)

    def _create_slots(self, variable):
        return (
            self.add_variable_from_reference(variable, "momentum"),
            self.add_variable_from_reference(variable, "velocity"),
        )

    _checkpoint_internal = Optimizer._checkpoint_internal | {"_u_product_variable"}

    def _checkpoint_children(self):
        """Keras 3's, with ``_u_product``: Keras keeps the running product of the momentum
        schedule in that variable once built; ferrotape computes it from the step count, and
        writes it where Keras reads it (a restore reads the step count instead)."""
        found = super()._checkpoint_children()
        if not self.built:
            return found
        product = self._u_product(int(self._iterations.numpy()))
        holder = self.__dict__.get("_u_product_variable")
        if holder is None:
            dtype = self._variable_dtypes[0] if self._variable_dtypes else ft.float32
            holder = ft.Variable(product, dtype=dtype, trainable=False, name="u_product")
            self._u_product_variable = holder
        else:
            holder.assign(product)
        return [*found, ("_u_product", holder)]

    def _u(self, step):
        return float(self.beta_1) * (1.0 - 0.5 * _DECAY**step)

    def _u_product(self, step):
        cached_step, product = self._u_product_cache
        if cached_step > step:
            cached_step, product = 0, 1.0
        for t in range(cached_step + 1, step + 1):
            product *= self._u(t)
        self._u_product_cache = (step, product)
        return product

    def _step_coefficients(self, learning_rate, local_step):
        u_t, u_next = self._u(local_step), self._u(local_step + 1)
        product = self._u_product(local_step)
        beta_1, beta_2 = float(self.beta_1), float(self.beta_2)
        return (
            learning_rate,
            1.0 - beta_1,
            1.0 - beta_2,
            u_next / (1.0 - product * u_next),
            (1.0 - u_t) / (1.0 - product),
            1.0 - beta_2**local_step,
            float(self.epsilon),
        )

    def update_step(self, gradient, variable, learning_rate):
        lr, one_minus_beta_1, one_minus_beta_2, m_scale, g_scale, v_bias, epsilon = (
            self._coefficients(learning_rate)
        )
        m, v = self._slots_of(variable)
        m.assign_add((gradient - m) * one_minus_beta_1)
        v.assign_add((ft.square(gradient) - v) * one_minus_beta_2)
        m_hat = m * m_scale + gradient * g_scale
        variable.assign_sub(m_hat * lr / (ft.sqrt(v / v_bias) + epsilon))

    def get_config(self):
        config = super().get_config()
        config.update({"beta_1": self.beta_1, "beta_2": self.beta_2, "epsilon": self.epsilon})
        return config
