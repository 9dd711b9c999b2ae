"""Each constructor of pmach.layers against its PyTorch counterpart: the
layer's forward (the specification, evaluated exactly) equals the torch
functional on a small random input, in PyTorch's layout (layout="torch",
so no permute is written here) and, where it has one, with its bias."""
import json

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import pmach

RNG = np.random.default_rng(7)


def ints(shape):
    """Small integers: every sum below is exact in float64 on both sides."""
    return RNG.integers(-4, 5, size=shape).astype(np.float64)


def spec_forward(layer, x, w=None):
    return layer.forward(x, w, precision="exact") if w is not None else layer.forward(x, precision="exact")


@pytest.mark.parametrize("mode", ["zeros", "circular", "reflect", "replicate"])
@pytest.mark.parametrize("bias", [False, True])
def test_conv2d_padding_modes_and_bias(mode, bias):
    m = torch.nn.Conv2d(4, 6, (3, 2), stride=(2, 1), padding=(1, 1), dilation=(1, 2), groups=2,
                        padding_mode=mode, bias=bias).double()
    with torch.no_grad():
        m.weight.copy_(torch.tensor(ints(m.weight.shape)))
        if bias:
            m.bias.copy_(torch.tensor(ints(m.bias.shape)))
    layer = pmach.layers.conv((5, 6), 4, 6, (3, 2), stride=(2, 1), padding=1, dilation=(1, 2),
                              groups=2, padding_mode=mode, bias=bias, layout="torch")
    x = ints((3, 4, 5, 6))
    w = m.weight.detach().numpy()
    if bias:
        w = np.concatenate([w.ravel(), m.bias.detach().numpy()])
    expected = m(torch.tensor(x)).detach().numpy()
    assert layer.target_shape == expected.shape[1:]
    assert np.array_equal(spec_forward(layer, x, w), expected)


@pytest.mark.parametrize("mode", ["circular", "reflect", "replicate"])
def test_conv1d_and_conv3d_padding_modes(mode):
    for rank in (1, 3):
        Conv = torch.nn.Conv1d if rank == 1 else torch.nn.Conv3d
        size = (6,) if rank == 1 else (3, 4, 3)
        m = Conv(2, 3, 2, padding=1, padding_mode=mode, bias=False).double()
        layer = pmach.layers.conv(size, 2, 3, 2, padding=1, padding_mode=mode, layout="torch")
        x, w = ints((2, 2) + size), ints(tuple(m.weight.shape))
        with torch.no_grad():
            m.weight.copy_(torch.tensor(w))
        assert np.array_equal(spec_forward(layer, x, w), m(torch.tensor(x)).detach().numpy())


def test_conv_transpose_takes_pytorchs_arguments():
    layer = pmach.layers.conv_transpose((4, 3), 2, 4, 3, stride=2, padding=1, output_padding=(1, 0),
                                        bias=True, layout="torch")
    assert "2 -> 4" in repr(layer)
    w, b, x = ints((2, 4, 3, 3)), ints((4,)), ints((2, 2, 4, 3))
    expected = F.conv_transpose2d(torch.tensor(x), torch.tensor(w), torch.tensor(b), stride=2,
                                  padding=1, output_padding=(1, 0)).numpy()
    assert layer.target_shape == expected.shape[1:]
    assert np.array_equal(spec_forward(layer, x, np.concatenate([w.ravel(), b])), expected)


def test_linear_in_torch_layout_with_bias():
    layer = pmach.layers.dense(5, 3, bias=True, layout="torch")
    w, b, x = ints((3, 5)), ints((3,)), ints((4, 5))
    expected = F.linear(torch.tensor(x), torch.tensor(w), torch.tensor(b)).numpy()
    assert np.array_equal(spec_forward(layer, x, np.concatenate([w.ravel(), b])), expected)


@pytest.mark.parametrize("count_include_pad", [True, False])
@pytest.mark.parametrize("ceil_mode", [False, True])
def test_avg_pool_options(count_include_pad, ceil_mode):
    layer = pmach.layers.avg_pool((7, 6), 3, (3, 2), stride=2, padding=(1, 1),
                                  count_include_pad=count_include_pad, ceil_mode=ceil_mode,
                                  layout="torch")
    x = RNG.normal(size=(2, 3, 7, 6))
    expected = F.avg_pool2d(torch.tensor(x), (3, 2), stride=2, padding=(1, 1), ceil_mode=ceil_mode,
                            count_include_pad=count_include_pad).numpy()
    assert layer.parameter_shape == ()
    assert layer.target_shape == expected.shape[1:]
    # Exact weights 1/divisor; torch divides in float64 (one rounding each).
    assert np.allclose(spec_forward(layer, x), expected, rtol=0, atol=1e-14)


