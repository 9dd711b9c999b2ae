"""Bad input is a pmach.Error (a ValueError) with one line naming what is wrong."""
import os
import subprocess

import numpy as np
import pytest

import pmach
from conftest import DATA


def one_line(excinfo):
    text = str(excinfo.value)
    assert "\n" not in text
    return text


def test_error_is_a_value_error():
    assert issubclass(pmach.Error, ValueError)


def test_bad_files_give_the_commands_message(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"pmach": 1, "kind": "layer", "source": {"shape": [2]}, "target": {"shape": [2]},'
                   ' "edges": {"list": [[0, 5]]}}')
    with pytest.raises(pmach.Error) as e:
        pmach.load(str(bad))
    message = one_line(e)
    assert str(bad) in message and "/edges/list/0" in message
    cli = os.environ.get("PMACH_CLI")
    if cli is None:
        pytest.skip("PMACH_CLI (the pmach command) not given; run through ctest")
    r = subprocess.run([cli, "check", str(bad)], capture_output=True, text=True)
    assert r.returncode == 2 and r.stderr == f"pmach check: error: {message}\n"


def test_missing_file():
    with pytest.raises(pmach.Error, match="cannot open the file"):
        pmach.load("/nonexistent/model.json")


def test_shapes_are_checked():
    layer = pmach.layers.dense(3, 2)
    with pytest.raises(pmach.Error) as e:
        layer.forward(np.ones((4, 5)), np.ones((3, 2)))
    assert one_line(e) == "x: shape (4, 5), expected (batch, 3) or without the batch axis (3,)"
    with pytest.raises(pmach.Error, match=r"w: shape \(2, 3\), expected \(3, 2\)"):
        layer.forward(np.ones((4, 3)), np.ones((2, 3)))
    with pytest.raises(pmach.Error, match="/weights: expected the field, or the argument w"):
        layer.forward(np.ones((4, 3)))
    with pytest.raises(pmach.Error, match="g: has 2 samples, expected 4"):
        layer.backward(np.ones((4, 3)), np.ones((2, 2)), np.ones((3, 2)))
    m = pmach.DenseMachine([2, 2], "relu", weights=np.zeros((4, 4)))
    with pytest.raises(pmach.Error, match="z0: has 1 samples, expected 2"):
        m.forward(np.ones((2, 4)), np.ones((1, 4)))
    with pytest.raises(pmach.Error, match=r"y0: shape \(1, 2\), expected \(batch, 4\)"):
        m.forward([[1.0, 2.0]])  # lists are arrays too


def test_constructor_arguments_are_checked():
    with pytest.raises(pmach.Error, match=r"dims\[1\] is 0, expected >= 1"):
        pmach.DenseMachine([2, 0])
    with pytest.raises(pmach.Error, match="sigma"):
        pmach.DenseMachine([2], "cosh")
    with pytest.raises(pmach.Error, match="groups is 3, expected a positive divisor"):
        pmach.layers.conv(5, 4, 4, 3, groups=3)
    with pytest.raises(pmach.Error, match="stride: has 3 entries, expected 2"):
        pmach.layers.conv((5, 5), 1, 1, 3, stride=(1, 1, 1))
    with pytest.raises(pmach.Error, match="exact needs a sigma with rational values"):
        pmach.DenseMachine([1, 1], "tanh", weights=np.zeros((2, 2))).forward(np.ones(2), precision="exact")


def test_check_arguments_are_checked():
    layer = pmach.layers.dense(2, 2)
    with pytest.raises(pmach.Error, match="cases is 0"):
        pmach.check(layer, lambda w, x: x @ w, cases=0)
    with pytest.raises(pmach.Error, match="backward= is for machines"):
        pmach.check(layer, lambda w, x: x @ w, backward=lambda *a: a)
    with pytest.raises(pmach.Error, match="expected a pmach.Layer or pmach.Machine"):
        pmach.check("dense", lambda w, x: x @ w)
    with pytest.raises(pmach.Error, match="both transpose= and gradient=, or neither"):
        pmach.check(layer, lambda w, x: x @ w, transpose=lambda w, g: g @ w.T)
