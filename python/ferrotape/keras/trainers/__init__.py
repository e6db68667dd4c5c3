"""The training loop of ``Model``, laid out as Keras 3's ``keras.src.trainers``: ``trainer``
(``Trainer``: ``compile``/``fit``/``evaluate``/``predict``), ``data_adapters``, ``epoch_iterator``
and ``compile_utils``. Nothing here imports ``models``: the trainer reaches the model only
through ``self``.
"""
