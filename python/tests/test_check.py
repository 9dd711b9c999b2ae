"""pmach.check, pmach.recover and pmach.span_diff on correct and planted-fault
implementations, in PyTorch and NumPy."""
import json

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import pmach

CONV = pmach.layers.conv((5, 4), 2, 3, 3, padding=1)


def conv2d(w, x):
    """The intended conv: x (n, H, W, C) and w (kh, kw, cin, cout) in pmach's layout."""
    return F.conv2d(x.permute(0, 3, 1, 2), w.permute(3, 2, 0, 1), padding=1).permute(0, 2, 3, 1)


def conv2d_reversed_kernel(w, x):
    """Planted fault: the kernel read backwards (true convolution, as NNlib does)."""
    return F.conv2d(x.permute(0, 3, 1, 2), w.permute(3, 2, 0, 1).flip(2, 3),
                    padding=1).permute(0, 2, 3, 1)


def conv2d_shifted(w, x):
    """Planted fault: padding (2, 0) instead of (1, 1) on the last axis: a one-pixel shift."""
    xp = F.pad(x.permute(0, 3, 1, 2), (2, 0, 1, 1))
    return F.conv2d(xp, w.permute(3, 2, 0, 1)).permute(0, 2, 3, 1)


def rows(report):
    return {r["law"]: r for r in report.rows}


def test_correct_conv_passes():
    report = pmach.check(CONV, conv2d)
    assert report.passed and bool(report)
    r = rows(report)
    for law in ("PSPAN-BILINEAR", "PSPAN-ADJOINT", "PSPAN-GRADIENT", "CONF-RECOVER", "CONF-SPAN-DIFF"):
        assert r[law]["status"] == "passed" and r[law]["cases"] > 0
    assert r["CONF-SPAN-DIFF"]["exact"]


def test_large_linear_runs_its_laws_on_a_budget_and_says_so():
    """At full size each law runs fewer cases than asked for, scaled to the
    layer's size, and its row says so in every form of the report."""
    torch.manual_seed(0)
    report = pmach.check(pmach.layers.dense(512, 512, layout="torch"), torch.nn.Linear(512, 512, bias=False))
    assert report.passed
    r = rows(report)
    as_json = {row["law"]: row for row in json.loads(report.to_json())["results"]}
    for law in ("PSPAN-BILINEAR", "PSPAN-ADJOINT", "PSPAN-GRADIENT"):
        cases = r[law]["cases"]
        assert r[law]["status"] == "passed" and 2 <= cases < 100
        note = f"ran {cases} of 100 cases: scaled to the layer's size (512 → 512 with 262144 parameters)"
        assert r[law]["detail"].startswith(note)
        assert f"{law} on Linear (passed): {note}" in str(report)
        assert as_json[law]["cases"] == cases and as_json[law]["detail"] == r[law]["detail"]
    # The comparison with the specification still runs at full size.
    assert r["CONF-EQUAL forward"]["status"] == "passed"


def test_float32_linear_passes_its_laws_at_size():
    """A float32 module's laws are bounded by float32 over the model's fan-in and by float64
    over the laws' own sums: from Linear 256 on they were all too weak, so the check could not
    pass (docs/tolerances.md, "Validator")."""
    torch.manual_seed(0)
    report = pmach.check(pmach.layers.dense(512, 512, layout="torch"),
                         torch.nn.Linear(512, 512, bias=False), dtype="float32")
    r = rows(report)
    for law in ("PSPAN-BILINEAR", "PSPAN-ADJOINT", "PSPAN-GRADIENT"):
        assert r[law]["status"] == "passed", (law, r[law]["detail"])
    assert report.passed


def test_reversed_kernel_is_caught_with_its_span_difference():
    report = pmach.check(CONV, conv2d_reversed_kernel, cases=20)
    assert not report.passed
    diff = rows(report)["CONF-SPAN-DIFF"]
    assert diff["status"] == "failed"
    # The centre tap (1, 1) is the same either way; every other tap differs.
    assert "1320 of 1440 coefficients differ" in diff["detail"]
    assert "target (0, 0, 0) <- source (0, 1, 0) via parameter (1, 0, 0, 0): intended 0, implemented 1" \
        in diff["detail"]
    assert "CONF-SPAN-DIFF on conv2d_reversed_kernel (failed)" in str(report)


def test_shift_is_caught_with_its_pattern():
    report = pmach.check(CONV, conv2d_shifted, cases=20)
    detail = rows(report)["CONF-SPAN-DIFF"]["detail"]
    assert not report.passed and "source axis 1 is shifted by -1" in detail
    # The laws hold: the fault is one of intent, which only the span difference sees.
    assert all(rows(report)[law]["status"] == "passed" for law in ("PSPAN-BILINEAR", "PSPAN-ADJOINT"))


def test_recover_and_span_diff_give_the_difference_as_indices():
    implemented = pmach.recover(conv2d_shifted, CONV.source_shape, CONV.target_shape, CONV.parameter_shape)
    assert isinstance(implemented, pmach.Layer)
    d = pmach.span_diff(CONV, implemented)
    assert d and d.count == 1482 and "shifted by -1" in d.pattern
    first = d.differences[0]
    assert first == {"target": (0, 0, 0), "source": (0, 0, 0), "parameter": (1, 1, 0, 0),
                     "intended": 1.0, "implemented": 0.0}
    same = pmach.recover(conv2d, CONV.source_shape, CONV.target_shape, CONV.parameter_shape)
    assert not pmach.span_diff(CONV, same) and pmach.span_diff(CONV, same).compared == CONV.edges == 780


