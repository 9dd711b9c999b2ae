"""pmach.check_model on a ResNet-style model: every leaf module checked at the
shape it sees, one planted fault found in the module that has it, unknown
types reported as not checked (never passed), pmach.register for a user's
own type."""
import re

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import pmach


class FlippedConv2d(nn.Conv2d):
    """Planted fault: the kernel flipped (a convolution, not PyTorch's cross-correlation)."""

    def forward(self, x):
        return F.conv2d(x, self.weight.flip(2, 3), self.bias, self.stride, self.padding, self.dilation, self.groups)


class Block(nn.Module):
    def __init__(self, channels, conv=nn.Conv2d):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1)
        self.relu = nn.ReLU()
        self.conv2 = conv(channels, channels, 3, padding=1, bias=False)

    def forward(self, x):
        return x + self.conv2(self.relu(self.conv1(x)))


class ResNetLike(nn.Module):
    """12 leaf modules: stem, two residual blocks, a strided grouped conv, a
    transposed conv, pooling and a classifier."""

    def __init__(self, fault=False):
        super().__init__()
        self.stem = nn.Conv2d(3, 4, 3, padding="same")
        self.block1 = Block(4)
        self.block2 = Block(4, FlippedConv2d if fault else nn.Conv2d)
        self.down = nn.Conv2d(4, 8, 3, stride=2, padding=1, groups=2)
        self.up = nn.ConvTranspose2d(8, 4, 3, stride=2, padding=1, output_padding=1)
        self.pool = nn.AvgPool2d(2)
        self.flatten = nn.Flatten()
        self.fc = nn.Linear(4 * 3 * 3, 5)

    def forward(self, x):
        x = self.block2(self.block1(self.stem(x)))
        return self.fc(self.flatten(self.pool(self.up(self.down(x)))))


EXAMPLE = torch.zeros(2, 3, 6, 6)
IGNORE = (nn.ReLU, nn.Flatten)


def by_module(report):
    return {r["module"]: r for r in report.rows}


def test_a_correct_model_passes_with_one_row_per_leaf():
    report = pmach.check_model(ResNetLike(), EXAMPLE, cases=5, ignore=IGNORE)
    rows = by_module(report)
    assert len(rows) == 12 and report.passed, repr(report)
    checked = [m for m, r in rows.items() if r["status"] == "passed"]
    assert checked == ["stem", "block1.conv1", "block1.conv2", "block2.conv1", "block2.conv2", "down", "up",
                       "pool", "fc"]
    assert rows["up"]["input"] == (8, 3, 3) and rows["fc"]["input"] == (36,)
    assert [rows[m]["status"] for m in ("block1.relu", "flatten")] == ["ignored", "ignored"]


def test_the_planted_fault_is_found_in_its_module():
    report = pmach.check_model(ResNetLike(fault=True), EXAMPLE, cases=5, ignore=IGNORE)
    assert not report.passed
    assert [r["module"] for r in report.failed] == ["block2.conv2"]
    failed = report.failed[0]
    assert failed["type"] == "FlippedConv2d"
    assert any(r["law"] == "CONF-SPAN-DIFF" and r["status"] == "failed" for r in failed["report"].rows)
    table = str(report)
    assert re.search(r"\nblock2.conv2 +FlippedConv2d +\(4, 6, 6\) +failed +\d+ passed, [1-9]\d* failed", table)
    assert "CONF-SPAN-DIFF on FlippedConv2d (failed)" in table
    assert "block2.conv2 (FlippedConv2d): failed" in repr(report)


def test_unknown_types_are_not_checked_and_never_pass():
    report = pmach.check_model(nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2)), torch.zeros(1, 3),
                               cases=5)
    rows = by_module(report)
    assert rows["1"]["status"] == "not checked" and rows["1"]["detail"] == "no specification"
    assert re.search(r"\n1 +ReLU +\(4,\) +not checked +no specification\n", str(report))
    assert not report.passed and not report.failed and len(report.unchecked) == 1


