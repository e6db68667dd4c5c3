"""Layers of the ``reshaping`` family (Keras 3's
``keras.src.layers.reshaping``); ``ft.keras.layers`` re-exports their public names.
"""
