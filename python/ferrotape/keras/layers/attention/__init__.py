"""Layers of the ``attention`` family (Keras 3's ``keras.src.layers.attention``);
``ft.keras.layers`` re-exports their public names.
"""
