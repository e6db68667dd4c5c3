"""``ft.keras.layers``, laid out as Keras 3's ``keras.src.layers``: the base ``Layer`` in
``layer.py``, then one sub-package per family (``core``, ``convolutional``, ``pooling``,
``normalization``, ``regularization``, ``reshaping``, ``activations``, ``merging``,
``preprocessing``, ``attention``, ``rnn``). Layers import nothing from ``models`` or ``trainers``.

>>> import ferrotape as ft
>>> ft.keras.layers.Dense(3)(ft.ones([2, 4])).shape
TensorShape([2, 3])
"""

from .activations.activation import Activation
from .activations.relu import ELU, LeakyReLU, PReLU, ReLU
from .activations.softmax import Softmax
from .activations.thresholded_relu import ThresholdedReLU
from .attention.additive_attention import AdditiveAttention
from .attention.attention import Attention
from .attention.grouped_query_attention import GroupedQueryAttention, GroupQueryAttention
from .attention.multi_head_attention import MultiHeadAttention
from .convolutional.conv1d import Conv1D, Convolution1D
from .convolutional.conv1d_transpose import Conv1DTranspose, Convolution1DTranspose
from .convolutional.conv2d import Conv2D, Convolution2D
from .convolutional.conv2d_transpose import Conv2DTranspose, Convolution2DTranspose
from .convolutional.conv3d import Conv3D, Convolution3D
from .convolutional.conv3d_transpose import Conv3DTranspose, Convolution3DTranspose
from .convolutional.depthwise_conv1d import DepthwiseConv1D
from .convolutional.depthwise_conv2d import DepthwiseConv2D
from .convolutional.separable_conv1d import SeparableConv1D, SeparableConvolution1D
from .convolutional.separable_conv2d import SeparableConv2D, SeparableConvolution2D
from .core.dense import Dense
from .core.einsum_dense import EinsumDense
from .core.embedding import Embedding
from .core.identity import Identity
from .core.input_layer import Input, InputLayer
from .core.lambda_layer import Lambda
from .core.masking import Masking
from .core.reversible_embedding import ReversibleEmbedding
from .core.wrapper import Wrapper
from .input_spec import InputSpec
from .layer import Layer
from .merging.dot import Dot, dot
from .merging.merge import (
    Add,
    Average,
    Concatenate,
    Maximum,
    Minimum,
    Multiply,
    Subtract,
    add,
    average,
    concatenate,
    maximum,
    minimum,
    multiply,
    subtract,
)
from .normalization.batch_normalization import BatchNormalization
from .normalization.group_normalization import GroupNormalization
from .normalization.layer_normalization import LayerNormalization
from .normalization.rms_normalization import RMSNormalization
from .normalization.spectral_normalization import SpectralNormalization
from .normalization.unit_normalization import UnitNormalization
from .pooling.adaptive_pooling import (
    AdaptiveAveragePooling1D,
    AdaptiveAveragePooling2D,
    AdaptiveAveragePooling3D,
    AdaptiveMaxPooling1D,
    AdaptiveMaxPooling2D,
    AdaptiveMaxPooling3D,
)
from .pooling.pooling1d import (
    AveragePooling1D,
    AvgPool1D,
    GlobalAveragePooling1D,
    GlobalAvgPool1D,
    GlobalMaxPool1D,
    GlobalMaxPooling1D,
    MaxPool1D,
    MaxPooling1D,
)
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
from .pooling.pooling3d import (
    AveragePooling3D,
    AvgPool3D,
    GlobalAveragePooling3D,
    GlobalAvgPool3D,
    GlobalMaxPool3D,
    GlobalMaxPooling3D,
    MaxPool3D,
    MaxPooling3D,
)
from .preprocessing.category_encoding import CategoryEncoding
from .preprocessing.discretization import Discretization
from .preprocessing.hashing import Hashing
from .preprocessing.image_preprocessing.aug_mix import AugMix
from .preprocessing.image_preprocessing.auto_contrast import AutoContrast
from .preprocessing.image_preprocessing.center_crop import CenterCrop
from .preprocessing.image_preprocessing.clahe import ContrastLimitedAdaptiveHistogramEqualization
from .preprocessing.image_preprocessing.cut_mix import CutMix
from .preprocessing.image_preprocessing.equalization import Equalization
from .preprocessing.image_preprocessing.max_num_bounding_box import MaxNumBoundingBoxes
from .preprocessing.image_preprocessing.mix_up import MixUp
from .preprocessing.image_preprocessing.rand_augment import RandAugment
from .preprocessing.image_preprocessing.random_brightness import RandomBrightness
from .preprocessing.image_preprocessing.random_color_degeneration import RandomColorDegeneration
from .preprocessing.image_preprocessing.random_color_jitter import RandomColorJitter
from .preprocessing.image_preprocessing.random_contrast import RandomContrast
from .preprocessing.image_preprocessing.random_crop import RandomCrop
from .preprocessing.image_preprocessing.random_elastic_transform import RandomElasticTransform
from .preprocessing.image_preprocessing.random_erasing import RandomErasing
from .preprocessing.image_preprocessing.random_flip import RandomFlip
from .preprocessing.image_preprocessing.random_gaussian_blur import RandomGaussianBlur
from .preprocessing.image_preprocessing.random_grayscale import RandomGrayscale
from .preprocessing.image_preprocessing.random_height_width import RandomHeight, RandomWidth
from .preprocessing.image_preprocessing.random_hue import RandomHue
from .preprocessing.image_preprocessing.random_invert import RandomInvert
from .preprocessing.image_preprocessing.random_perspective import RandomPerspective
from .preprocessing.image_preprocessing.random_posterization import RandomPosterization
from .preprocessing.image_preprocessing.random_rotation import RandomRotation
from .preprocessing.image_preprocessing.random_saturation import RandomSaturation
from .preprocessing.image_preprocessing.random_sharpness import RandomSharpness
from .preprocessing.image_preprocessing.random_shear import RandomShear
from .preprocessing.image_preprocessing.random_translation import RandomTranslation
from .preprocessing.image_preprocessing.random_zoom import RandomZoom
from .preprocessing.image_preprocessing.resizing import Resizing
from .preprocessing.image_preprocessing.solarization import Solarization
from .preprocessing.integer_lookup import IntegerLookup
from .preprocessing.mel_spectrogram import MelSpectrogram
from .preprocessing.normalization import Normalization
from .preprocessing.pipeline import Pipeline
from .preprocessing.rescaling import Rescaling
from .preprocessing.stft_spectrogram import STFTSpectrogram
from .regularization.activity_regularization import ActivityRegularization
from .regularization.alpha_dropout import AlphaDropout
from .regularization.dropout import Dropout
from .regularization.gaussian_dropout import GaussianDropout
from .regularization.gaussian_noise import GaussianNoise
from .regularization.spatial_dropout import SpatialDropout1D, SpatialDropout2D, SpatialDropout3D
from .reshaping.flatten import Flatten
from .reshaping.permute import Permute
from .reshaping.repeat_vector import RepeatVector
from .reshaping.reshape import Reshape
from .reshaping.spatial1d import Cropping1D, UpSampling1D, ZeroPadding1D
from .reshaping.spatial2d import Cropping2D, UpSampling2D, ZeroPadding2D
from .reshaping.spatial3d import Cropping3D, UpSampling3D, ZeroPadding3D
from .rnn.bidirectional import Bidirectional
from .rnn.conv_lstm import ConvLSTM1D, ConvLSTM2D, ConvLSTM3D
from .rnn.gru import GRU, GRUCell
from .rnn.lstm import LSTM, LSTMCell
from .rnn.rnn import RNN
from .rnn.simple_rnn import SimpleRNN, SimpleRNNCell
from .rnn.stacked_rnn_cells import StackedRNNCells
from .rnn.time_distributed import TimeDistributed
from .serialization import deserialize, serialize

