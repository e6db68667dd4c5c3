"""``ft.keras.layers``, laid out as Keras 3's ``keras.src.layers``: the base ``Layer`` in
``layer.py``, then one sub-package per family (``core``, ``convolutional``, ``pooling``,
``normalization``, ``regularization``, ``reshaping``, ``activations``, ``merging``). Layers import
nothing from ``models`` or ``trainers``.

>>> import ferrotape as ft
>>> ft.keras.layers.Dense(3)(ft.ones([2, 4])).shape
TensorShape([2, 3])
"""

from .activations.activation import Activation
from .activations.relu import ELU, LeakyReLU, PReLU, ReLU
from .activations.softmax import Softmax
from .convolutional.conv2d import Conv2D
from .convolutional.conv2d_transpose import Conv2DTranspose
from .convolutional.depthwise_conv2d import DepthwiseConv2D
from .core.dense import Dense
from .core.embedding import Embedding
from .core.input_layer import Input, InputLayer
from .core.lambda_layer import Lambda
from .layer import Layer
from .merging.merge import Add, Average, Concatenate, Multiply, Subtract
from .normalization.batch_normalization import BatchNormalization
from .normalization.layer_normalization import LayerNormalization
from .pooling.pooling2d import (
    AveragePooling2D,
    AvgPool2D,
    GlobalAveragePooling2D,
    GlobalAvgPool2D,
    GlobalMaxPool2D,
    GlobalMaxPooling2D,
    MaxPool2D,
    MaxPooling2D,
)
from .regularization.dropout import Dropout
from .reshaping.flatten import Flatten
from .reshaping.reshape import Reshape
from .reshaping.spatial2d import Cropping2D, UpSampling2D, ZeroPadding2D

__all__ = [
    "Activation",
    "Add",
    "Average",
    "AveragePooling2D",
    "AvgPool2D",
    "BatchNormalization",
    "Concatenate",
    "Conv2D",
    "Conv2DTranspose",
    "Cropping2D",
    "Dense",
    "DepthwiseConv2D",
    "Dropout",
    "ELU",
    "Embedding",
    "Flatten",
    "GlobalAveragePooling2D",
    "GlobalAvgPool2D",
    "GlobalMaxPool2D",
    "GlobalMaxPooling2D",
    "Input",
    "InputLayer",
    "Lambda",
    "Layer",
    "LayerNormalization",
    "LeakyReLU",
    "MaxPool2D",
    "MaxPooling2D",
    "Multiply",
    "PReLU",
    "ReLU",
    "Reshape",
    "Softmax",
    "Subtract",
    "UpSampling2D",
    "ZeroPadding2D",
]
