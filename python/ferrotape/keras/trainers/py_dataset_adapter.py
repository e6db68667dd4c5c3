"""``PyDataset`` (Keras 3's ``keras.src.trainers.data_adapters.py_dataset_adapter``; Keras 2's
``Sequence``): a dataset defined by indexing, one batch per index, and the adapter ``fit``
reads it through.

>>> class Squares(PyDataset):
...     def __len__(self):
...         return 3
...     def __getitem__(self, index):
...         return [index], [index * index]
>>> [batch for batch in _PyDatasetBatches(Squares(), "fit").batches()]
[([0], [0]), ([1], [1]), ([2], [4])]
"""


class PyDataset:
    """Base class of a dataset of batches reached by index.

    Subclasses implement ``__getitem__(index)`` (the batch ``index``: ``x``, ``(x,)``,
    ``(x, y)`` or ``(x, y, sample_weight)``) and ``__len__`` (the number of batches), and
    may override ``on_epoch_begin``/``on_epoch_end``, which ``fit`` calls around each epoch.
    ferrotape reads batches in order in the calling thread: ``workers``,
    ``use_multiprocessing`` and ``max_queue_size`` are kept for Keras compatibility only.

    Args:
        workers: the number of loader threads Keras would use.
        use_multiprocessing: whether Keras would load in processes.
        max_queue_size: how many batches Keras would prefetch.
    """

    def __init__(self, workers=1, use_multiprocessing=False, max_queue_size=10):
        self._workers = workers
        self._use_multiprocessing = use_multiprocessing
        self._max_queue_size = max_queue_size

    @property
    def workers(self):
        return self._workers

    @property
    def use_multiprocessing(self):
        return self._use_multiprocessing

    @property
    def max_queue_size(self):
        return self._max_queue_size

    def __getitem__(self, index):
        raise NotImplementedError(f"{type(self).__name__} must implement `__getitem__`.")

    def __len__(self):
        raise NotImplementedError(f"{type(self).__name__} must implement `__len__`.")

    @property
    def num_batches(self):
        """The number of batches (``len(self)``), or None when it is not defined."""
        try:
            return len(self)
        except (NotImplementedError, TypeError):
            return None

    def on_epoch_begin(self):
        """Called at the start of every epoch."""

    def on_epoch_end(self):
        """Called at the end of every epoch (e.g. to reshuffle)."""


class _PyDatasetBatches:
    """The batches of a ``PyDataset``, in index order, with its epoch hooks around them."""

    def __init__(self, dataset, who):
        num_batches = dataset.num_batches
        if num_batches is None:
            raise ValueError(
                f"{who}: the PyDataset {type(dataset).__name__} must define `__len__` (its "
                "number of batches)."
            )
        self.source = dataset
        self.steps = num_batches
        self.cardinality = num_batches
        self.who = who

    def batches(self):
        self.source.on_epoch_begin()
        for index in range(self.steps):
            batch = self.source[index]
            if isinstance(batch, list):
                batch = tuple(batch)
            yield batch if isinstance(batch, tuple) else (batch,)
        self.source.on_epoch_end()
