"""ft.keras.optimizers against numpy implementations of Keras 3's update rules.

Variables are float64 so the comparisons can be tight; the learning rate is stored in a float32
variable (as Keras does), so the references use the float32-rounded value.
"""

import math
import warnings

import numpy as np
import pytest

import ferrotape as ft
from ferrotape.keras import optimizers
from ferrotape.keras.optimizers import schedules

SHAPES = [(3, 2), (2,), (1,)]
STEPS = 4


def f32(x):
    """A learning rate as the float32 variable holds it."""
    return float(np.float32(x))


def make_problem(seed=0):
    """Initial values and one gradient list per step (float64)."""
    rng = np.random.default_rng(seed)
    initial = [rng.normal(size=s) for s in SHAPES]
    grads = [[rng.normal(size=s) for s in SHAPES] for _ in range(STEPS)]
    return initial, grads


def run_ft(optimizer, initial, grads):
    """Applies the gradient lists with ``optimizer``; returns the values after each step."""
    variables = [ft.Variable(x.copy()) for x in initial]
    history = []
    for step_grads in grads:
        optimizer.apply_gradients(zip([ft.constant(g) for g in step_grads], variables, strict=True))
        history.append([v.numpy() for v in variables])
    return history


def run_np(update, initial, grads, state=None):
    """The numpy reference: ``update(step, g, w, s)`` returns the new ``w`` (``s`` a dict per
    variable, ``step`` counting from 1)."""
    values = [x.copy() for x in initial]
    states = [{} for _ in values]
    history = []
    for step, step_grads in enumerate(grads, start=1):
        values = [update(step, g, w, s) for g, w, s in zip(step_grads, values, states, strict=True)]
        history.append([w.copy() for w in values])
    return history


def assert_history_close(actual, expected, rtol=1e-10, atol=1e-12):
    for step, (a_values, e_values) in enumerate(zip(actual, expected, strict=True), start=1):
        for a, e in zip(a_values, e_values, strict=True):
            np.testing.assert_allclose(a, e, rtol=rtol, atol=atol, err_msg=f"step {step}")


# ---------------------------------------------------------------- numpy references


def sgd_ref(lr, momentum=0.0, nesterov=False):
    def update(step, g, w, s):
        if momentum == 0:
            return w - lr * g
        m = s.get("m", np.zeros_like(w))
        m = momentum * m - lr * g
        s["m"] = m
        return w + (momentum * m - lr * g if nesterov else m)

    return update


def adam_ref(lr, beta_1=0.9, beta_2=0.999, eps=1e-7, amsgrad=False, weight_decay=None):
    def update(step, g, w, s):
        if weight_decay is not None:
            w = w - w * weight_decay * lr
        m = s.get("m", np.zeros_like(w))
        v = s.get("v", np.zeros_like(w))
        m = m + (g - m) * (1 - beta_1)
        v = v + (g * g - v) * (1 - beta_2)
        s["m"], s["v"] = m, v
        if amsgrad:
            v = np.maximum(s.get("v_hat", np.zeros_like(w)), v)
            s["v_hat"] = v
        alpha = lr * math.sqrt(1 - beta_2**step) / (1 - beta_1**step)
        return w - alpha * m / (np.sqrt(v) + eps)

    return update


def rmsprop_ref(lr, rho=0.9, momentum=0.0, eps=1e-7, centered=False):
    def update(step, g, w, s):
        vel = rho * s.get("vel", np.zeros_like(w)) + (1 - rho) * g * g
        s["vel"] = vel
        if centered:
            avg = rho * s.get("avg", np.zeros_like(w)) + (1 - rho) * g
            s["avg"] = avg
            denominator = vel - avg**2 + eps
        else:
            denominator = vel + eps
        increment = lr * g / np.sqrt(denominator)
        if momentum > 0:
            mom = momentum * s.get("mom", np.zeros_like(w)) + increment
            s["mom"] = mom
            return w - mom
        return w - increment

    return update


def adagrad_ref(lr, initial_accumulator_value=0.1, eps=1e-7):
    def update(step, g, w, s):
        acc = s.get("acc", np.full_like(w, initial_accumulator_value)) + g * g
        s["acc"] = acc
        return w - lr * g / np.sqrt(acc + eps)

    return update


# -------------------------------------------------------------- update rules


@pytest.mark.parametrize(
    "make, reference",
    [
        (lambda: optimizers.SGD(), sgd_ref(f32(0.01))),
        (lambda: optimizers.SGD(0.1, momentum=0.9), sgd_ref(f32(0.1), 0.9)),
        (
            lambda: optimizers.SGD(0.1, momentum=0.5, nesterov=True),
            sgd_ref(f32(0.1), 0.5, nesterov=True),
        ),
        (lambda: optimizers.Adam(), adam_ref(f32(0.001))),
        (
            lambda: optimizers.Adam(0.05, beta_1=0.8, beta_2=0.99, epsilon=1e-3),
            adam_ref(f32(0.05), 0.8, 0.99, 1e-3),
        ),
        (lambda: optimizers.Adam(0.05, amsgrad=True), adam_ref(f32(0.05), amsgrad=True)),
        (lambda: optimizers.AdamW(0.05), adam_ref(f32(0.05), weight_decay=0.004)),
        (
            lambda: optimizers.AdamW(0.05, weight_decay=0.1, amsgrad=True),
            adam_ref(f32(0.05), weight_decay=0.1, amsgrad=True),
        ),
        (lambda: optimizers.RMSprop(), rmsprop_ref(f32(0.001))),
        (lambda: optimizers.RMSprop(0.01, rho=0.8), rmsprop_ref(f32(0.01), rho=0.8)),
        (lambda: optimizers.RMSprop(0.01, centered=True), rmsprop_ref(f32(0.01), centered=True)),
        (lambda: optimizers.RMSprop(0.01, momentum=0.7), rmsprop_ref(f32(0.01), momentum=0.7)),
        (
            lambda: optimizers.RMSprop(0.01, momentum=0.7, centered=True),
            rmsprop_ref(f32(0.01), momentum=0.7, centered=True),
        ),
        (lambda: optimizers.Adagrad(), adagrad_ref(f32(0.001))),
        (
            lambda: optimizers.Adagrad(0.1, initial_accumulator_value=0.5, epsilon=1e-3),
            adagrad_ref(f32(0.1), 0.5, 1e-3),
        ),
    ],
    ids=[
        "sgd",
        "sgd_momentum",
        "sgd_nesterov",
        "adam",
        "adam_betas",
        "adam_amsgrad",
        "adamw",
        "adamw_amsgrad",
        "rmsprop",
        "rmsprop_rho",
        "rmsprop_centered",
        "rmsprop_momentum",
        "rmsprop_centered_momentum",
        "adagrad",
        "adagrad_args",
    ],
)
def test_update_rule_matches_numpy(make, reference):
    initial, grads = make_problem()
    actual = run_ft(make(), initial, grads)
    assert_history_close(actual, run_np(reference, initial, grads))


