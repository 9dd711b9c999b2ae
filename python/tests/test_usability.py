"""pmach in pytest: a report's repr shows its summary and failing rows,
pmach.assert_check raises AssertionError with them, and misuse (a wrong
signature, a NumPy function without adjoints, a module off the CPU, an
object that is not a module) raises at once instead of failing rows."""
import numpy as np
import pytest
import torch
import torch.nn as nn

import pmach

DENSE = pmach.layers.dense(3, 2)


def shifted(w, x):
    """Planted fault: the input read one position too far."""
    return torch.roll(x, 1, dims=1) @ w


def test_repr_of_a_failing_report_shows_its_summary_and_failing_rows():
    report = pmach.check(DENSE, shifted, cases=5)
    text = repr(report)
    assert text.startswith("<pmach.Report FAILED: ") and " 4 failed" in text
    assert "CONF-EQUAL forward on shifted (failed): " in text
    assert "CONF-SPAN-DIFF on shifted (failed): " in text
    assert "PSPAN-ADJOINT" not in text  # a passing row is not listed
    assert "object at 0x" not in text


def test_repr_of_a_passing_report_is_one_line():
    report = pmach.check(DENSE, lambda w, x: x @ w, cases=5)
    n = len(report.rows)
    assert n >= 5 and repr(report).startswith(f"<pmach.Report passed: {n} passed, 0 failed, 0 too weak, "
                                              "0 not applicable in ")
    assert "\n" not in repr(report) and report.duration > 0


def test_assert_check_raises_with_the_failing_rows_and_returns_a_passing_report():
    with pytest.raises(AssertionError, match=r"(?s)pmach.check of shifted failed.*CONF-SPAN-DIFF on shifted"):
        pmach.assert_check(DENSE, shifted, cases=5)
    assert pmach.assert_check(DENSE, lambda w, x: x @ w, cases=5).passed


def test_a_wrong_signature_is_a_type_error():
    with pytest.raises(TypeError, match=r"forward \S*<lambda>\(x\) cannot be called as forward\(w, x\)"):
        pmach.check(DENSE, lambda x: x)
    with pytest.raises(TypeError, match=r"cannot be called as forward\(w, y0, z0\)"):
        pmach.check(pmach.DenseMachine([1, 1], "relu"), lambda w, y0: (y0, y0))
    with pytest.raises(TypeError, match="forward is int, expected a callable"):
        pmach.check(DENSE, 3)


def test_a_numpy_function_without_adjoints_is_a_type_error():
    with pytest.raises(TypeError, match="a NumPy implementation passes its adjoints as transpose= and gradient="):
        pmach.check(DENSE, lambda w, x: np.einsum("io,ni->no", w, x))
    with pytest.raises(TypeError, match="returned numpy.ndarray, expected a torch.Tensor"):
        pmach.check(DENSE, lambda w, x: np.asarray(x.detach()) @ np.asarray(w.detach()))
    with pytest.raises(TypeError, match="autograd cannot trace back"):
        pmach.check(DENSE, lambda w, x: torch.tensor(x.detach().numpy() @ w.detach().numpy()))
    # The same function with its adjoints, or on its forward pass alone, is checked.
    assert pmach.check(DENSE, lambda w, x: np.einsum("io,ni->no", w, x), framework="numpy").passed


def test_an_exception_of_the_implementation_carries_a_note():
    def broken(w, x):
        raise KeyError("mine")
    with pytest.raises(KeyError) as e:
        pmach.check(DENSE, broken)
    assert "broken(w, x) on one zero sample, x of shape (1, 3) and w of shape (3, 2)" in "".join(e.value.__notes__)


def test_a_module_off_the_cpu_is_refused():
    # The meta device stands in for CUDA: any device but the CPU is refused.
    with pytest.raises(pmach.Error, match="Linear.weight is on meta, expected the CPU"):
        pmach.check(DENSE, nn.Linear(3, 2, bias=False, device="meta"), layout="channels_last")
    with pytest.raises(pmach.Error, match="returned a tensor on meta, expected the CPU"):
        pmach.check(DENSE, lambda w, x: (x @ w).to("meta"))
    with pytest.raises(pmach.Error, match="check_model: example_input is on meta, expected the CPU"):
        pmach.check_model(nn.Linear(3, 2), torch.zeros(1, 3, device="meta"))


def test_check_model_refuses_what_is_not_a_module():
    with pytest.raises(TypeError, match="check_model: model is function, expected a torch.nn.Module"):
        pmach.check_model(lambda x: x, torch.zeros(1, 3))
    with pytest.raises(TypeError, match="example_input is list, expected a torch.Tensor"):
        pmach.check_model(nn.Linear(3, 2), [[0.0, 0.0, 0.0]])
    with pytest.raises(pmach.Error, match="layout= is for a torch.nn.Module"):
        pmach.check(DENSE, lambda w, x: x @ w, layout="channels_last")
    with pytest.raises(TypeError, match="a machine's implementation is forward"):
        pmach.check(pmach.DenseMachine([1, 1], "relu"), nn.Linear(2, 2))
