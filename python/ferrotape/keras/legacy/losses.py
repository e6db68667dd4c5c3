"""``Reduction`` (Keras 3's ``keras.src.legacy.losses``): the names of TF-Keras's loss
reductions, kept for programs that spell them as constants.

>>> Reduction.SUM_OVER_BATCH_SIZE
'sum_over_batch_size'
"""


class Reduction:
    """TF-Keras's reduction names: ``AUTO``, ``NONE``, ``SUM``, ``SUM_OVER_BATCH_SIZE``.

    Keras 3's loss classes take the strings; ``"auto"`` is refused there, as in Keras 3.
    """

    AUTO = "auto"
    NONE = "none"
    SUM = "sum"
    SUM_OVER_BATCH_SIZE = "sum_over_batch_size"

    @classmethod
    def all(cls):
        """The four names."""
        return (cls.AUTO, cls.NONE, cls.SUM, cls.SUM_OVER_BATCH_SIZE)

    @classmethod
    def validate(cls, key):
        """Raises a ValueError unless ``key`` is one of the names."""
        if key not in cls.all():
            raise ValueError(f'Invalid Reduction Key: {key}. Expected keys are "{cls.all()}"')