def test_defaults_and_names_follow_keras():
    assert optimizers.SGD().name == "SGD"
    assert optimizers.Adam().name == "adam"
    assert optimizers.AdamW().name == "adamw"
    assert optimizers.RMSprop().name == "rmsprop"
    assert optimizers.Adagrad().name == "adagrad"
    adam = optimizers.Adam()
    assert (adam.beta_1, adam.beta_2, adam.epsilon, adam.amsgrad) == (0.9, 0.999, 1e-7, False)
    assert float(adam.learning_rate) == pytest.approx(0.001)
    assert float(optimizers.SGD().learning_rate) == pytest.approx(0.01)
    assert optimizers.AdamW().weight_decay == 0.004
    rms = optimizers.RMSprop()
    assert (rms.rho, rms.momentum, rms.epsilon, rms.centered) == (0.9, 0.0, 1e-7, False)
    assert optimizers.Adagrad().initial_accumulator_value == 0.1


def test_float32_variables_and_numpy_gradients():
    initial, grads = make_problem(1)
    variables = [ft.Variable(x.astype(np.float32)) for x in initial]
    opt = optimizers.Adam(0.01)
    for step_grads in grads:
        # numpy float64 gradients are converted and cast to the variables' float32
        opt.apply_gradients(zip(step_grads, variables, strict=True))
    expected = run_np(adam_ref(f32(0.01)), initial, grads)[-1]
    for v, e in zip(variables, expected, strict=True):
        assert v.dtype == ft.float32
        np.testing.assert_allclose(v.numpy(), e, rtol=1e-5, atol=1e-6)


# ------------------------------------------------------------------- clipping


def _clip_norm(g, c):
    return g * c / max(np.linalg.norm(g), c)


def test_clipnorm_clips_each_gradient():
    initial, grads = make_problem(2)
    grads = [[3 * g for g in step] for step in grads]  # some norms above, some below 1
    clipped = [[_clip_norm(g, 1.0) for g in step] for step in grads]
    actual = run_ft(optimizers.SGD(0.1, clipnorm=1.0), initial, grads)
    assert_history_close(actual, run_np(sgd_ref(f32(0.1)), initial, clipped))
    norms = [np.linalg.norm(g) for step in grads for g in step]
    assert min(norms) < 1.0 < max(norms)


def test_global_clipnorm_scales_all_gradients_together():
    initial, grads = make_problem(3)
    clipped = []
    for step in grads:
        norm = math.sqrt(sum(float(np.sum(g * g)) for g in step))
        clipped.append([g * 1.5 / max(norm, 1.5) for g in step])
    actual = run_ft(optimizers.Adam(0.1, global_clipnorm=1.5), initial, grads)
    assert_history_close(actual, run_np(adam_ref(f32(0.1)), initial, clipped))


def test_global_clipnorm_keeps_small_and_zero_gradients():
    w = ft.Variable(np.array([1.0, 2.0]))
    opt = optimizers.SGD(1.0, global_clipnorm=10.0)
    opt.apply_gradients([(ft.constant(np.zeros(2)), w)])
    np.testing.assert_array_equal(w.numpy(), [1.0, 2.0])
    opt.apply_gradients([(ft.constant(np.array([0.5, 0.0])), w)])
    np.testing.assert_allclose(w.numpy(), [0.5, 2.0])


def test_clipvalue_clips_elementwise():
    initial, grads = make_problem(4)
    clipped = [[np.clip(g, -0.5, 0.5) for g in step] for step in grads]
    actual = run_ft(optimizers.RMSprop(0.01, clipvalue=0.5), initial, grads)
    assert_history_close(actual, run_np(rmsprop_ref(f32(0.01)), initial, clipped))


def test_only_one_clipping_argument():
    with pytest.raises(ValueError, match="Adam.*only one of `clipnorm`"):
        optimizers.Adam(clipnorm=1.0, clipvalue=1.0)


# --------------------------------------------------------------- weight decay


def test_weight_decay_on_any_optimizer_and_exclusion():
    initial, grads = make_problem(5)
    variables = [
        ft.Variable(x.copy(), name=n)
        for x, n in zip(initial, ["kernel", "bias", "b2"], strict=True)
    ]
    opt = optimizers.SGD(0.1, weight_decay=0.5)
    opt.exclude_from_weight_decay(var_list=[variables[2]], var_names=["bias"])
    for step in grads:
        opt.apply_gradients(zip([ft.constant(g) for g in step], variables, strict=True))
    lr = f32(0.1)
    decayed = run_np(
        lambda s, g, w, st: w - w * 0.5 * lr - lr * g, initial[:1], [s[:1] for s in grads]
    )
    plain = run_np(sgd_ref(lr), initial[1:], [s[1:] for s in grads])
    np.testing.assert_allclose(variables[0].numpy(), decayed[-1][0], rtol=1e-12)
    np.testing.assert_allclose(variables[1].numpy(), plain[-1][0], rtol=1e-12)
    np.testing.assert_allclose(variables[2].numpy(), plain[-1][1], rtol=1e-12)
    with pytest.raises(ValueError, match="before the optimizer is built"):
        opt.exclude_from_weight_decay(var_names=["kernel"])


def test_adamw_requires_weight_decay():
    with pytest.raises(ValueError, match="AdamW.*weight_decay"):
        optimizers.AdamW(weight_decay=None)


# ------------------------------------------------------------------ schedules