@pytest.mark.parametrize("mode,size,align", [
    ("nearest", (7, 5), None), ("nearest", (2, 9), None),
    ("bilinear", (7, 5), False), ("bilinear", (7, 5), True), ("bilinear", (3, 2), False),
    ("bilinear", (1, 8), True),
])
def test_interpolate_2d(mode, size, align):
    layer = pmach.layers.interpolate((4, 3), 2, size, mode=mode, align_corners=bool(align),
                                     layout="torch")
    x = RNG.normal(size=(2, 2, 4, 3))
    kw = {} if align is None else {"align_corners": align}
    expected = F.interpolate(torch.tensor(x), size=size, mode=mode, **kw).numpy()
    assert np.allclose(spec_forward(layer, x), expected, rtol=0, atol=1e-13)


@pytest.mark.parametrize("align", [False, True])
def test_interpolate_linear_1d_at_4_to_7(align):
    layer = pmach.layers.interpolate(4, 1, 7, mode="linear", align_corners=align, layout="torch")
    x = RNG.normal(size=(3, 1, 4))
    expected = F.interpolate(torch.tensor(x), size=7, mode="linear", align_corners=align).numpy()
    assert np.allclose(spec_forward(layer, x), expected, rtol=0, atol=1e-13)


def test_pixel_shuffle_and_unshuffle():
    shuffle = pmach.layers.pixel_shuffle((3, 2), 2, 3, layout="torch")
    x = ints((2, 18, 3, 2))
    assert np.array_equal(spec_forward(shuffle, x), F.pixel_shuffle(torch.tensor(x), 3).numpy())
    unshuffle = pmach.layers.pixel_unshuffle((9, 6), 2, 3, layout="torch")
    y = ints((2, 2, 9, 6))
    assert np.array_equal(spec_forward(unshuffle, y), F.pixel_unshuffle(torch.tensor(y), 3).numpy())


@pytest.mark.parametrize("kernel, dilation, padding, stride",
                         [((2, 3), 1, 0, 1), ((3, 2), (2, 1), (1, 2), (2, 3)), (1, 1, 1, 2)])
def test_unfold_and_fold(kernel, dilation, padding, stride):
    """F.unfold and F.fold (its transpose, summing the overlaps), one sample
    per batch row, in PyTorch's layout."""
    args = dict(dilation=dilation, padding=padding, stride=stride)
    unfold = pmach.layers.unfold((7, 6), 3, kernel, layout="torch", **args)
    x = ints((2, 3, 7, 6))
    expected = F.unfold(torch.tensor(x), kernel, **args).numpy()
    assert np.array_equal(spec_forward(unfold, x), expected)
    fold = pmach.layers.fold((7, 6), 3, kernel, layout="torch", **args)
    cols = ints(expected.shape)
    assert np.array_equal(spec_forward(fold, cols), F.fold(torch.tensor(cols), (7, 6), kernel, **args).numpy())


def test_unfold_in_pm_layout_is_the_torch_one_transposed():
    torch_layout = pmach.layers.unfold((4, 5), 2, 2, stride=2, padding=1, layout="torch")
    pm_layout = pmach.layers.unfold((4, 5), 2, 2, stride=2, padding=1)
    x = ints((1, 2, 4, 5))
    got = spec_forward(pm_layout, np.ascontiguousarray(x.transpose(0, 2, 3, 1)))
    assert np.array_equal(got.transpose(0, 2, 1), spec_forward(torch_layout, x))


def test_roll():
    x = ints((2, 3, 4, 5))  # one sample of shape (3, 4, 5) per batch row
    layer = pmach.layers.roll((3, 4, 5), (1, -2), (0, 2))
    assert np.array_equal(spec_forward(layer, x), torch.roll(torch.tensor(x), (1, -2), (1, 3)).numpy())
    flat = pmach.layers.roll((3, 4, 5), 7)
    expected = torch.stack([torch.roll(torch.tensor(s), 7) for s in x]).numpy()
    assert np.array_equal(spec_forward(flat, x), expected)


