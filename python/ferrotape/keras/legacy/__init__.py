"""Keras 3's ``keras.src.legacy``: the TF-Keras backend functions (``tf.keras.backend.mean``,
``dot``, ``batch_dot``, ``categorical_crossentropy``, ...) that ``tf.keras.backend`` still
exports, with their TF-Keras semantics. ``ft.keras.backend`` re-exports them.
"""
