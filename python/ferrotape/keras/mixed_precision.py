"""``ft.keras.mixed_precision``: dtype policies and loss scaling (Keras 3's
``keras.mixed_precision``).

Under the ``"mixed_float16"`` policy, layers keep float32 variables and compute in float16:
a layer casts its floating inputs to float16 and, during its call, reads its variables as
float16 (Keras's autocast scope; the gradients flow back to the float32 variables);
``Model.compile`` then wraps its optimizer in a ``LossScaleOptimizer`` so that small float16
gradients do not underflow. ``"mixed_bfloat16"`` is the same with bfloat16 and no loss scale.

>>> import ferrotape as ft
>>> ft.keras.mixed_precision.set_global_policy("mixed_float16")
>>> layer = ft.keras.layers.Dense(2)
>>> layer.compute_dtype, layer.variable_dtype
('float16', 'float32')
>>> layer(ft.ones([1, 3])).dtype, layer.kernel.dtype
(tf.float16, tf.float32)
>>> ft.keras.mixed_precision.set_global_policy("float32")
>>> ft.keras.mixed_precision.global_policy()
<DTypePolicy "float32">
"""

from .layers.layer_utils import DTypePolicy, global_policy, set_global_policy
from .optimizers.loss_scale_optimizer import LossScaleOptimizer

Policy = DTypePolicy
dtype_policy = global_policy
set_dtype_policy = set_global_policy

__all__ = [
    "DTypePolicy",
    "LossScaleOptimizer",
    "Policy",
    "dtype_policy",
    "global_policy",
    "set_dtype_policy",
    "set_global_policy",
]
