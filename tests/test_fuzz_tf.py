"""Tests of the differential fuzzer (tests/fuzz_tf.py): its comparison of hand-made outcomes, its
ferrotape worker, and, where TensorFlow is installed, a short run of drawn cases on both."""

import json

import fuzz
import fuzz_tf
import pytest

TAIL = ["Exception", "BaseException", "object"]


def tensor(dtype, shape, values, cls="tensor"):
    size = 1
    for n in shape:
        size *= n
    return {"t": "tensor", "cls": cls, "dtype": dtype, "shape": shape, "size": size,
            "values": values}  # fmt: skip


def py(value):
    return {"t": "py", "type": type(value).__name__, "value": value}


def ok(*values):
    return {"kind": "ok", "values": list(values)}


def error(*types, message="bad"):
    return {"kind": "error", "types": [*types, *TAIL], "message": message}


NAN = float("nan")
INF = float("inf")
TF_INVALID = error("InvalidArgumentError", "OpError")
FT_INVALID = error("InvalidArgumentError", "OpError", "ValueError")
SEQ = {"t": "seq", "type": "list", "items": [tensor("int32", [1], [1])]}
SEQ2 = {"t": "seq", "type": "list", "items": [tensor("int32", [1], [1])] * 2}

CATEGORIES = [
    # both ok: values within tolerance, NaN equal to NaN, integers exact
    (ok(tensor("float32", [2], [1.0, 2.0])), ok(tensor("float32", [2], [1.0, 2.00001])), "agree"),
    (ok(tensor("float32", [2], [1.0, 2.0])), ok(tensor("float32", [2], [1.0, 2.01])), "value"),
    (ok(tensor("float64", [1], [1.0])), ok(tensor("float64", [1], [1.0 + 1e-7])), "value"),
    (ok(tensor("bfloat16", [1], [1.0])), ok(tensor("bfloat16", [1], [1.0078125])), "agree"),
    (ok(tensor("float32", [2], [NAN, INF])), ok(tensor("float32", [2], [NAN, INF])), "agree"),
    (ok(tensor("float32", [1], [NAN])), ok(tensor("float32", [1], [0.0])), "value"),
    (ok(tensor("float32", [1], [INF])), ok(tensor("float32", [1], [-INF])), "value"),
    (ok(tensor("int64", [2], [1, 2])), ok(tensor("int64", [2], [1, 3])), "value"),
    (ok(tensor("bool", [1], [True])), ok(tensor("bool", [1], [False])), "value"),
    (ok(tensor("complex64", [1], [[1.0, 0.0]])), ok(tensor("complex64", [1], [[1.0, 0.1]])),
     "value"),
    (ok(tensor("complex64", [1], [[1.0, 2.0]])), ok(tensor("complex64", [1], [[1.0, 2.0]])),
     "agree"),
    (ok(py(1)), ok(py(1.0)), "dtype"),
    (ok(py(NAN)), ok(py(NAN)), "agree"),
    (ok(py(2)), ok(py(3)), "value"),
    (ok(tensor("float32", [1], [1.0])), ok(tensor("float64", [1], [1.0])), "dtype"),
    (ok(tensor("float32", [1, 0], [])), ok(tensor("float32", [0, 1], [])), "shape"),
    (ok(tensor("float32", [1], [1.0])), ok(None), "structure"),
    (ok(tensor("float32", [1], [1.0])), ok(tensor("float32", [1], [1.0], "ndarray")), "structure"),
    (ok(SEQ), ok(SEQ2), "structure"),
    (ok(SEQ2), ok(SEQ2), "agree"),
    (ok(None, SEQ), ok(None, SEQ), "agree"),
    (ok({"t": "dtype", "name": "int32"}), ok({"t": "dtype", "name": "int64"}), "value"),
    # one value, one error
    (ok(py(1)), TF_INVALID, "tf_refuses"),
    (FT_INVALID, ok(py(1)), "ferrotape_refuses"),
    (ok(py(1)), error("TypeError", message="f() got an unexpected keyword argument 'x'"),
     "signature"),
    # both errors: compatible classes agree; other classes of a family are a softer difference
    (FT_INVALID, TF_INVALID, "agree"),
    (FT_INVALID, error("ValueError"), "agree"),
    (error("ValueError"), TF_INVALID, "error_type"),
    (error("TypeError"), TF_INVALID, "error_type"),
    (error("TypeError"), error("AttributeError"), "error_kind"),
    (error("RuntimeError"), error("ValueError"), "error_kind"),
    (error("ResourceExhaustedError", "OpError", "MemoryError"),
     error("ResourceExhaustedError", "OpError"), "agree"),
    (FT_INVALID, error("ResourceExhaustedError", "OpError"), "error_kind"),
    # failures and what is not compared
    ({"kind": "panic", "types": ["PanicException", "BaseException", "object"], "message": "x"},
     TF_INVALID, "ferrotape_fails"),
    ({"kind": "crash", "message": "SIGSEGV"}, ok(py(1)), "ferrotape_fails"),
    ({"kind": "hang", "message": "no answer"}, {"kind": "missing", "message": "tf.f"},
     "ferrotape_fails"),
    (ok(py(1)), {"kind": "crash", "message": "SIGABRT"}, "tf_fails"),
    (ok(py(1)), {"kind": "missing", "message": "tf.ceil"}, "not_in_tf"),
]  # fmt: skip