def test_recover_refuses_a_function_that_is_not_bilinear():
    try:
        pmach.recover(lambda w, x: x @ w + 1, (2,), (2,), (2, 2))
    except pmach.Error as e:
        assert "not bilinear" in str(e)
    else:
        raise AssertionError("an affine map was recovered as a span")


def test_numpy_layer_with_explicit_adjoints():
    layer = pmach.layers.dense(3, 2)
    good = dict(transpose=lambda w, g: g @ w.T, gradient=lambda x, g: x.T @ g)
    assert pmach.check(layer, lambda w, x: x @ w, **good).passed
    wrong = pmach.check(layer, lambda w, x: x @ w, transpose=lambda w, g: 2 * g @ w.T,
                        gradient=good["gradient"])
    assert not wrong.passed and rows(wrong)["PSPAN-ADJOINT"]["status"] == "failed"


def test_numpy_forward_only_marks_the_adjoint_laws_not_applicable():
    report = pmach.check(pmach.layers.dense(3, 2), lambda w, x: x @ w, framework="numpy")
    r = rows(report)
    assert report.passed and r["PSPAN-ADJOINT"]["status"] == "not applicable"
    assert r["CONF-SPAN-DIFF"]["status"] == "passed"


def test_report_json_and_table_agree():
    report = pmach.check(CONV, conv2d_shifted, cases=5)
    j = json.loads(report.to_json())
    assert j["passed"] is False and j["results"] == report.rows
    table = str(report).splitlines()
    assert table[0].split() == ["law", "subject", "status", "cases", "error", "/", "bound", "seed"]
    # CONF-EQUAL forward, transpose and gradient fail with CONF-SPAN-DIFF.
    assert table[-1] == "5 passed, 4 failed, 0 too weak, 0 not applicable"


# Machines: DenseMachine([2, 3, 2], relu) in PyTorch and NumPy.
DIMS = [2, 3, 2]
MACHINE = pmach.DenseMachine(DIMS, "relu")
BLOCK = np.repeat(np.arange(len(DIMS)), DIMS)
MASK = (BLOCK[:, None] < BLOCK[None, :]).astype(np.float64)


def machine_forward(w, y0, z0):
    """y = y0 + z W~, z = z0 + relu(y), solved by len(DIMS) sweeps."""
    z = z0
    for _ in DIMS:
        y = y0 + z @ (w * torch.tensor(MASK))
        z = z0 + torch.relu(y)
    return y, z


def machine_forward_without_cleaning(w, y0, z0):
    """Planted fault: W used as given, not cleaned."""
    z = z0
    for _ in DIMS:
        y = y0 + z @ w
        z = z0 + torch.relu(y)
    return y, z


def np_forward(w, y0, z0):
    z = z0
    for _ in DIMS:
        y = y0 + z @ (w * MASK)
        z = z0 + np.maximum(y, 0)
    return y, z


def np_backward(w, y0, z0, ybar, zbar, slope=True):
    """The dual sweep by hand: u_y = ybar + σ'(y) u_z, u_z = zbar + u_y W~ᵀ."""
    y, z = np_forward(w, y0, z0)
    s = (y > 0).astype(np.float64) if slope else np.ones_like(y)
    uz = zbar
    for _ in DIMS:
        uy = ybar + s * uz
        uz = zbar + uy @ (w * MASK).T
    return uy, uz, (z.T @ uy) * MASK


def np_backward_without_slope(w, y0, z0, ybar, zbar):
    """Planted fault: the backward forgets σ'(y)."""
    return np_backward(w, y0, z0, ybar, zbar, slope=False)


def test_correct_machines_pass():
    torch_report = pmach.check(MACHINE, machine_forward, cases=30)
    assert torch_report.passed
    assert rows(torch_report)["CONF-MACHINE backward"]["status"] == "passed"  # autograd's backward
    assert pmach.check(MACHINE, np_forward, backward=np_backward, cases=30).passed


def test_machine_that_skips_cleaning_is_caught_with_its_span_difference():
    report = pmach.check(MACHINE, machine_forward_without_cleaning, cases=30)
    detail = rows(report)["CONF-MACHINE forward"]["detail"]
    assert not report.passed and "theirs" in detail and "reference" in detail
    diff = rows(report)["CONF-SPAN-DIFF"]["detail"]
    assert "coefficients the intention lacks" in diff
    assert "target (0) <- source (1) via parameter (1, 0): intended 0, implemented 1" in diff


def test_backward_that_forgets_the_slope_is_caught_with_a_counterexample():
    report = pmach.check(MACHINE, np_forward, backward=np_backward_without_slope, cases=30)
    r = rows(report)
    assert not report.passed and r["CONF-MACHINE forward"]["status"] == "passed"
    assert r["CONF-MACHINE backward"]["status"] == "failed"
    assert "grad y0 at point" in r["CONF-MACHINE backward"]["detail"]


def test_machine_forward_returning_the_wrong_shape_is_named():
    with pytest.raises(pmach.Error, match=r"<lambda>\(w, y0, z0\)\[0\]: returned shape \(2, 3\), expected \(2, 7\)"):
        pmach.check(MACHINE, lambda w, y0, z0: (y0[:, :3], z0), framework="torch")
