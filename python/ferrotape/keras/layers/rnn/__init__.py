"""Layers of the ``rnn`` family (Keras 3's ``keras.src.layers.rnn``); ``ft.keras.layers``
re-exports their public names. ``RNN`` runs a cell over the steps in a Python loop of ferrotape ops.
"""