@pytest.mark.parametrize("ft, tf, category", CATEGORIES)
def test_outcomes_are_put_in_their_category(ft, tf, category):
    assert fuzz_tf.compare("tf.f(x)", ft, tf).category == category


def test_random_ops_compare_dtypes_and_shapes_but_not_values():
    one, two = tensor("float32", [2], [0.1, 0.2]), tensor("float32", [2], [0.7, 0.3])
    for case in ["tf.random.uniform([2])", "tf.nn.dropout(x, 0.5)", "tf.random_index_shuffle(1)"]:
        assert fuzz_tf.compare(case, ok(one), ok(two)).category == "agree"
        wider = tensor("float32", [3], [0.1, 0.2, 0.3])
        assert fuzz_tf.compare(case, ok(one), ok(wider)).category == "shape"
    assert fuzz_tf.compare("tf.math.exp([2])", ok(one), ok(two)).category == "value"


def test_the_detail_names_the_first_difference():
    ft = ok(SEQ2)
    tf = ok({"t": "seq", "type": "list", "items": [tensor("int32", [1], [1]),
                                                   tensor("int32", [1], [7])]})  # fmt: skip
    compared = fuzz_tf.compare("tf.unstack(x)", ft, tf)
    assert compared.category == "value"
    assert compared.detail == "result[1]: int32[1] at flat 0: 1 vs 7"
    refused = fuzz_tf.compare("tf.f(x)", ok(py(1)), TF_INVALID)
    assert refused.detail == "TensorFlow raises InvalidArgumentError"


