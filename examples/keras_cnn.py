"""A Keras CNN trained with a GradientTape loop, as in a TensorFlow tutorial (cells In[2]-In[8]).

The tutorial's code runs as written with `import ferrotape as tf` and `ferrotape.keras` in place
of `tensorflow.keras`. Its tape snippets and linear regression (In[9] onwards) are in
`tape_basics.py` and `linear_regression.py`. Where this program departs from the tutorial, a
comment says why:

- the tutorial's constants (EPOCHS, BS) and how much data it uses are command-line flags, so a
  test can run it in seconds;
- MNIST is loaded when it is on the machine (or can be downloaded); otherwise Fashion-MNIST, the
  drop-in replacement, stands in (see `mnist_data.py`);
- `step` returns its loss so that each epoch's line also shows the mean training loss;
- the random seed is set, so that a run is reproducible.

    python examples/keras_cnn.py                                  # the tutorial: 25 epochs
    python examples/keras_cnn.py --epochs 1 --limit 6400 --test-limit 1000

It prints one line per epoch ("[INFO] starting epoch 1/25...took 0.1234 minutes - loss: 0.5678")
and the test accuracy ("[INFO] test accuracy: 0.9100"). The tutorial reports 0.9930 on MNIST
after 25 epochs; published CNNs reach 0.90-0.93 on Fashion-MNIST.
"""

# The tutorial's code is kept as written: str.format, and zip() without strict=.
# ruff: noqa: UP032, B905

import argparse
import sys
import time

import mnist_data
import numpy as np

import ferrotape as tf
from ferrotape.keras.layers import (
    Activation,
    BatchNormalization,
    Conv2D,
    Dense,
    Dropout,
    Flatten,
    MaxPooling2D,
)
from ferrotape.keras.losses import categorical_crossentropy
from ferrotape.keras.models import Sequential
from ferrotape.keras.optimizers import Adam
from ferrotape.keras.utils import to_categorical


def build_model(width, height, depth, classes):
    # initialize the input shape and channels dimension to be
    # "channels last" ordering
    inputShape = (height, width, depth)
    chanDim = -1

    # build the model using Keras' Sequential API
    model = Sequential(
        [
            # CONV => RELU => BN => POOL layer set
            Conv2D(16, (3, 3), padding="same", input_shape=inputShape),
            Activation("relu"),
            BatchNormalization(axis=chanDim),
            MaxPooling2D(pool_size=(2, 2)),
            # (CONV => RELU => BN) * 2 => POOL layer set
            Conv2D(32, (3, 3), padding="same"),
            Activation("relu"),
            BatchNormalization(axis=chanDim),
            Conv2D(32, (3, 3), padding="same"),
            Activation("relu"),
            BatchNormalization(axis=chanDim),
            MaxPooling2D(pool_size=(2, 2)),
            # (CONV => RELU => BN) * 3 => POOL layer set
            Conv2D(64, (3, 3), padding="same"),
            Activation("relu"),
            BatchNormalization(axis=chanDim),
            Conv2D(64, (3, 3), padding="same"),
            Activation("relu"),
            BatchNormalization(axis=chanDim),
            Conv2D(64, (3, 3), padding="same"),
            Activation("relu"),
            BatchNormalization(axis=chanDim),
            MaxPooling2D(pool_size=(2, 2)),
            # first (and only) set of FC => RELU layers
            Flatten(),
            Dense(256),
            Activation("relu"),
            BatchNormalization(),
            Dropout(0.5),
            # softmax classifier
            Dense(classes),
            Activation("softmax"),
        ]
    )

    # return the built model to the calling function
    return model


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=25, help="EPOCHS (tutorial: 25)")
    parser.add_argument("--batch-size", type=int, default=64, help="BS (tutorial: 64)")
    parser.add_argument("--limit", type=int, default=None, help="use the first N training images")
    parser.add_argument("--test-limit", type=int, default=None, help="evaluate on N test images")
    parser.add_argument("--dataset", choices=mnist_data.DATASETS, default="auto")
    parser.add_argument("--seed", type=int, default=42, help="seed of ft.random (weights)")
    args = parser.parse_args(argv)
    if args.epochs < 1 or args.batch_size < 1:
        parser.error("--epochs and --batch-size must be positive")
    if args.limit is not None and args.limit < args.batch_size:
        parser.error(f"--limit must be at least the batch size ({args.batch_size})")
    if args.test_limit is not None and args.test_limit < 1:
        parser.error("--test-limit must be positive")
    return args