def test_options_without_a_constructor_are_not_checked():
    model = nn.Sequential(nn.AvgPool2d(2, divisor_override=3), nn.Upsample(scale_factor=1.5),
                          nn.Upsample(scale_factor=2, mode="bicubic"))
    rows = by_module(pmach.check_model(model, torch.zeros(1, 2, 4, 4), cases=5))
    assert [rows[m]["status"] for m in "012"] == ["not checked"] * 3
    assert rows["0"]["detail"] == "no specification: divisor_override has no constructor"
    assert rows["1"]["detail"] == "no specification: scale_factor 1.5 is not an integer"
    assert rows["2"]["detail"] == "no specification: mode 'bicubic' has no constructor"


class ShiftedUpsample(nn.Upsample):
    """Planted fault: the output rolled by one pixel along the last axis."""

    def forward(self, x):
        return torch.roll(super().forward(x), 1, -1)


class ReflectAsReplicate(nn.Conv2d):
    """Planted fault: reflect padding done as replicate."""

    def _conv_forward(self, x, weight, bias):
        p = [v for k in reversed(self.padding) for v in (k, k)]
        return F.conv2d(F.pad(x, p, mode="replicate"), weight, bias, self.stride, 0, self.dilation, self.groups)


def test_faults_in_padding_modes_and_interpolation_are_found_in_their_module():
    model = nn.Sequential(nn.Conv2d(2, 2, 3, padding=1, padding_mode="reflect"),
                          ReflectAsReplicate(2, 2, 3, padding=1, padding_mode="reflect"),
                          nn.Upsample(scale_factor=2, mode="bilinear", align_corners=True),
                          ShiftedUpsample(scale_factor=2, mode="bilinear", align_corners=True))
    report = pmach.check_model(model, torch.zeros(1, 2, 4, 4), cases=5)
    assert [(r["module"], r["status"]) for r in report.rows] == [
        ("0", "passed"), ("1", "failed"), ("2", "passed"), ("3", "failed")], repr(report)


def test_a_module_the_input_does_not_reach_is_not_called():
    class Unused(nn.Module):
        def __init__(self):
            super().__init__()
            self.used = nn.Linear(3, 2)
            self.spare = nn.Linear(3, 2)

        def forward(self, x):
            return self.used(x)
    report = pmach.check_model(Unused(), torch.zeros(1, 3), cases=5)
    assert by_module(report)["spare"]["status"] == "not called" and not report.passed


class Scale(nn.Module):
    """A user's own layer: y = w x per channel (a diagonal dense layer)."""

    def __init__(self, n):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(n))

    def forward(self, x):
        return x * self.weight


def test_register_adds_a_users_type(tmp_path):
    model = nn.Sequential(Scale(3))
    assert by_module(pmach.check_model(model, torch.zeros(1, 3), cases=5))["0"]["status"] == "not checked"
    path = tmp_path / "scale.json"
    path.write_text('{"pmach": 1, "kind": "layer", "name": "diagonal", "source": {"shape": [3]}, '
                    '"target": {"shape": [3]}, "parameters": {"shape": [3]}, '
                    '"edges": {"list": [[0, 0, 0], [1, 1, 1], [2, 2, 2]]}}')
    pmach.register(Scale, lambda module, shape: pmach.load(str(path)))
    try:
        report = pmach.check_model(model, torch.zeros(1, 3), cases=5)
        assert report.passed, repr(report)
    finally:
        pmach._model._SPECS.pop(Scale)
    with pytest.raises(TypeError, match="register: expected a module type"):
        pmach.register("Scale", lambda m, s: None)


def test_progress_names_each_module_on_one_line_of_stderr(capsys):
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU())
    pmach.check_model(model, torch.zeros(1, 3), cases=5, progress=True)
    err = capsys.readouterr().err
    assert "\rpmach.check_model: 1/2 0 (Linear)" in err and "\rpmach.check_model: 2/2 1 (ReLU)" in err
    assert "\n" not in err and err.endswith("\r")
    pmach.check_model(model, torch.zeros(1, 3), cases=5, progress=False)
    assert capsys.readouterr().err == ""


