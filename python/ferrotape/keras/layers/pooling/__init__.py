"""Layers of the ``pooling`` family (Keras 3's
``keras.src.layers.pooling``); ``ft.keras.layers`` re-exports their public names.
"""
