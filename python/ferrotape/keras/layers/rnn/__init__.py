"""Layers of the ``rnn`` family (Keras 3's ``keras.src.layers.rnn``); ``ft.keras.layers``
re-exports their public names. Of it, ferrotape has ``TimeDistributed`` only, so far.
"""
