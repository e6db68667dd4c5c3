"""Layers of the ``regularization`` family (Keras 3's
``keras.src.layers.regularization``); ``ft.keras.layers`` re-exports their public names.
"""
