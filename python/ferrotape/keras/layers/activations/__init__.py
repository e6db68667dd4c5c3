"""Layers of the ``activations`` family (Keras 3's
``keras.src.layers.activations``); ``ft.keras.layers`` re-exports their public names.
"""
