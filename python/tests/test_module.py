"""pmach.check on torch.nn.Modules: the module's weight is the span's
parameters, its bias an affine term checked exactly beside the linear part;
parameterless modules are f(x); the specification in PyTorch's layout (a
model file with "layout": "torch") or in pmach's channels-last one."""
import json

import numpy as np
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import pmach


def named_layer(tmp_path, **fields):
    """A model file of a named layer (docs/formats.md §2.5), loaded."""
    path = tmp_path / "spec.json"
    path.write_text(json.dumps({"pmach": 1, "kind": "layer", "name": "spec", **fields}))
    return pmach.load(str(path))


def conv_spec(tmp_path, bias):
    return named_layer(tmp_path, layer="conv", **{"in": 3, "out": 4}, size=[5, 6], kernel=[3, 3], padding=[1, 1],
                       layout="torch", bias=bias)


def statuses(report):
    return {(r["law"], r["subject"]): r["status"] for r in report.rows}


class FlippedConv2d(nn.Conv2d):
    """Planted fault: a convolution (kernel flipped) instead of PyTorch's cross-correlation."""

    def forward(self, x):
        return F.conv2d(x, self.weight.flip(2, 3), self.bias, self.stride, self.padding)


class DoubleBiasLinear(nn.Linear):
    """Planted fault: the bias added twice."""

    def forward(self, x):
        return super().forward(x) + self.bias


def test_conv2d_with_its_bias_passes_against_a_spec_with_a_bias(tmp_path):
    spec = conv_spec(tmp_path, True)
    assert spec.parameter_shape == (4 * 3 * 3 * 3 + 4,)
    report = pmach.check(spec, nn.Conv2d(3, 4, 3, padding=1), cases=10)
    assert report.passed, repr(report)
    s = statuses(report)
    # The linear part by the laws and the span comparison, the bias as its own layer.
    assert s[("CONF-SPAN-DIFF", "Conv2d")] == "passed" and s[("PSPAN-ADJOINT", "Conv2d")] == "passed"
    assert s[("CONF-SPAN-DIFF", "Conv2d bias")] == "passed"


def test_conv2d_with_its_bias_passes_against_the_linear_spec(tmp_path):
    """Without a bias in the specification, PyTorch's bias is one per output channel."""
    report = pmach.check(conv_spec(tmp_path, False), nn.Conv2d(3, 4, 3, padding=1), cases=10)
    assert report.passed and len({r["subject"] for r in report.rows}) == 2


def test_flipped_kernel_fails_in_the_linear_part_only(tmp_path):
    report = pmach.check(conv_spec(tmp_path, False), FlippedConv2d(3, 4, 3, padding=1), cases=10)
    s = statuses(report)
    assert not report.passed
    assert s[("CONF-SPAN-DIFF", "FlippedConv2d")] == "failed"
    assert s[("CONF-SPAN-DIFF", "FlippedConv2d bias")] == "passed"


def test_a_bias_added_twice_fails_in_the_bias_part(tmp_path):
    spec = named_layer(tmp_path, layer="dense", **{"in": 3, "out": 2}, layout="torch")
    assert pmach.check(spec, nn.Linear(3, 2)).passed
    report = pmach.check(spec, DoubleBiasLinear(3, 2))
    s = statuses(report)
    assert s[("CONF-SPAN-DIFF", "DoubleBiasLinear")] == "passed"
    assert s[("CONF-SPAN-DIFF", "DoubleBiasLinear bias")] == "failed"
    bias_row = [r for r in report.rows if r["subject"] == "DoubleBiasLinear bias" and r["law"] == "CONF-SPAN-DIFF"]
    assert "intended 1, implemented 2" in bias_row[0]["detail"]


def test_channels_last_spec_permutes_the_module():
    spec = pmach.layers.conv((5, 4), 2, 3, 3, padding=1, stride=2)
    assert pmach.check(spec, nn.Conv2d(2, 3, 3, padding=1, stride=2, bias=False), layout="channels_last").passed
    assert not pmach.check(spec, FlippedConv2d(2, 3, 3, padding=1, stride=2), layout="channels_last").passed


class SumPool(nn.Module):
    """Planted fault: the window summed, not averaged."""

    def forward(self, x):
        return 4 * F.avg_pool2d(x, 2)


def test_parameterless_module_and_function_are_f_of_x():
    spec = pmach.layers.avg_pool((4, 6), 2, 2)  # channels last, no parameters
    assert spec.parameter_shape == ()
    assert pmach.check(spec, nn.AvgPool2d(2), layout="channels_last").passed
    wrong = pmach.check(spec, SumPool(), layout="channels_last")
    assert statuses(wrong)[("CONF-SPAN-DIFF", "SumPool")] == "failed"

    def pool(x):  # f(x) on arrays channels last: (n, 4, 6, 2) -> (n, 2, 3, 2)
        return F.avg_pool2d(x.permute(0, 3, 1, 2), 2).permute(0, 2, 3, 1)
    assert pmach.check(spec, pool).passed


def test_module_parameters_that_do_not_fit_are_refused(tmp_path):
    with pytest.raises(pmach.Error, match=r"Conv2d.weight is \(3, 3, 3, 4\) in the layout channels_last, the "
                                          r"specification's parameters \(4, 3, 3, 3\)"):
        pmach.check(conv_spec(tmp_path, False), nn.Conv2d(3, 4, 3, padding=1, bias=False), layout="channels_last")
    with pytest.raises(pmach.Error, match="Conv2d has weight"):
        pmach.check(conv_spec(tmp_path, True), nn.Conv2d(3, 5, 3))
    with pytest.raises(pmach.Error, match="expected weight and an optional bias"):
        pmach.check(conv_spec(tmp_path, False), nn.LSTM(3, 4))
    with pytest.raises(pmach.Error, match="layout: is 'nchw'"):
        pmach.check(conv_spec(tmp_path, False), nn.Conv2d(3, 4, 3, padding=1), layout="nchw")


