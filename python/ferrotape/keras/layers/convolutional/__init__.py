"""Layers of the ``convolutional`` family (Keras 3's
``keras.src.layers.convolutional``); ``ft.keras.layers`` re-exports their public names.
"""