def test_documented_differences_match_by_category_case_and_outcome(monkeypatch):
    string = tensor("string", [], ["abc"])
    refused = error("TypeError", message="unsupported type (str)")
    assert "string dtype" in fuzz_tf.compare("tf.add('abc', 'abc')", refused, ok(string)).known
    numbers = fuzz_tf.compare("tf.add('abc', 1)", refused, ok(tensor("int32", [], [1])))
    assert numbers.category == "ferrotape_refuses" and numbers.known == ""
    leaked = fuzz_tf.compare("tf.f(x)", error("TypeError"), error("AttributeError"))
    assert "LEAKED" in leaked.known
    both = fuzz_tf.compare("tf.f(x)", error("IndexError", "LookupError"), error("AttributeError"))
    assert both.category == "error_kind" and both.known == ""  # ferrotape leaks one too
    runtime = fuzz_tf.compare("tf.f(x)", error("TypeError"), error("RuntimeError"))
    assert runtime.category == "error_kind" and runtime.known == ""
    vectors = ok(tensor("float32", [1], [2.0]), tensor("float32", [1], [0.6]))
    flipped = ok(tensor("float32", [1], [2.0]), tensor("float32", [1], [-0.6]))
    assert "up to sign" in fuzz_tf.compare("tf.linalg.eigh(x)", vectors, flipped).known
    values = ok(tensor("float32", [1], [3.0]), tensor("float32", [1], [0.6]))
    assert fuzz_tf.compare("tf.linalg.eigh(x)", vectors, values).known == ""  # the eigenvalues
    row = fuzz_tf.Known("value", r"^tf\.math\.exp\(", "exp approximates")
    monkeypatch.setattr(fuzz_tf, "KNOWN_DIFFERENCES", [row])
    one, two = ok(tensor("float32", [1], [1.0])), ok(tensor("float32", [1], [2.0]))
    assert fuzz_tf.compare("tf.math.exp(x)", one, two).known == "exp approximates"
    assert fuzz_tf.compare("tf.math.log(x)", one, two).known == ""
    assert fuzz_tf.compare("tf.math.exp(x)", one, TF_INVALID).known == ""  # another category
    assert fuzz_tf.compare("tf.math.exp(x)", one, one).known == ""  # no difference


def test_cases_are_named_by_what_they_exercise():
    gradient = (
        "x = 1\nwith tf.GradientTape(persistent=True) as tape:\n    tape.watch(x)\n"
        "    y = tf.nn.relu(x)\ntape.gradient(y, x)\ntape.jacobian(y, x)"
    )
    names = [fuzz_tf.case_function(c) for c in [
        "tf.math.cumsum(tf.ones([2]), axis=2**62)", gradient, "(tf.ones([2])) // (0)",
        "(tf.zeros([0]))[::0]", "(1) == (tf.constant(1.0))",
    ]]  # fmt: skip
    assert names == ["tf.math.cumsum", "gradient of tf.nn.relu", "operator //", "index",
                     "operator =="]  # fmt: skip


def test_the_summary_counts_categories_and_lists_one_reproducer_per_function():
    results = [
        fuzz_tf.compare("tf.f(1, 2, 3)", ok(py(1)), TF_INVALID),
        fuzz_tf.compare("tf.f(1)", ok(py(1)), TF_INVALID),
        fuzz_tf.compare("tf.g(1)", ok(py(1)), ok(py(1))),
        fuzz_tf.compare("tf.h(1)", error("TypeError"), error("AttributeError")),
        fuzz_tf.compare("tf.k(1)", ok(py(1)), {"kind": "missing", "message": "tf.k"}),
    ]
    report = fuzz_tf.summary(results)
    lines = report.splitlines()
    assert lines[0] == "cases: 5, both ok: 1 (1 agreeing), agreeing in all: 1"
    assert lines[1].startswith("differences: 2 (2 undocumented, 0 documented); softer")
    assert "per category: tf_refuses 2, error_kind 1, not_in_tf 1" in report
    assert "  [tf_refuses] tf.f x2: 'tf.f(1)'" in lines  # the shortest case reproduces
    assert "      TensorFlow: InvalidArgumentError: bad" in lines
    assert report.index("undocumented differences") < report.index("documented (1 cases")
    assert "  [not_in_tf] tf.k x1: 'tf.k(1)'" in lines
    figures = fuzz_tf.figures(results)
    assert (figures["differences"], figures["soft_documented"]) == (2, 1)


def test_results_survive_the_json_file():
    results = [
        fuzz_tf.compare("tf.g(1)", ok(py(1)), ok(py(1))),
        fuzz_tf.compare("tf.h(1)", error("TypeError"), error("AttributeError")),
    ]
    rows = json.loads(json.dumps(fuzz_tf.to_json(results)))
    assert "values" not in rows[0]["ferrotape"]  # agreeing values are not kept
    again = fuzz_tf.from_json(rows)
    assert [r.category for r in again] == ["agree", "error_kind"]
    assert again[1].known == results[1].known != ""


