"""Layers of the ``normalization`` family (Keras 3's
``keras.src.layers.normalization``); ``ft.keras.layers`` re-exports their public names.
"""