def test_graph_symmetric_normalisation_for_any_degrees():
    # GCN's D^-1/2 (A + I) D^-1/2 with in-degrees 3, 2, 2, 1 (not squares).
    edges = [(1, 0), (2, 0), (0, 1), (3, 2)]
    layer = pmach.layers.graph(4, edges, 2, 3, self_loops=True, norm="symmetric", layout="torch")
    a = torch.eye(4, dtype=torch.float64)
    for u, v in edges:
        a[v, u] += 1
    d = a.sum(1).rsqrt()
    w, x = ints((3, 2)), ints((5, 4, 2))
    expected = ((d[:, None] * a * d[None, :]) @ torch.tensor(x) @ torch.tensor(w).T).numpy()
    # The weights are the doubles nearest 1/sqrt(d_u d_v) within an ulp or two.
    assert np.allclose(spec_forward(layer, x, w), expected, rtol=1e-14, atol=1e-14)


def test_parameterless_layers_refuse_a_bias_and_bad_layouts():
    with pytest.raises(pmach.Error, match="layout: is 'nchw', expected 'pm' or 'torch'"):
        pmach.layers.avg_pool(4, 1, 2, layout="nchw")
    with pytest.raises(pmach.Error, match="padding_mode: is 'mirror'"):
        pmach.layers.conv(4, 1, 1, 3, padding=1, padding_mode="mirror")
    with pytest.raises(pmach.Error, match="mode 'bilinear' is for 2-d inputs"):
        pmach.layers.interpolate(4, 1, 8, mode="bilinear")


def test_a_large_layer_is_held_by_its_rule(tmp_path):
    # 64 -> 64 channels, 3x3 on 56x56: up to 115,605,504 edges, not listed.
    layer = pmach.layers.conv((56, 56), 64, 64, 3, padding=1, layout="torch")
    assert "held by its rule" in repr(layer)
    assert layer.parameter_shape == (64, 64, 3, 3)
    with pytest.raises(pmach.Error, match="has up to 115605504 edges, expected at most 4194304"):
        layer.forward(np.zeros((64, 56, 56)), np.zeros((64, 64, 3, 3)))
    # Saved by name (docs/formats.md 2.5): read back, it is held by its rule.
    layer.save(str(tmp_path / "big.json"))
    saved = json.loads((tmp_path / "big.json").read_text())
    assert saved["layer"] == "conv" and saved["layout"] == "torch" and "edges" not in saved
    again = pmach.load(str(tmp_path / "big.json"))
    assert "held by its rule" in repr(again)
    assert again.parameter_shape == (64, 64, 3, 3)
    with_bias = pmach.layers.conv((56, 56), 64, 64, 3, padding=1, bias=True, layout="torch")
    with_bias.save(str(tmp_path / "bias.json"))
    assert json.loads((tmp_path / "bias.json").read_text())["bias"] == {"axes": [0]}
    assert pmach.load(str(tmp_path / "bias.json")).parameter_shape == (64 * 64 * 9 + 64,)
    # A layer without a named form is still refused in one line.
    pool = pmach.layers.avg_pool((128, 128), 256, 3, stride=1)
    with pytest.raises(pmach.Error, match="save: .* expected at most 4194304 to list them"):
        pool.save(str(tmp_path / "pool.json"))


def test_a_saved_large_layer_is_checked_at_full_size(tmp_path):
    # 16 -> 16 channels on 64x64: 9.4 million edges, saved by name; the file
    # read back checks a PyTorch module by CONF-EQUAL, and finds a flipped kernel.
    pmach.layers.conv((64, 64), 16, 16, 3, padding=1, layout="torch").save(str(tmp_path / "c.json"))
    spec = pmach.load(str(tmp_path / "c.json"))
    torch.manual_seed(0)
    module = torch.nn.Conv2d(16, 16, 3, padding=1, bias=False)
    report = pmach.check(spec, module)
    assert report.passed, report

    class Flipped(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = torch.nn.Parameter(torch.zeros(16, 16, 3, 3))

        def forward(self, x):
            return torch.nn.functional.conv2d(x, self.weight.flip(-1, -2), padding=1)

    report = pmach.check(spec, Flipped())
    assert not report.passed
    assert "flipped kernel" in str(report)
