"""``SwapEMAWeights`` (Keras 3's ``keras.src.callbacks.swap_ema_weights``)."""

from .callback import Callback


class SwapEMAWeights(Callback):
    """Evaluates and predicts with the optimizer's moving averages of the weights (an optimizer
    made with ``use_ema=True``), swapping them into the model for the duration and back after.

    With ``swap_on_epoch=True`` the averages are also swapped in at the end of each epoch (so
    callbacks such as ``ModelCheckpoint`` that run then see them) and out again when the next
    epoch begins; after the last epoch they stay in the model and the averages are set to
    them.

    Unlike Keras 3.15, whose ``on_predict_end`` leaves the averages in the model, the weights
    are swapped back after ``predict`` as they are after ``evaluate``.

    Args:
        swap_on_epoch: whether to swap the averages in at the end of each epoch.

    >>> import numpy as np, ferrotape as ft
    >>> model = ft.keras.Sequential([ft.keras.Input((2,)), ft.keras.layers.Dense(1)])
    >>> model.compile(optimizer=ft.keras.optimizers.SGD(use_ema=True), loss="mse")
    >>> x, y = np.ones((4, 2), "float32"), np.zeros((4, 1), "float32")
    >>> _ = model.fit(x, y, epochs=1, verbose=0, callbacks=[ft.keras.callbacks.SwapEMAWeights()])
    """

    def __init__(self, swap_on_epoch=False):
        super().__init__()
        self.swap_on_epoch = swap_on_epoch
        self._averages_in_model = False

    def _optimizer(self):
        optimizer = self.model.optimizer
        if not getattr(optimizer, "use_ema", False):
            raise ValueError(
                "SwapEMAWeights must be used when `use_ema=True` is set on the optimizer. "
                f"Received: use_ema={getattr(optimizer, 'use_ema', None)}"
            )
        return optimizer

    def _swap(self):
        optimizer = self._optimizer()
        pairs = zip(
            optimizer._trainable_variables, optimizer._model_variables_moving_average, strict=True
        )
        for variable, average in pairs:
            held = variable.numpy()
            variable.assign(average)
            average.assign(held)
        self._averages_in_model = not self._averages_in_model

    def on_epoch_begin(self, epoch, logs=None):
        if self.swap_on_epoch and self._averages_in_model:
            self._swap()

    def on_epoch_end(self, epoch, logs=None):
        if self.swap_on_epoch and not self._averages_in_model:
            self._swap()
            if epoch == self.params["epochs"] - 1:
                optimizer = self._optimizer()
                pairs = zip(
                    optimizer._trainable_variables,
                    optimizer._model_variables_moving_average,
                    strict=True,
                )
                for variable, average in pairs:
                    average.assign(variable)

    def on_test_begin(self, logs=None):
        if not self._averages_in_model:
            self._swap()

    def on_test_end(self, logs=None):
        if self._averages_in_model:
            self._swap()

    def on_predict_begin(self, logs=None):
        if not self._averages_in_model:
            self._swap()

    def on_predict_end(self, logs=None):
        if self._averages_in_model:
            self._swap()
