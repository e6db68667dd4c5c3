"""PyTorch's workloads, written as PyTorch users write them: `nn.Module`s in NCHW, eager autograd
with `loss.backward()` and `torch.optim.Adam`; W6 with `torch.func` (jacrev, vmap, hessian).

Hyperparameters follow the Keras models: BatchNorm's epsilon 1e-3 and momentum 0.01 (Keras's
0.99 in PyTorch's convention). The classifier ends in logits with `cross_entropy` (PyTorch's
fused log-softmax + NLL) for training and in `softmax` for inference.
"""

import torch
import torch.func  # jacrev, vmap, hessian (W6)
import torch.nn.functional as F
from torch import nn

from . import common

FRAMEWORK = "pytorch"
# Under --device gpu: CUDA's first device (models, inputs and optimizer state live there).
DEVICE = torch.device("cuda" if common.DEVICE == "gpu" else "cpu")


def setup(threads):
    if common.DEVICE == "gpu" and not torch.cuda.is_available():
        raise common.NoGpu("torch.cuda.is_available() is False")
    torch.set_num_threads(threads)
    try:
        torch.set_num_interop_threads(threads)
    except RuntimeError:  # only settable before the first parallel work; keep the default
        pass
    return {
        "version": torch.__version__,
        "details": {
            "threads": torch.get_num_threads(),
            "interop_threads": torch.get_num_interop_threads(),
            "mkldnn": torch.backends.mkldnn.is_available(),
            "gpu": torch.cuda.get_device_name(0) if common.DEVICE == "gpu" else None,
        },
    }


def _tensor(array):
    return torch.from_numpy(array).contiguous().to(DEVICE)


def sgemm(data):
    a, b = _tensor(data["a"]), _tensor(data["b"])
    return lambda: torch.mm(a, b)


def build_cnn():
    """The seed CNN without its final softmax (logits), channels first."""
    stack, channels = [], common.IMAGE_SHAPE[2]
    for block in common.CNN_BLOCKS:
        for filters in block:
            stack += [
                nn.Conv2d(channels, filters, 3, padding=1),
                nn.ReLU(),
                nn.BatchNorm2d(filters, eps=1e-3, momentum=0.01),
            ]
            channels = filters
        stack.append(nn.MaxPool2d(2))
    side = common.IMAGE_SHAPE[0] // 2 ** len(common.CNN_BLOCKS)
    stack += [
        nn.Flatten(),
        nn.Linear(channels * side * side, common.CNN_DENSE),
        nn.ReLU(),
        nn.BatchNorm1d(common.CNN_DENSE, eps=1e-3, momentum=0.01),
        nn.Dropout(common.DROPOUT_RATE),
        nn.Linear(common.CNN_DENSE, common.CLASSES),
    ]
    return nn.Sequential(*stack).to(DEVICE)


def _nchw(images):
    return _tensor(images.transpose(0, 3, 1, 2))


def cnn_train(data):
    model = build_cnn().train()
    optimizer = torch.optim.Adam(model.parameters(), lr=common.LEARNING_RATE)
    x, labels = _nchw(data["x"]), torch.from_numpy(data["labels"]).long().to(DEVICE)

    def step():
        loss = F.cross_entropy(model(x), labels)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        return loss.detach()

    return step


def cnn_infer(data):
    model = build_cnn().eval()
    x = _nchw(data["x"])

    def step():
        with torch.inference_mode():
            return F.softmax(model(x), dim=1)

    return step


def mlp_train(data):
    """Seed 003's recipe: softmax cross-entropy + 0.01 * sum(w^2), clip_by_norm(1.0) per
    gradient (g * c / max(||g||, c), as tf.clip_by_norm), Adam."""
    w1 = _tensor(data["w1"]).requires_grad_()
    w2 = _tensor(data["w2"]).requires_grad_()
    b1 = torch.zeros(common.MLP_SIZES[1], device=DEVICE, requires_grad=True)
    b2 = torch.zeros(common.MLP_SIZES[2], device=DEVICE, requires_grad=True)
    parameters = [w1, b1, w2, b2]
    optimizer = torch.optim.Adam(parameters, lr=common.LEARNING_RATE)
    x, y = _tensor(data["x"]), _tensor(data["y"])

    def step():
        logits = torch.relu(x @ w1 + b1) @ w2 + b2
        loss = F.cross_entropy(logits, y)  # y holds class probabilities (one-hot)
        total = loss + common.L2_FACTOR * (w1.square().sum() + w2.square().sum())
        optimizer.zero_grad(set_to_none=True)
        total.backward()
        with torch.no_grad():
            for p in parameters:
                p.grad.mul_(common.CLIP_NORM / p.grad.norm().clamp(min=common.CLIP_NORM))
        optimizer.step()
        return loss.detach()

    return step


def _w6_tensors(data):
    return {name: _tensor(array) for name, array in data.items()}


def jacobian(data):
    t = _w6_tensors(data)
    jac = torch.func.jacrev(lambda kernel: torch.relu(t["x"] @ kernel + t["bias1"]))
    return lambda: jac(t["kernel1"])


def batch_jacobian(data):
    t = _w6_tensors(data)

    def one_example(x):
        h = F.elu(x @ t["kernel1"] + t["bias1"])
        return F.elu(h @ t["kernel2"] + t["bias2"])

    per_example = torch.func.vmap(torch.func.jacrev(one_example))
    return lambda: per_example(t["x"])


def hessian(data):
    t = _w6_tensors(data)

    def loss(kernel1):
        h = torch.relu(t["x"] @ kernel1 + t["bias1"])
        return torch.relu(h @ t["kernel2"] + t["bias2"]).square().mean()

    hess = torch.func.hessian(loss)
    return lambda: hess(t["kernel1"])


VARIANTS = {
    "sgemm": {"eager": sgemm},
    "cnn_train": {"eager": cnn_train},
    "cnn_infer": {"eager": cnn_infer},
    "mlp_train": {"eager": mlp_train},
    "jacobian": {"torch.func": jacobian},
    "batch_jacobian": {"torch.func": batch_jacobian},
    "hessian": {"torch.func": hessian},
}


def to_numpy(result):
    return result.detach().cpu().numpy()


def sync(result):
    """PyTorch's CPU ops return finished tensors; CUDA's are queued."""
    if DEVICE.type == "cuda":
        torch.cuda.synchronize()