def test_dtype_is_checked():
    with pytest.raises(pmach.Error, match="dtype: is 'float16', expected float64 or float32"):
        pmach.check(pmach.layers.dense(3, 2), nn.Linear(3, 2, bias=False), layout="channels_last", dtype="float16")


def test_float32_runs_the_module_in_float32_and_passes_the_dtype_on(tmp_path, monkeypatch):
    """The adapter's half of dtype=: the module sees float32 tensors, the C++
    side gets float64 arrays and the dtype (pmach._pmach._check_layer's last
    argument), so that it can bound the comparison by float32's precision."""
    spec = named_layer(tmp_path, layer="dense", **{"in": 3, "out": 2}, layout="torch")
    seen, passed_on = [], []

    class Recorder(nn.Linear):
        def forward(self, x):
            seen.append((x.dtype, self.weight.dtype))
            return super().forward(x)

    class Stop(Exception):
        pass

    def check_layer(model, forward, transpose, gradient, cases, seed, *dtype):
        w, x = np.arange(6.0).reshape(2, 3), np.ones((1, 3))
        outputs = [forward(w, x), transpose(w, np.ones((1, 2))), gradient(x, np.ones((1, 2)))]
        passed_on.append((dtype, [(o.dtype, o.shape) for o in outputs], outputs[0].tolist()))
        raise Stop
    monkeypatch.setattr(pmach._pmach, "_check_layer", check_layer)
    with pytest.raises(Stop):
        pmach.check(spec, Recorder(3, 2, bias=False), dtype="float32")
    assert set(seen) == {(torch.float32, torch.float32)}
    assert passed_on == [(("float32",), [(np.float64, (1, 2)), (np.float64, (1, 3)), (np.float64, (2, 3))],
                          [[3.0, 12.0]])]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_correct_linear_upsample_at_sevenths_passes_the_full_size_comparison(dtype):
    # PyTorch computes the weights 3/7, 1/14, ... from coordinates with
    # several roundings; the comparison's bound (docs/tolerances.md, "Beyond
    # the claim") must not fail the correct module, and must fail the wrong
    # corner alignment.
    spec = pmach.layers.interpolate(4, 1, 7, mode="linear", align_corners=False, layout="torch")
    good = pmach.check(spec, nn.Upsample(size=7, mode="linear", align_corners=False), dtype=dtype)
    assert statuses(good)[("CONF-EQUAL forward", "Upsample")] == "passed"
    bad = pmach.check(spec, nn.Upsample(size=7, mode="linear", align_corners=True), dtype=dtype)
    assert statuses(bad)[("CONF-EQUAL forward", "Upsample")] == "failed"


class NegatedLinear(nn.Linear):
    """Planted fault: the output negated, a bilinear map all the same."""

    def forward(self, x):
        return -F.linear(x, self.weight)


def test_a_negated_layer_keeps_its_laws_and_fails_the_comparison():
    # Its internal weight -1 made the laws' bound negative (Sigma of the terms run
    # on absolute inputs is then negative), so the laws of a bilinear map
    # failed; the bound is now taken in absolute value.
    report = pmach.check(pmach.layers.dense(3, 2, layout="torch"), NegatedLinear(3, 2, bias=False))
    rows = {r["law"]: r for r in report.rows}
    for law in ("PSPAN-BILINEAR", "PSPAN-ADJOINT", "PSPAN-GRADIENT"):
        assert rows[law]["status"] == "passed", rows[law]
        assert rows[law]["bound"] >= 0
    assert rows["CONF-EQUAL forward"]["status"] == "failed"


def test_a_correct_float32_module_passes_its_laws_within_float32_bounds():
    # With dtype="float32" the module computes in float32; its laws were
    # judged against float64's γ_n and a correct nn.Linear(64, 64) failed
    # PSPAN-BILINEAR at about 1e-9 against a bound of 6e-20.
    torch.manual_seed(0)
    module = nn.Linear(64, 64, bias=False)
    report = pmach.check(pmach.layers.dense(64, 64, layout="torch"), module, dtype="float32")
    rows = {r["law"]: r for r in report.rows}
    for law in ("PSPAN-BILINEAR", "PSPAN-ADJOINT", "PSPAN-GRADIENT", "CONF-EQUAL forward"):
        assert rows[law]["status"] == "passed", rows[law]
    assert report.passed
    # The bound is float32's: far above float64's rounding of these sides.
    assert rows["PSPAN-BILINEAR"]["bound"] > 1e-12


def test_a_stride_on_the_wrong_axis_is_named_in_pytorchs_layout():
    # conv 3x3 4->4, stride (2, 1), padding 1 on 6x6; the implementation steps
    # the rows by 1 and the columns by 2, keeping the 3x6 output (reads past
    # the image are zeros). The intended strides were read from the followed
    # outputs' rows, which a border or two output channels made tie.
    spec = pmach.layers.conv((6, 6), 4, 4, 3, padding=1, stride=[2, 1], layout="torch")

    def swapped(w, x):
        y = F.conv2d(F.pad(x, (1, 1 + 2 * 6, 1, 1 + 1 * 3)), w)
        return y[:, :, 0:3, 0:12:2]

    report = pmach.check(spec, swapped)
    forward = next(r for r in report.rows if r["law"] == "CONF-EQUAL forward")
    assert forward["status"] == "failed"
    assert ("a stride on the wrong axis: source axis 1 steps by 1 per step of target axis 1, "
            "not 2, and source axis 2 steps by 2 per step of target axis 2, not 1") in forward["detail"]
