"""Layers of the ``core`` family (Keras 3's
``keras.src.layers.core``); ``ft.keras.layers`` re-exports their public names.
"""