def test_schedule_values():
    exp = schedules.ExponentialDecay(0.1, decay_steps=10, decay_rate=0.5)
    stair = schedules.ExponentialDecay(0.1, 10, 0.5, staircase=True)
    inv = schedules.InverseTimeDecay(0.1, decay_steps=4, decay_rate=0.5)
    inv_stair = schedules.InverseTimeDecay(0.1, 4, 0.5, staircase=True)
    cos = schedules.CosineDecay(0.1, decay_steps=20, alpha=0.1)
    warm = schedules.CosineDecay(0.0, 20, warmup_target=0.2, warmup_steps=5)
    piece = schedules.PiecewiseConstantDecay([3, 6], [1.0, 0.5, 0.1])
    poly = schedules.PolynomialDecay(0.1, 10, end_learning_rate=0.01, power=2.0)
    for step in [0, 1, 3, 5, 7, 15, 25, 40]:
        assert float(exp(step)) == pytest.approx(0.1 * 0.5 ** (step / 10), rel=1e-6)
        assert float(stair(step)) == pytest.approx(0.1 * 0.5 ** (step // 10), rel=1e-6)
        assert float(inv(step)) == pytest.approx(0.1 / (1 + 0.5 * step / 4), rel=1e-6)
        assert float(inv_stair(step)) == pytest.approx(0.1 / (1 + 0.5 * (step // 4)), rel=1e-6)
        s = min(step, 20)
        expected_cos = 0.1 * (0.9 * 0.5 * (1 + math.cos(math.pi * s / 20)) + 0.1)
        assert float(cos(step)) == pytest.approx(expected_cos, rel=1e-6, abs=1e-9)
        if step < 5:
            expected_warm = 0.2 * step / 5
        else:
            s = min(step, 25) - 5
            expected_warm = 0.2 * 0.5 * (1 + math.cos(math.pi * s / 20))
        assert float(warm(step)) == pytest.approx(expected_warm, rel=1e-6, abs=1e-9)
        expected_piece = 1.0 if step <= 3 else 0.5 if step <= 6 else 0.1
        assert float(piece(step)) == pytest.approx(expected_piece)
        s = min(step, 10)
        assert float(poly(step)) == pytest.approx(0.09 * (1 - s / 10) ** 2 + 0.01, rel=1e-6)
    assert exp(3).dtype == ft.float32
    assert float(exp(ft.Variable(10, dtype=ft.int64))) == pytest.approx(0.05)


def test_cosine_decay_restarts():
    sched = schedules.CosineDecayRestarts(1.0, first_decay_steps=10, t_mul=2.0, m_mul=0.5)
    assert float(sched(0)) == pytest.approx(1.0)
    assert float(sched(5)) == pytest.approx(0.5, abs=1e-6)
    # The second period starts at step 10, lasts 20 steps and peaks at 0.5.
    assert float(sched(10)) == pytest.approx(0.5, rel=1e-6)
    assert float(sched(20)) == pytest.approx(0.25, rel=1e-6)
    constant_periods = schedules.CosineDecayRestarts(1.0, 10, t_mul=1.0)
    assert float(constant_periods(15)) == pytest.approx(float(constant_periods(5)))


@pytest.mark.parametrize(
    "schedule",
    [
        schedules.ExponentialDecay(0.1, 2, 0.5),
        schedules.PiecewiseConstantDecay([0, 2], [0.3, 0.2, 0.1]),
        schedules.CosineDecay(0.1, 3),
    ],
)
def test_optimizer_evaluates_schedule_at_iterations(schedule):
    initial, grads = make_problem(6)
    rates = [f32(float(schedule(step))) for step in range(STEPS)]
    actual = run_ft(optimizers.SGD(learning_rate=schedule), initial, grads)
    expected = run_np(lambda s, g, w, st: w - rates[s - 1] * g, initial, grads)
    assert_history_close(actual, expected, rtol=1e-6)
    # Adam too (its bias correction uses the step count, the schedule the iterations)
    rates64 = [float(schedule(step)) for step in range(STEPS)]
    adam_refs = [adam_ref(r) for r in rates64]
    actual = run_ft(optimizers.Adam(learning_rate=schedule), initial, grads)
    expected = run_np(lambda s, g, w, st: adam_refs[s - 1](s, g, w, st), initial, grads)
    assert_history_close(actual, expected, rtol=1e-6)


def test_bad_schedule_arguments():
    with pytest.raises(ValueError, match="decay_steps"):
        schedules.ExponentialDecay(0.1, 0, 0.5)
    with pytest.raises(ValueError, match="1 less than the length of values"):
        schedules.PiecewiseConstantDecay([1, 2], [1.0, 0.5])


def test_schedule_serialization_round_trip():
    sched = schedules.CosineDecay(0.1, 100, alpha=0.2, warmup_target=0.3, warmup_steps=7)
    again = schedules.deserialize(schedules.serialize(sched))
    assert isinstance(again, schedules.CosineDecay)
    for step in [0, 3, 50, 200]:
        assert float(again(step)) == float(sched(step))


# ----------------------------------------------------------- learning rate


def test_learning_rate_is_settable():
    w = ft.Variable(np.array([1.0]))
    opt = optimizers.SGD(0.5)
    opt.apply_gradients([(ft.constant(np.array([1.0])), w)])
    opt.learning_rate = 0.25
    assert float(opt.learning_rate) == 0.25
    opt.apply_gradients([(ft.constant(np.array([1.0])), w)])
    opt.learning_rate.assign(0.125)  # the Keras way of callbacks
    opt.apply_gradients([(ft.constant(np.array([1.0])), w)])
    np.testing.assert_allclose(w.numpy(), [1.0 - 0.5 - 0.25 - 0.125])
    opt.learning_rate = schedules.PiecewiseConstantDecay([3], [1.0, 2.0])
    assert float(opt.learning_rate) == 1.0  # iterations == 3
    opt.apply_gradients([(ft.constant(np.array([1.0])), w)])
    assert float(opt.learning_rate) == 2.0
    np.testing.assert_allclose(w.numpy(), [0.125 - 1.0])
    assert all("learning_rate" not in v.name for v in opt.variables)


def test_learning_rate_of_a_schedule_optimizer_is_not_settable_to_a_float():
    opt = optimizers.Adam(schedules.ExponentialDecay(0.1, 10, 0.9))
    with pytest.raises(TypeError, match="not settable"):
        opt.learning_rate = 0.1


def test_callable_learning_rate():
    w = ft.Variable(np.array([1.0]))
    opt = optimizers.SGD(lambda: 0.5)
    opt.apply_gradients([(ft.constant(np.array([1.0])), w)])
    np.testing.assert_allclose(w.numpy(), [0.5])


@pytest.mark.parametrize("bad", ["0.1", None, [0.1, 0.2]])
def test_bad_learning_rate(bad):
    with pytest.raises(ValueError, match="SGD.*learning_rate"):
        optimizers.SGD(learning_rate=bad)


# ------------------------------------------------------ legacy lr and decay


def test_legacy_lr_and_decay_warn_and_decay_inverse_time():
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        opt = optimizers.Adam(lr=1e-2, decay=1e-2 / 25)
    assert [w.category for w in record] == [DeprecationWarning] * 2
    assert "use `learning_rate`" in str(record[0].message)
    assert "decay" in str(record[1].message) and "InverseTimeDecay" in str(record[1].message)
    assert all(w.filename == __file__ for w in record)  # blamed on the caller's line
    assert float(opt.learning_rate) == pytest.approx(1e-2)
    initial, grads = make_problem(7)
    actual = run_ft(opt, initial, grads)
    lr = f32(1e-2)
    refs = [adam_ref(lr / (1 + 1e-2 / 25 * t)) for t in range(STEPS)]
    expected = run_np(lambda s, g, w, st: refs[s - 1](s, g, w, st), initial, grads)
    assert_history_close(actual, expected)


def test_legacy_decay_on_sgd_and_rmsprop():
    initial, grads = make_problem(8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        sgd = optimizers.SGD(lr=0.1, decay=0.5, momentum=0.9)
    lr = f32(0.1)
    refs = [sgd_ref(lr / (1 + 0.5 * t), 0.9) for t in range(STEPS)]
    # one momentum state shared across the per-step references
    expected = run_np(lambda s, g, w, st: refs[s - 1](s, g, w, st), initial, grads)
    assert_history_close(run_ft(sgd, initial, grads), expected)
    with pytest.warns(DeprecationWarning):
        rms = optimizers.RMSprop(decay=0.1)
    refs = [rmsprop_ref(f32(0.001) / (1 + 0.1 * t)) for t in range(STEPS)]
    expected = run_np(lambda s, g, w, st: refs[s - 1](s, g, w, st), initial, grads)
    assert_history_close(run_ft(rms, initial, grads), expected)


def test_legacy_lr_alone_has_no_decay():
    with pytest.warns(DeprecationWarning, match="lr"):
        opt = optimizers.SGD(lr=0.5)
    w = ft.Variable(np.array([1.0]))
    for _ in range(3):
        opt.apply_gradients([(ft.constant(np.array([1.0])), w)])
    np.testing.assert_allclose(w.numpy(), [-0.5])


def test_unknown_argument():
    with pytest.raises(ValueError, match="Adam.*not recognized.*momentum"):
        optimizers.Adam(momentum=0.9)


# --------------------------------------------------- None gradients, bookkeeping


def test_none_gradients_skip_their_variables():
    a = ft.Variable(np.array([1.0, 2.0]))
    b = ft.Variable(np.array([3.0]))
    opt = optimizers.SGD(0.5, momentum=0.5)
    with pytest.warns(UserWarning, match="do not exist") as record:
        opt.apply_gradients([(None, a), (ft.constant(np.array([2.0])), b)])
    assert record[0].filename == __file__
    np.testing.assert_array_equal(a.numpy(), [1.0, 2.0])
    np.testing.assert_allclose(b.numpy(), [2.0])
    assert int(opt.iterations.numpy()) == 1
    # slots were built for both variables, in order, on the first call
    names = [v.name for v in opt.variables]
    assert len(names) == 4 and "iteration" in names[0] and "learning_rate" in names[1]
    assert all("momentum" in n for n in names[2:])
    with pytest.warns(UserWarning, match="do not exist"):
        opt.apply_gradients([(ft.constant(np.array([1.0, 1.0])), a), (None, b)])
    np.testing.assert_allclose(a.numpy(), [0.5, 1.5])
    np.testing.assert_allclose(b.numpy(), [2.0])
    assert int(opt.iterations.numpy()) == 2


def test_all_none_gradients_is_an_error():
    with pytest.raises(ValueError, match="no gradients provided"):
        optimizers.Adam().apply_gradients([(None, ft.Variable(1.0))])


def test_iterations_and_slot_order():
    variables = [ft.Variable(np.zeros(s), name=f"w{k}") for k, s in enumerate(SHAPES)]
    opt = optimizers.Adam(amsgrad=True)
    assert not opt.built and int(opt.iterations.numpy()) == 0
    for step in range(1, 4):
        opt.apply_gradients([(ft.ones_like(v), v) for v in variables])
        assert int(opt.iterations.numpy()) == step
    assert opt.iterations.dtype == ft.int64
    slots = opt.variables[2:]
    assert len(slots) == 3 * len(variables)
    # Keras 3.15's order (checked in Keras on TensorFlow): momentum and velocity variable by
    # variable, then every velocity_hat.
    want = [pair for k in range(len(variables)) for pair in ((k, "momentum"), (k, "velocity"))]
    want += [(k, "velocity_hat") for k in range(len(variables))]
    for slot, (k, kind) in zip(slots, want, strict=True):
        assert tuple(slot.shape) == tuple(variables[k].shape)
        assert slot.name.split("_", 1)[1] == f"{kind}:0" and f"w{k}" in slot.name
        assert not slot.trainable


def test_rmsprop_slot_order_is_keras():
    variables = [ft.Variable(np.zeros(s), name=f"w{k}") for k, s in enumerate(SHAPES)]
    opt = optimizers.RMSprop(momentum=0.9, centered=True)
    opt.build(variables)
    kinds = ["velocity", "momentum", "average_gradient"]
    want = [(k, kind) for kind in kinds for k in range(len(variables))]
    for slot, (k, kind) in zip(opt.variables[2:], want, strict=True):
        assert slot.name.split("_", 1)[1] == f"{kind}:0" and f"w{k}" in slot.name


def test_new_variables_get_slots_lazily():
    a, b = ft.Variable(np.array([1.0])), ft.Variable(np.array([2.0]))
    opt = optimizers.Adam(0.1)
    opt.apply_gradients([(ft.constant(np.array([1.0])), a)])
    opt.apply_gradients([(ft.constant(np.array([1.0])), b)])
    assert len(opt.variables) == 2 + 2 * 2
    # b's first update is a full-size Adam step at t=2 (bias-corrected, m=0.1, v=0.001)
    alpha = f32(0.1) * math.sqrt(1 - 0.999**2) / (1 - 0.9**2)
    np.testing.assert_allclose(b.numpy(), [2.0 - alpha * 0.1 / (math.sqrt(0.001) + 1e-7)])


def test_apply_with_built_variables():
    w = ft.Variable(np.array([1.0, 1.0]))
    opt = optimizers.SGD(0.5)
    with pytest.raises(ValueError, match="must already be built"):
        opt.apply([ft.constant(np.ones(2))])
    opt.build([w])
    opt.apply([ft.constant(np.ones(2))])
    np.testing.assert_allclose(w.numpy(), [0.5, 0.5])


# ----------------------------------------------------------------- bad input


def test_non_variable_is_rejected():
    with pytest.raises(ValueError, match="SGD.*ft.Variable"):
        optimizers.SGD().apply_gradients([(ft.constant(1.0), ft.constant(2.0))])


@pytest.mark.parametrize("make", [optimizers.SGD, optimizers.Adam, optimizers.RMSprop])
def test_shape_mismatch_is_rejected(make):
    w = ft.Variable(np.zeros((2, 3)))
    opt = make()
    with pytest.raises(ValueError, match=f"{make.__name__}.*shape \\(3,\\).*\\(2, 3\\)"):
        opt.apply_gradients([(ft.constant(np.ones(3)), w)])
    np.testing.assert_array_equal(w.numpy(), np.zeros((2, 3)))
    assert int(opt.iterations.numpy()) == 0


def test_bad_sgd_momentum():
    with pytest.raises(ValueError, match="momentum"):
        optimizers.SGD(momentum=1.5)
    with pytest.raises(ValueError, match="momentum"):
        optimizers.SGD(momentum="0.9")


def test_gradient_accumulation_is_not_supported():
    with pytest.raises(NotImplementedError, match="gradient_accumulation_steps"):
        optimizers.Adam(gradient_accumulation_steps=4)


# ------------------------------------------------------------ ema, loss scale


def test_ema_tracks_a_moving_average():
    w = ft.Variable(np.array([0.0]))
    opt = optimizers.SGD(1.0, use_ema=True, ema_momentum=0.5)
    averages, value, average = [], 0.0, None
    for g in [1.0, 2.0, -1.0]:
        opt.apply_gradients([(ft.constant(np.array([g])), w)])
        value -= g
        average = value if average is None else 0.5 * average + 0.5 * value
        averages.append(average)
    np.testing.assert_allclose(w.numpy(), [value])
    opt.finalize_variable_values([w])
    np.testing.assert_allclose(w.numpy(), [averages[-1]])


def test_ema_overwrite_frequency():
    w = ft.Variable(np.array([0.0]))
    opt = optimizers.SGD(1.0, use_ema=True, ema_momentum=0.5, ema_overwrite_frequency=2)
    opt.apply_gradients([(ft.constant(np.array([1.0])), w)])  # w=-1, avg=-1
    opt.apply_gradients([(ft.constant(np.array([1.0])), w)])  # w=-2, avg=-1.5, overwritten
    np.testing.assert_allclose(w.numpy(), [-1.5])
    with pytest.raises(ValueError, match="ema_momentum"):
        optimizers.SGD(use_ema=True, ema_momentum=2.0)


def test_loss_scale_factor_unscales_gradients():
    w = ft.Variable(np.array([1.0]))
    opt = optimizers.SGD(0.5, loss_scale_factor=4.0)
    assert float(opt.scale_loss(ft.constant(2.0))) == 8.0
    opt.apply_gradients([(ft.constant(np.array([4.0])), w)])
    np.testing.assert_allclose(w.numpy(), [0.5])


# ------------------------------------------------------------- get, config


@pytest.mark.parametrize(
    "name, cls",
    [
        ("adam", optimizers.Adam),
        ("Adam", optimizers.Adam),
        ("SGD", optimizers.SGD),
        ("sgd", optimizers.SGD),
        ("rmsprop", optimizers.RMSprop),
        ("AdamW", optimizers.AdamW),
        ("adagrad", optimizers.Adagrad),
    ],
)
def test_get_by_name(name, cls):
    assert type(optimizers.get(name)) is cls


def test_get_instance_dict_and_bad_identifier():
    opt = optimizers.RMSprop(0.02, momentum=0.5)
    assert optimizers.get(opt) is opt
    again = optimizers.get(optimizers.serialize(opt))
    assert isinstance(again, optimizers.RMSprop) and again.momentum == 0.5
    assert float(again.learning_rate) == pytest.approx(0.02)
    adam = optimizers.get({"class_name": "Adam", "config": {"learning_rate": 0.5}})
    assert float(adam.learning_rate) == 0.5
    with pytest.raises(ValueError, match="could not interpret optimizer identifier"):
        optimizers.get("no_such_optimizer")
    with pytest.raises(ValueError, match="could not interpret"):
        optimizers.get(3)


def test_config_round_trip_with_schedule():
    opt = optimizers.SGD(schedules.InverseTimeDecay(0.1, 5, 0.5), momentum=0.3, nesterov=True)
    config = opt.get_config()
    assert config["learning_rate"]["class_name"] == "InverseTimeDecay"
    again = optimizers.SGD.from_config(config)
    assert isinstance(again._learning_rate, schedules.InverseTimeDecay)
    assert (again.momentum, again.nesterov) == (0.3, True)


def test_package_aliases():
    assert ft.optimizers.Adam is optimizers.Adam
    assert ft.keras.optimizers.schedules.ExponentialDecay is schedules.ExponentialDecay


# ----------------------------------------------------------- with the tape


def test_step_inside_a_tape_records_nothing_of_the_optimizer():
    w = ft.Variable(np.array([1.0, 2.0]))
    opt = optimizers.Adam(0.1, weight_decay=0.1)
    with ft.GradientTape(persistent=True) as tape:
        loss = ft.reduce_sum(w * w)
        grads = tape.gradient(loss, [w])
        opt.apply_gradients(zip(grads, [w], strict=True))
    assert [v.name for v in tape.watched_variables()] == [w.name]
    np.testing.assert_allclose(tape.gradient(loss, w).numpy(), [2.0, 4.0])


def test_minimize():
    w = ft.Variable(np.array([3.0]))
    opt = optimizers.SGD(0.25)
    for _ in range(2):
        opt.minimize(lambda: ft.reduce_sum(w * w), [w])  # w -= 0.25 * 2w
    np.testing.assert_allclose(w.numpy(), [0.75])
    with pytest.raises(ValueError, match="tape"):
        opt.minimize(ft.constant(1.0), [w])


def test_keras_style_custom_optimizer():
    class SignDescent(optimizers.Optimizer):
        def __init__(self, learning_rate=0.1, **kwargs):
            super().__init__(learning_rate=learning_rate, **kwargs)

        def build(self, var_list):
            super().build(var_list)
            self.counts = [self.add_variable_from_reference(v, "count") for v in var_list]

        def update_step(self, gradient, variable, learning_rate):
            count = self.counts[self._get_variable_index(variable)]
            count.assign_add(ft.ones_like(count))
            variable.assign_sub(ft.sign(gradient) * ft.cast(learning_rate, variable.dtype))

    w = ft.Variable(np.array([1.0, -1.0]))
    opt = SignDescent(0.5)
    assert opt.name == "sign_descent"
    for _ in range(2):
        opt.apply_gradients([(ft.constant(np.array([3.0, -0.1])), w)])
    np.testing.assert_allclose(w.numpy(), [0.0, 0.0])
    np.testing.assert_array_equal(opt.counts[0].numpy(), [2.0, 2.0])
    with pytest.raises(ValueError, match="unknown variable"):
        opt.apply_gradients([(ft.constant(1.0), ft.Variable(1.0))])


def test_deprecation_warning_is_visible_to_scripts():
    # DeprecationWarning shows by default only when attributed to __main__: the warning
    # must point at the caller, not at ferrotape's own files.
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        optimizers.SGD(lr=0.1)
    assert record and record[0].filename == __file__


# ------------------------------------- the native rules in every float dtype, every option

# Gradient magnitudes in [0.5, 2] keep Adam's second moment a normal float16; the last steps'
# small gradients make v fall below its running maximum (amsgrad's v_hat).
STEP_SCALES = [1.0, 1.0, 0.01, 0.01]
NATIVE_SHAPES = [(5, 4), (3,), (40000,)]  # the last one is split across threads
# How far a variable may drift from the float64 reference after the steps (absolute plus
# relative): float32 rounds each stored value; float16 and bfloat16 keep 11 and 8 bits, and
# AdamW's decay (a separate op) rounds the variable once more per step.
NATIVE_TOLERANCE = {"float64": 1e-12, "float32": 1e-6, "float16": 2e-3, "bfloat16": 3e-2}


@pytest.mark.parametrize(
    "make, reference",
    [
        (lambda: optimizers.SGD(0.1), sgd_ref(f32(0.1))),
        (lambda: optimizers.SGD(0.1, momentum=0.9), sgd_ref(f32(0.1), 0.9)),
        (
            lambda: optimizers.SGD(0.1, momentum=0.9, nesterov=True),
            sgd_ref(f32(0.1), 0.9, nesterov=True),
        ),
        (lambda: optimizers.Adam(0.1), adam_ref(f32(0.1))),
        (lambda: optimizers.Adam(0.1, amsgrad=True), adam_ref(f32(0.1), amsgrad=True)),
        (
            lambda: optimizers.AdamW(0.1, weight_decay=0.1),
            adam_ref(f32(0.1), weight_decay=0.1),
        ),
        (
            lambda: optimizers.AdamW(0.1, weight_decay=0.1, amsgrad=True),
            adam_ref(f32(0.1), weight_decay=0.1, amsgrad=True),
        ),
        (lambda: optimizers.RMSprop(0.01), rmsprop_ref(f32(0.01))),
        (lambda: optimizers.RMSprop(0.01, momentum=0.9), rmsprop_ref(f32(0.01), momentum=0.9)),
        (lambda: optimizers.RMSprop(0.01, centered=True), rmsprop_ref(f32(0.01), centered=True)),
        (
            lambda: optimizers.RMSprop(0.01, momentum=0.9, centered=True),
            rmsprop_ref(f32(0.01), momentum=0.9, centered=True),
        ),
        (lambda: optimizers.Adagrad(0.1), adagrad_ref(f32(0.1))),
    ],
    ids=[
        "sgd",
        "sgd_momentum",
        "sgd_nesterov",
        "adam",
        "adam_amsgrad",
        "adamw",
        "adamw_amsgrad",
        "rmsprop",
        "rmsprop_momentum",
        "rmsprop_centered",
        "rmsprop_centered_momentum",
        "adagrad",
    ],
)
@pytest.mark.parametrize("dtype", ["float64", "float32", "float16", "bfloat16"])
def test_native_rule_matches_a_float64_reference_in_every_float_dtype(make, reference, dtype):
    ft_dtype = ft.as_dtype(dtype)
    rng = np.random.default_rng(3)

    def rounded(x):
        # The values the variables and gradients actually hold, for the reference too.
        return ft.cast(ft.constant(x), ft_dtype).numpy().astype(np.float64)

    initial = [rounded(rng.standard_normal(s)) for s in NATIVE_SHAPES]
    grads = [
        [
            rounded(scale * rng.choice([-1.0, 1.0], s) * rng.uniform(0.5, 2.0, s))
            for s in NATIVE_SHAPES
        ]
        for scale in STEP_SCALES
    ]
    optimizer = make()
    variables = [ft.Variable(ft.cast(ft.constant(x), ft_dtype)) for x in initial]
    actual = []
    for step_grads in grads:
        step_grads = [ft.cast(ft.constant(g), ft_dtype) for g in step_grads]
        optimizer.apply_gradients(zip(step_grads, variables, strict=True))
        assert all(v.dtype == ft_dtype for v in variables)
        actual.append([ft.cast(v, ft.float64).numpy() for v in variables])
    expected = run_np(reference, initial, grads)
    tolerance = NATIVE_TOLERANCE[dtype]
    for step, (a_values, e_values) in enumerate(zip(actual, expected, strict=True), start=1):
        for a, e in zip(a_values, e_values, strict=True):
            np.testing.assert_allclose(
                a, e, rtol=tolerance, atol=tolerance, err_msg=f"{dtype} step {step}"
            )
    assert not np.array_equal(actual[-1][2], initial[2])


def test_amsgrad_reference_exercises_the_running_maximum():
    # The reference data of the test above: v falls below v_hat in the last steps.
    update = adam_ref(0.1, amsgrad=True)
    state = {}
    w = np.ones(3)
    for step, scale in enumerate(STEP_SCALES, start=1):
        w = update(step, np.full(3, scale), w, state)
    assert np.all(state["v"] < state["v_hat"])


def test_a_subclass_overriding_update_step_gets_it_called_and_reaches_the_same_rule():
    class CountingAdam(optimizers.Adam):
        calls = 0

        def update_step(self, gradient, variable, learning_rate):
            type(self).calls += 1
            super().update_step(gradient, variable, learning_rate)

    rng = np.random.default_rng(5)
    start = [rng.standard_normal(s).astype(np.float32) for s in [(4, 3), (3,)]]
    steps = [[rng.standard_normal(x.shape).astype(np.float32) for x in start] for _ in range(3)]
    results = []
    for opt in (CountingAdam(0.01, amsgrad=True), optimizers.Adam(0.01, amsgrad=True)):
        variables = [ft.Variable(x) for x in start]
        for grads in steps:
            opt.apply_gradients(zip(grads, variables, strict=True))
        results.append([v.numpy() for v in variables])
    assert CountingAdam.calls == 2 * 3
    for overridden, native in zip(*results, strict=True):
        np.testing.assert_array_equal(overridden, native)


def test_native_apply_rejects_bad_rules_slots_and_arguments():
    apply = ft._core.optimizers.apply
    w = ft.Variable([1.0, 2.0])
    g = ft.constant([0.1, 0.2])
    adam = {"beta_1": 0.9, "beta_2": 0.999, "epsilon": 1e-7, "amsgrad": False}
    with pytest.raises(ft.errors.InvalidArgumentError, match="unknown rule"):
        apply("adamx", 0.1, 1, adam, [w], [g], [[]])
    with pytest.raises(ft.errors.InvalidArgumentError, match="beta_2"):
        apply("adam", 0.1, 1, {"beta_1": 0.9}, [w], [g], [[]])
    with pytest.raises(ft.errors.InvalidArgumentError, match="expected 2 optimizer slots"):
        apply("adam", 0.1, 1, adam, [w], [g], [[ft.Variable([0.0, 0.0])]])
    with pytest.raises(ft.errors.InvalidArgumentError, match="distinct"):
        apply("adam", 0.1, 1, adam, [w], [g], [[w, ft.Variable([0.0, 0.0])]])
    with pytest.raises(TypeError, match="Variables"):
        apply("sgd", 0.1, 1, {"momentum": 0.0, "nesterov": False}, [g], [g], [[]])
    with pytest.raises(ValueError, match="1 gradients for 2 variables"):
        apply("sgd", 0.1, 1, {"momentum": 0.0, "nesterov": False}, [w, w], [g], [[], []])
    np.testing.assert_array_equal(w.numpy(), [1.0, 2.0])


# ------------------------------------------ Nadam, Adamax, Adadelta, Lion (Keras 3's rules)


def nadam_ref(lr, beta_1=0.9, beta_2=0.999, eps=1e-7):
    # Keras keeps u_product in one optimizer variable, multiplied by u_t before each step.
    product = {"step": 0, "value": 1.0}

    def update(step, g, w, s):
        if product["step"] != step:
            product["value"] *= beta_1 * (1 - 0.5 * 0.96**step)
            product["step"] = step
        u_t = beta_1 * (1 - 0.5 * 0.96**step)
        u_t_1 = beta_1 * (1 - 0.5 * 0.96 ** (step + 1))
        m = s.get("m", np.zeros_like(w)) + (g - s.get("m", np.zeros_like(w))) * (1 - beta_1)
        v = s.get("v", np.zeros_like(w)) + (g * g - s.get("v", np.zeros_like(w))) * (1 - beta_2)
        s["m"], s["v"] = m, v
        p = product["value"]
        m_hat = u_t_1 * m / (1 - p * u_t_1) + (1 - u_t) * g / (1 - p)
        v_hat = v / (1 - beta_2**step)
        return w - m_hat * lr / (np.sqrt(v_hat) + eps)

    return update


def adamax_ref(lr, beta_1=0.9, beta_2=0.999, eps=1e-7):
    def update(step, g, w, s):
        m = s.get("m", np.zeros_like(w))
        m = m + (g - m) * (1 - beta_1)
        u = np.maximum(beta_2 * s.get("u", np.zeros_like(w)), np.abs(g))
        s["m"], s["u"] = m, u
        return w - lr * m / ((1 - beta_1**step) * (u + eps))

    return update


def adadelta_ref(lr, rho=0.95, eps=1e-7):
    def update(step, g, w, s):
        acc_g = rho * s.get("g", np.zeros_like(w)) + (1 - rho) * g * g
        acc_d = s.get("d", np.zeros_like(w))
        delta = -np.sqrt(acc_d + eps) * g / np.sqrt(acc_g + eps)
        s["g"], s["d"] = acc_g, rho * acc_d + (1 - rho) * delta * delta
        return w + lr * delta

    return update


def lion_ref(lr, beta_1=0.9, beta_2=0.99):
    def update(step, g, w, s):
        m = s.get("m", np.zeros_like(w))
        s["m"] = beta_2 * m + (1 - beta_2) * g
        return w - lr * np.sign(beta_1 * m + (1 - beta_1) * g)

    return update


@pytest.mark.parametrize(
    "make, reference",
    [
        (lambda: optimizers.Nadam(), nadam_ref(f32(0.001))),
        (lambda: optimizers.Nadam(0.05, 0.8, 0.99, 1e-3), nadam_ref(f32(0.05), 0.8, 0.99, 1e-3)),
        (lambda: optimizers.Adamax(), adamax_ref(f32(0.001))),
        (lambda: optimizers.Adamax(0.05, 0.8, 0.9, 1e-3), adamax_ref(f32(0.05), 0.8, 0.9, 1e-3)),
        (lambda: optimizers.Adadelta(), adadelta_ref(f32(0.001))),
        (lambda: optimizers.Adadelta(1.0, rho=0.9, epsilon=1e-4), adadelta_ref(1.0, 0.9, 1e-4)),
        (lambda: optimizers.Lion(), lion_ref(f32(0.001))),
        (lambda: optimizers.Lion(0.05, 0.5, 0.9), lion_ref(f32(0.05), 0.5, 0.9)),
    ],
    ids=[
        "nadam",
        "nadam_args",
        "adamax",
        "adamax_args",
        "adadelta",
        "adadelta_args",
        "lion",
        "lion_args",
    ],
)
def test_more_update_rules_match_numpy(make, reference):
    initial, grads = make_problem(1)
    actual = run_ft(make(), initial, grads)
    assert_history_close(actual, run_np(reference, initial, grads))


def test_more_optimizers_defaults_names_and_get():
    expected = {
        "nadam": (optimizers.Nadam, {"beta_1": 0.9, "beta_2": 0.999, "epsilon": 1e-7}),
        "adamax": (optimizers.Adamax, {"beta_1": 0.9, "beta_2": 0.999, "epsilon": 1e-7}),
        "adadelta": (optimizers.Adadelta, {"rho": 0.95, "epsilon": 1e-7}),
        "lion": (optimizers.Lion, {"beta_1": 0.9, "beta_2": 0.99}),
    }
    for name, (cls, defaults) in expected.items():
        opt = optimizers.get(name.upper())
        assert type(opt) is cls and opt.name == name
        assert float(opt.learning_rate) == pytest.approx(0.001)
        config = opt.get_config()
        assert {k: config[k] for k in defaults} == defaults
        again = optimizers.deserialize(optimizers.serialize(cls(0.02, name="x")))
        assert type(again) is cls and again.name == "x"
        assert float(again.learning_rate) == pytest.approx(0.02)
        assert getattr(ft.keras.optimizers, cls.__name__) is cls


def test_lion_rejects_beta_1_outside_unit_interval():
    for bad in (0.0, -0.1, 1.5):
        with pytest.raises(ValueError, match=f"beta_1={bad}"):
            optimizers.Lion(beta_1=bad)


def test_nadam_resumes_from_iterations_alone():
    # The momentum-schedule product is a function of the step: a second optimizer handed the
    # slots and the step count continues exactly where the first would have.
    initial, grads = make_problem(2)
    full = run_ft(optimizers.Nadam(0.05), initial, grads)
    first = optimizers.Nadam(0.05)
    variables = [ft.Variable(x.copy()) for x in initial]
    for step_grads in grads[:2]:
        first.apply_gradients(zip([ft.constant(g) for g in step_grads], variables, strict=True))
    second = optimizers.Nadam(0.05)
    second.build(variables)
    for mine, theirs in zip(second.variables, first.variables, strict=True):
        mine.assign(theirs)
    for step_grads in grads[2:]:
        second.apply_gradients(zip([ft.constant(g) for g in step_grads], variables, strict=True))
    for v, expected in zip(variables, full[-1], strict=True):
        np.testing.assert_allclose(v.numpy(), expected, rtol=1e-12)


def _lamb_reference(w, grads, lr=0.01, beta_1=0.9, beta_2=0.999, epsilon=1e-7):
    """Keras 3's Lamb in float64 numpy, step by step."""
    w = np.array(w, dtype=np.float64)
    m, v = np.zeros_like(w), np.zeros_like(w)
    for t, g in enumerate(grads, start=1):
        m += (g - m) * (1 - beta_1)
        v += (g * g - v) * (1 - beta_2)
        update = (m / (1 - beta_1**t)) / (np.sqrt(v / (1 - beta_2**t)) + epsilon)
        w_norm, u_norm = np.linalg.norm(w), np.linalg.norm(update)
        ratio = w_norm / u_norm if w_norm > 0 and u_norm > 0 else 1.0
        w = w - ratio * lr * update
    return w


@pytest.mark.parametrize("start", ["random", "zeros"])
def test_lamb_follows_keras_rule_step_by_step(start):
    rng = np.random.default_rng(7)
    w0 = rng.normal(size=(3, 4)) if start == "random" else np.zeros((3, 4))
    grads = [rng.normal(size=(3, 4)) for _ in range(5)]
    w = ft.Variable(w0, dtype=ft.float64)
    opt = ft.keras.optimizers.get("lamb")
    opt.learning_rate = 0.01
    for g in grads:
        opt.apply_gradients([(ft.constant(g), w)])
    # The learning rate is held in a float32 variable, as in Keras.
    expected = _lamb_reference(w0, grads, lr=float(np.float32(0.01)))
    np.testing.assert_allclose(w.numpy(), expected, rtol=1e-10, atol=1e-12)
    assert len(opt.variables) == 4  # iterations, learning rate, momentum, velocity
    again = ft.keras.optimizers.Lamb.from_config(opt.get_config())
    assert (again.beta_1, again.beta_2, again.epsilon) == (0.9, 0.999, 1e-7)


def _ftrl_reference(w, grads, lr, power=-0.5, n0=0.1, l1=0.0, l2=0.0, shrink=0.0, beta=0.0):
    """Keras 3's Ftrl in float64 numpy, step by step."""
    w = np.array(w, dtype=np.float64)
    n, z = np.full_like(w, n0), np.zeros_like(w)
    l2 = l2 + beta / (2.0 * lr)
    for g in grads:
        g_shrunk = g + 2 * shrink * w
        n_new = n + g * g
        z += g_shrunk - (n_new**-power - n**-power) / lr * w
        quadratic = n_new**-power / lr + 2 * l2
        w = (np.clip(z, -l1, l1) - z) / quadratic
        n = n_new
    return w


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"l1": 0.05, "l2": 0.1, "shrink": 0.02, "beta": 0.3, "power": -0.7, "n0": 0.5},
        {"l1": 100.0},  # every weight clipped to exactly 0
    ],
)
def test_ftrl_follows_keras_rule_step_by_step(options):
    rng = np.random.default_rng(11)
    w0 = rng.normal(size=(2, 5))
    grads = [rng.normal(size=(2, 5)) for _ in range(4)]
    names = {
        "power": "learning_rate_power",
        "n0": "initial_accumulator_value",
        "l1": "l1_regularization_strength",
        "l2": "l2_regularization_strength",
        "shrink": "l2_shrinkage_regularization_strength",
        "beta": "beta",
    }
    opt = ft.keras.optimizers.Ftrl(learning_rate=0.25, **{names[k]: v for k, v in options.items()})
    w = ft.Variable(w0, dtype=ft.float64)
    for g in grads:
        opt.apply_gradients([(ft.constant(g), w)])
    expected = _ftrl_reference(w0, grads, lr=0.25, **options)
    np.testing.assert_allclose(w.numpy(), expected, rtol=1e-10, atol=1e-12)
    if options.get("l1") == 100.0:
        assert not w.numpy().any()
    again = ft.keras.optimizers.get(ft.keras.optimizers.serialize(opt))
    assert again.get_config() == opt.get_config()


def test_ftrl_refuses_bad_arguments():
    for argument, value in (
        ("learning_rate_power", 0.5),
        ("initial_accumulator_value", -1.0),
        ("l1_regularization_strength", -0.1),
    ):
        with pytest.raises(ValueError, match=f"Ftrl: `{argument}` needs to be"):
            ft.keras.optimizers.Ftrl(**{argument: value})


def _adafactor_reference(w, grads, lr, relative_step=True, clip_threshold=1.0):
    """Keras 3's Adafactor in float64 numpy (beta_2_decay -0.8, epsilons 1e-30 and 1e-3)."""
    w = np.array(w, dtype=np.float64)
    rms = lambda x: np.sqrt(np.mean(np.square(x)))  # noqa: E731
    r, c, v = np.zeros(w.shape[:-1]), np.zeros(w.shape[:-2] + w.shape[-1:]), np.zeros_like(w)
    for t, g in enumerate(grads, start=1):
        step_lr = min(lr, t**-0.5) if relative_step else lr
        alpha = max(1e-3, rms(w)) * min(step_lr, t**-0.5)
        squared = g * g + 1e-30
        beta = 1.0 - t**-0.8
        if w.ndim >= 2:
            r = beta * r + (1 - beta) * squared.mean(axis=-1)
            c = beta * c + (1 - beta) * squared.mean(axis=-2)
            v = (r / r.mean(axis=-1, keepdims=True))[..., None] * c[..., None, :]
        else:
            v = beta * v + (1 - beta) * squared
        u = g / np.sqrt(v)
        w = w - alpha * u / max(1.0, rms(u) / clip_threshold)
    return w


@pytest.mark.parametrize("shape", [(3, 4), (5,), (2, 3, 4)])
@pytest.mark.parametrize(
    "options", [{"lr": 0.1}, {"lr": 0.01, "relative_step": False, "clip_threshold": 0.5}]
)
def test_adafactor_follows_keras_rule_step_by_step(shape, options):
    rng = np.random.default_rng(5)
    w0 = rng.normal(size=shape)
    grads = [rng.normal(size=shape) for _ in range(4)]
    arguments = {("learning_rate" if k == "lr" else k): val for k, val in options.items()}
    opt = ft.keras.optimizers.Adafactor(**arguments)
    w = ft.Variable(w0, dtype=ft.float64)
    for g in grads:
        opt.apply_gradients([(ft.constant(g), w)])
    # The learning rate is held in a float32 variable, as in Keras.
    lr = float(np.float32(options["lr"]))
    expected = _adafactor_reference(w0, grads, **{**options, "lr": lr})
    np.testing.assert_allclose(w.numpy(), expected, rtol=1e-9, atol=1e-12)
    # Keras's layout: two factors (scalars below rank 2) and a velocity per variable.
    assert len(opt.variables) == 2 + 3