def main(args):
    tf.random.set_seed(args.seed)

    # initialize the number of epochs to train for, batch size, and
    # initial learning rate
    EPOCHS = args.epochs
    BS = args.batch_size
    INIT_LR = 1e-3

    # load the MNIST dataset
    print("[INFO] loading MNIST dataset...")
    ((trainX, trainY), (testX, testY)), name = mnist_data.load_data(args.dataset)
    trainX, trainY = trainX[: args.limit], trainY[: args.limit]
    testX, testY = testX[: args.test_limit], testY[: args.test_limit]
    print(f"[INFO] {name}: {len(trainX)} training and {len(testX)} test images")

    # add a channel dimension to every image in the dataset, then scale
    # the pixel intensities to the range [0, 1]
    trainX = np.expand_dims(trainX, axis=-1)
    testX = np.expand_dims(testX, axis=-1)
    trainX = trainX.astype("float32") / 255.0
    testX = testX.astype("float32") / 255.0

    # one-hot encode the labels
    trainY = to_categorical(trainY, 10)
    testY = to_categorical(testY, 10)

    # build our model and initialize our optimizer
    print("[INFO] creating model...")
    model = build_model(28, 28, 1, 10)
    # Keras 3 rejects `lr` and `decay`; ferrotape accepts them with a DeprecationWarning, as
    # `learning_rate` with Keras 2's inverse-time decay (DESIGN.md section 6).
    opt = Adam(lr=INIT_LR, decay=INIT_LR / EPOCHS)

    def step(X, y):
        # keep track of our gradients
        with tf.GradientTape() as tape:
            # make a prediction using the model and then calculate the
            # loss
            # As in the tutorial, `model(X)` has no `training=True`: Keras 3 then runs
            # BatchNormalization and Dropout in inference mode (moving statistics, no dropout),
            # in training as in evaluation. ferrotape does the same (DESIGN.md section 1).
            pred = model(X)
            loss = categorical_crossentropy(y, pred)

        # calculate the gradients using our tape and then update the
        # model weights
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        # Not in the tutorial: the batch's mean loss, for the epoch's line.
        return float(tf.reduce_mean(loss))

    # compute the number of batch updates per epoch
    numUpdates = int(trainX.shape[0] / BS)

    # loop over the number of epochs
    for epoch in range(0, EPOCHS):
        # show the current epoch number
        print("[INFO] starting epoch {}/{}...".format(epoch + 1, EPOCHS), end="")
        sys.stdout.flush()
        epochStart = time.time()
        losses = []

        # loop over the data in batch size increments
        for i in range(0, numUpdates):
            # determine starting and ending slice indexes for the current
            # batch
            start = i * BS
            end = start + BS

            # take a step
            losses.append(step(trainX[start:end], trainY[start:end]))

        # show timing information for the epoch
        epochEnd = time.time()
        elapsed = (epochEnd - epochStart) / 60.0
        print("took {:.4} minutes - loss: {:.4f}".format(elapsed, np.mean(losses)))

    # in order to calculate accuracy using Keras' functions we first need
    # to compile the model
    model.compile(optimizer=opt, loss=categorical_crossentropy, metrics=["acc"])

    # now that the model is compiled we can compute the accuracy
    (loss, acc) = model.evaluate(testX, testY)
    print("[INFO] test accuracy: {:.4f}".format(acc))


if __name__ == "__main__":
    main(parse_args())
