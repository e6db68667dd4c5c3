"""The image preprocessing layers (Keras 3's
``keras.src.layers.preprocessing.image_preprocessing``), for ``[batch, height, width,
channels]`` images or single ``[height, width, channels]`` ones.
"""