def test_results_become_plain_data():
    import numpy as np

    import ferrotape as tf

    plain = fuzz_tf.to_plain(
        [tf.constant([[1.5, float("nan")]]), (np.arange(3, dtype="uint8"), None), tf.int64,
         tf.TensorShape([2, None]), {"b": 2, "a": "x"}, tf.cast([1.0], tf.bfloat16)],
        tf,
    )  # fmt: skip
    assert plain["t"] == "seq"
    first, pair, dtype, shape, mapping, half = plain["items"]
    assert first["dtype"] == "float32" and first["shape"] == [1, 2]
    assert first["values"][0] == 1.5 and first["values"][1] != first["values"][1]
    assert pair["items"][0] == tensor("uint8", [3], [0, 1, 2], "ndarray")
    assert pair["items"][1] is None
    assert dtype == {"t": "dtype", "name": "int64"} and shape == {"t": "shape", "dims": [2, None]}
    assert list(mapping["items"]) == ["a", "b"] and mapping["items"]["a"]["value"] == "x"
    assert half["dtype"] == "bfloat16" and half["values"] == [1.0]
    json.dumps(plain)


def test_the_ferrotape_worker_answers_restarts_and_times_out():
    worker = fuzz_tf.Worker("ferrotape", timeout=5.0, batch=3)
    try:
        answers = [worker.run(c) for c in [
            "tf.constant([1, 2]) + 1", "print('noise')\ntf.constant(1.5)",
            "raise KeyboardInterrupt", "tf.nope(1)", "import os; os.abort()", "1 + 1",
            "import time; time.sleep(60)", "2 + 2",
        ]]  # fmt: skip
        pids = [worker.process.pid]
        for case in ["3", "4", "5"]:  # the third case after the restart starts a fresh worker
            answers.append(worker.run(case))
            pids.append(worker.process.pid)
    finally:
        worker.close()
    kinds = [a["kind"] for a in answers]
    assert kinds == ["ok", "ok", "panic", "missing", "crash", "ok", "hang"] + ["ok"] * 4
    assert answers[0]["values"] == [tensor("int32", [2], [2, 3])]
    assert answers[1]["values"][0] is None and answers[1]["values"][1]["values"] == [1.5]
    assert answers[2]["types"][:2] == ["KeyboardInterrupt", "BaseException"]
    assert answers[3]["message"] == "tf.nope"
    assert answers[4]["message"].startswith("SIGABRT")
    assert answers[5]["values"] == [py(2)] and answers[7]["values"] == [py(4)]
    assert [a["values"] for a in answers[8:]] == [[py(3)], [py(4)], [py(5)]]
    assert pids[0] == pids[1] == pids[2] != pids[3]


@pytest.mark.fuzz
def test_a_short_run_on_ferrotape_and_tensorflow(tmp_path, capsys):
    pytest.importorskip("tensorflow")
    fixed = [
        "tf.constant([1, 2]) + 1",
        "tf.reshape(tf.ones([2]), [3])",
        "tf.random.uniform([2, 3])",
        "tf.math.exp(tf.constant([0.5, -1.0], dtype=tf.float64))",
    ]
    results = fuzz_tf.compare_cases(fixed + fuzz.draw_cases(34, 40), timeout=30)
    assert len(results) == 44
    assert [r.category for r in results[:4]] == ["agree"] * 4
    assert [r.ferrotape["kind"] for r in results[:4]] == ["ok", "error", "ok", "ok"]
    harness = [r for r in results for side in (r.ferrotape, r.tensorflow)
               if side.get("types", [""])[0] == "HarnessError"]  # fmt: skip
    assert not harness
    path = tmp_path / "results.json"
    path.write_text(json.dumps(fuzz_tf.to_json(results)))
    assert fuzz_tf.main(["--report", str(path)]) == 0
    report = capsys.readouterr().out
    print(report)
    assert report.startswith("cases: 44, both ok: ")
    assert "per category: " in report
