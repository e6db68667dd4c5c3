"""Layers of the ``preprocessing`` family (Keras 3's
``keras.src.layers.preprocessing``); ``ft.keras.layers`` re-exports their public names.
"""