KNOWN = [
    (nn.Conv1d(2, 4, 3, stride=2, padding=1, dilation=2), (1, 2, 9)),
    (nn.Conv3d(2, 2, (1, 2, 2), padding=(0, 1, 0)), (1, 2, 2, 3, 3)),
    (nn.ConvTranspose1d(4, 2, 3, stride=2, padding=1, output_padding=1, groups=2), (1, 4, 4)),
    (nn.ConvTranspose2d(2, 4, (2, 3), stride=(2, 1), dilation=(1, 2)), (1, 2, 3, 3)),
    (nn.Conv2d(2, 2, 3, padding="same", dilation=2), (1, 2, 5, 5)),
    (nn.Conv2d(4, 4, 3, padding=1, groups=4, bias=False), (1, 4, 4, 4)),
    (nn.AvgPool1d(3, stride=2, padding=1), (1, 2, 7)),
    (nn.AvgPool3d(2), (1, 1, 4, 4, 2)),
    (nn.Conv2d(2, 3, 3, padding=1, padding_mode="circular"), (1, 2, 4, 5)),
    (nn.Conv1d(2, 2, 3, padding=2, padding_mode="replicate"), (1, 2, 5)),
    (nn.AvgPool2d(3, stride=2, padding=1, ceil_mode=True, count_include_pad=False), (1, 2, 6, 5)),
    (nn.Upsample(size=8, mode="linear"), (1, 2, 4)),
    (nn.Upsample(scale_factor=(2, 3), mode="nearest"), (1, 2, 3, 2)),
    (nn.Upsample(scale_factor=2, mode="trilinear", align_corners=True), (1, 1, 2, 3, 2)),
    (nn.PixelShuffle(2), (1, 8, 2, 3)),
    (nn.PixelUnshuffle(2), (1, 2, 4, 6)),
    (nn.Unfold((2, 3), dilation=(1, 2), padding=1, stride=2), (1, 2, 5, 6)),
    (nn.Fold((5, 6), (2, 3), dilation=(1, 2), padding=1, stride=2), (1, 12, 6)),
]


@pytest.mark.parametrize("module, shape", KNOWN, ids=[repr(m) for m, _ in KNOWN])
def test_each_known_type_passes_at_its_hyperparameters(module, shape):
    report = pmach.check_model(nn.Sequential(module), torch.zeros(shape), cases=5)
    assert report.passed, repr(report)


def test_a_module_with_children_and_parameters_of_its_own_is_not_checked():
    class Gated(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 3)
            self.gate = nn.Parameter(torch.ones(3))

        def forward(self, x):
            return self.fc(x) * self.gate
    rows = by_module(pmach.check_model(Gated(), torch.zeros(1, 3), cases=5))
    assert rows["Gated"]["status"] == "not checked"
    assert rows["Gated"]["detail"] == "parameters of its own beside its child modules"
    assert rows["fc"]["status"] == "passed"


def test_a_check_that_compared_nothing_is_not_a_pass(monkeypatch):
    """A report that passed without a comparison row that passed (recovery
    refused at the module's size, say) gives the row "not compared"."""
    class Vacuous:
        passed = True
        rows = [{"law": "PSPAN-BILINEAR", "subject": "Linear", "status": "passed", "detail": ""},
                {"law": "CONF-SPAN-DIFF", "subject": "Linear", "status": "not applicable",
                 "detail": "no recovered span (CONF-RECOVER refused)"}]
    monkeypatch.setattr(pmach._model, "check", lambda *args, **kwargs: Vacuous())
    report = pmach.check_model(nn.Linear(3, 2), torch.zeros(1, 3))
    row = report.rows[0]
    assert row["status"] == "not compared" and not report.passed and report.unchecked == [row]
    assert row["detail"] == "Linear was not compared with its specification: no recovered span (CONF-RECOVER refused)"
