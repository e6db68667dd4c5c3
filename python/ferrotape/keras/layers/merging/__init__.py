"""Layers of the ``merging`` family (Keras 3's
``keras.src.layers.merging``); ``ft.keras.layers`` re-exports their public names.
"""
