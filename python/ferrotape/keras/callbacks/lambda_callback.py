"""``LambdaCallback`` (Keras 3's ``keras.src.callbacks.lambda_callback``)."""

from .callback import Callback


class LambdaCallback(Callback):
    """A callback made of functions: ``on_epoch_end=lambda epoch, logs: ...`` and so on.

    The named hooks take ``(epoch, logs)``, ``(batch, logs)`` or ``(logs)``; any other
    ``on_*`` hook can be given as a keyword too (``on_test_end=...``).
    """

    def __init__(
        self,
        on_epoch_begin=None,
        on_epoch_end=None,
        on_train_begin=None,
        on_train_end=None,
        on_train_batch_begin=None,
        on_train_batch_end=None,
        **kwargs,
    ):
        super().__init__()
        self.__dict__.update(kwargs)
        hooks = {
            "on_epoch_begin": on_epoch_begin,
            "on_epoch_end": on_epoch_end,
            "on_train_begin": on_train_begin,
            "on_train_end": on_train_end,
            "on_train_batch_begin": on_train_batch_begin,
            "on_train_batch_end": on_train_batch_end,
        }
        for name, function in hooks.items():
            if function is not None:
                setattr(self, name, function)