__all__ = [
    "Activation",
    "ActivityRegularization",
    "AdaptiveAveragePooling1D",
    "AdaptiveAveragePooling2D",
    "AdaptiveAveragePooling3D",
    "AdaptiveMaxPooling1D",
    "AdaptiveMaxPooling2D",
    "AdaptiveMaxPooling3D",
    "Add",
    "add",
    "AdditiveAttention",
    "AlphaDropout",
    "Attention",
    "AugMix",
    "AutoContrast",
    "Average",
    "average",
    "AveragePooling1D",
    "AveragePooling2D",
    "AveragePooling3D",
    "AvgPool1D",
    "AvgPool2D",
    "AvgPool3D",
    "BatchNormalization",
    "Bidirectional",
    "CategoryEncoding",
    "CenterCrop",
    "Concatenate",
    "ContrastLimitedAdaptiveHistogramEqualization",
    "concatenate",
    "Conv1D",
    "Conv1DTranspose",
    "Conv2D",
    "Conv2DTranspose",
    "Conv3D",
    "Conv3DTranspose",
    "ConvLSTM1D",
    "ConvLSTM2D",
    "ConvLSTM3D",
    "Convolution1D",
    "Convolution1DTranspose",
    "Convolution2D",
    "Convolution2DTranspose",
    "Convolution3D",
    "Convolution3DTranspose",
    "Cropping1D",
    "Cropping2D",
    "Cropping3D",
    "CutMix",
    "Dense",
    "DepthwiseConv1D",
    "DepthwiseConv2D",
    "deserialize",
    "Discretization",
    "Dot",
    "dot",
    "Dropout",
    "EinsumDense",
    "ELU",
    "Embedding",
    "Equalization",
    "Flatten",
    "GaussianDropout",
    "GaussianNoise",
    "GlobalAveragePooling1D",
    "GlobalAveragePooling2D",
    "GlobalAveragePooling3D",
    "GlobalAvgPool1D",
    "GlobalAvgPool2D",
    "GlobalAvgPool3D",
    "GlobalMaxPool1D",
    "GlobalMaxPool2D",
    "GlobalMaxPool3D",
    "GlobalMaxPooling1D",
    "GlobalMaxPooling2D",
    "GlobalMaxPooling3D",
    "GroupedQueryAttention",
    "GroupNormalization",
    "GroupQueryAttention",
    "GRU",
    "GRUCell",
    "Hashing",
    "Identity",
    "Input",
    "InputLayer",
    "InputSpec",
    "IntegerLookup",
    "Lambda",
    "Layer",
    "LayerNormalization",
    "LeakyReLU",
    "LSTM",
    "LSTMCell",
    "Masking",
    "Maximum",
    "maximum",
    "MaxPool1D",
    "MaxPool2D",
    "MaxPool3D",
    "MaxPooling1D",
    "MaxPooling2D",
    "MaxPooling3D",
    "Minimum",
    "minimum",
    "MixUp",
    "MultiHeadAttention",
    "Multiply",
    "multiply",
    "Normalization",
    "Permute",
    "Pipeline",
    "PReLU",
    "RandAugment",
    "RandomBrightness",
    "RandomColorDegeneration",
    "RandomColorJitter",
    "RandomContrast",
    "RandomCrop",
    "RandomElasticTransform",
    "RandomErasing",
    "RandomFlip",
    "RandomGaussianBlur",
    "RandomGrayscale",
    "RandomHeight",
    "RandomHue",
    "RandomInvert",
    "RandomPerspective",
    "RandomPosterization",
    "RandomRotation",
    "RandomSaturation",
    "RandomSharpness",
    "RandomShear",
    "RandomTranslation",
    "RandomWidth",
    "RandomZoom",
    "ReLU",
    "RepeatVector",
    "MaxNumBoundingBoxes",
    "MelSpectrogram",
    "Rescaling",
    "STFTSpectrogram",
    "Reshape",
    "Resizing",
    "ReversibleEmbedding",
    "RMSNormalization",
    "RNN",
    "SeparableConv1D",
    "SeparableConv2D",
    "SeparableConvolution1D",
    "SeparableConvolution2D",
    "serialize",
    "SimpleRNN",
    "SimpleRNNCell",
    "Softmax",
    "Solarization",
    "SpatialDropout1D",
    "SpatialDropout2D",
    "SpatialDropout3D",
    "SpectralNormalization",
    "StackedRNNCells",
    "Subtract",
    "subtract",
    "ThresholdedReLU",
    "TimeDistributed",
    "UnitNormalization",
    "UpSampling1D",
    "UpSampling2D",
    "UpSampling3D",
    "Wrapper",
    "ZeroPadding1D",
    "ZeroPadding2D",
    "ZeroPadding3D",
]
