"""pmach.load, the constructors, forward/backward in every precision, save."""
import json

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import pmach
from conftest import DATA, integers


def torch_conv2d(x, w, **kw):
    """PyTorch's conv2d in the library's layout: x (n, H, W, C), w (kh, kw, cin/g, cout)."""
    y = F.conv2d(torch.tensor(x).permute(0, 3, 1, 2), torch.tensor(w).permute(3, 2, 0, 1), **kw)
    return y.permute(0, 2, 3, 1).numpy()


def test_dense_forward_backward_against_numpy(rng):
    layer = pmach.layers.dense(3, 4)
    assert layer.source_shape == (3,) and layer.target_shape == (4,)
    assert layer.parameter_shape == (3, 4) and layer.edges == 12
    x, w, g = integers(rng, (5, 3)), integers(rng, (3, 4)), integers(rng, (5, 4))
    for kernels in (False, True):
        assert np.array_equal(layer.forward(x, w, kernels=kernels), x @ w)
        gx, gw = layer.backward(x, g, w, kernels=kernels)
        assert np.array_equal(gx, g @ w.T) and np.array_equal(gw, x.T @ g)
    assert np.array_equal(layer.forward(x[0], w), x[0] @ w)  # no batch axis in, none out


def test_dense_bias_reads_the_last_input_as_one(rng):
    layer = pmach.layers.dense(2, 3, bias=True)
    w = integers(rng, (9,))
    x = np.array([[1.0, 2.0, 1.0]])
    assert np.array_equal(layer.forward(x, w)[0], x[0, :2] @ w[:6].reshape(2, 3) + w[6:])


def test_precisions(rng):
    layer = pmach.layers.dense(3, 2)
    x, w = rng.normal(size=(4, 3)), rng.normal(size=(3, 2))
    assert layer.forward(x, w, precision="float").dtype == np.float32
    assert layer.forward(x, w, precision="float", kernels=True).dtype == np.float32
    exact = layer.forward(np.array([[1 / 3, 0, 0]]), np.full((3, 2), 3.0), precision="exact")
    # 1/3 as a double times 3, rounded once: the double nearest to 3 * fl(1/3).
    assert exact.dtype == np.float64 and exact[0, 0] == 1.0
    with pytest.raises(pmach.Error, match="precision: is 'half', expected float, double or exact"):
        layer.forward(x, w, precision="half")
    with pytest.raises(pmach.Error, match="kernels=True runs in float or double"):
        layer.forward(x, w, precision="exact", kernels=True)


@pytest.mark.parametrize("kw", [
    dict(stride=1, dilation=1, padding=1, groups=1),
    dict(stride=2, dilation=1, padding=(1, 0), groups=1),
    dict(stride=1, dilation=2, padding=2, groups=2),
    dict(stride=(2, 1), dilation=(1, 2), padding=((1, 2), (0, 1)), groups=2),
])
def test_conv_matches_pytorch(rng, kw):
    layer = pmach.layers.conv((6, 5), 4, 6, (3, 2), **kw)
    x = integers(rng, (2, 6, 5, 4))
    w = integers(rng, layer.parameter_shape)
    pad = kw["padding"]
    if isinstance(pad, tuple) and isinstance(pad[0], tuple):  # asymmetric: pad by hand
        (t, b), (l, r) = pad
        xp = np.pad(x, ((0, 0), (t, b), (l, r), (0, 0)))
        expected = torch_conv2d(xp, w, stride=kw["stride"], dilation=kw["dilation"], groups=kw["groups"])
    else:
        expected = torch_conv2d(x, w, **kw)
    assert layer.target_shape == expected.shape[1:]
    for kernels in (False, True):
        assert np.array_equal(layer.forward(x, w, kernels=kernels), expected)


def test_conv_transpose_is_the_adjoint(rng):
    conv = pmach.layers.conv(7, 2, 3, 3, stride=2, padding=1)
    # ConvTranspose1d(3, 2, 3, stride=2, padding=1) on inputs of length 4 = conv's output
    tconv = pmach.layers.conv_transpose(4, 3, 2, 3, stride=2, padding=1)
    assert tconv.source_shape == conv.target_shape and tconv.target_shape == conv.source_shape
    w, g = integers(rng, conv.parameter_shape), integers(rng, (2,) + conv.target_shape)
    expected = F.conv_transpose1d(torch.tensor(g).permute(0, 2, 1), torch.tensor(w).permute(2, 1, 0),
                                  stride=2, padding=1)
    assert np.array_equal(tconv.forward(g, w), expected.permute(0, 2, 1).numpy())


def test_time_conv_is_causal(rng):
    layer = pmach.layers.time_conv(6, 1, 1, 2)
    w = np.array([[[1.0]], [[10.0]], [[100.0]]])  # lags 0, 1, 2
    x = np.zeros((1, 6, 1))
    x[0, 2, 0] = 1
    assert layer.forward(x, w)[0, :, 0].tolist() == [0, 0, 1, 10, 100, 0]


def test_graph_mean(rng):
    layer = pmach.layers.graph(3, [(0, 2), (1, 2), (2, 0)], 1, 1, norm="mean")
    y = layer.forward(np.array([[[2.0], [4.0], [8.0]]]), np.ones((1, 1)), precision="exact")
    assert y[0, :, 0].tolist() == [8.0, 0.0, 3.0]
    with pytest.raises(pmach.Error, match="norm is 'max', expected sum, mean or symmetric"):
        pmach.layers.graph(3, [], 1, 1, norm="max")


def test_avg_pool_matches_pytorch(rng):
    layer = pmach.layers.avg_pool((4, 6), 2, (2, 3), padding=(0, 1), stride=(2, 2))
    assert layer.parameter_shape == ()
    x = rng.normal(size=(3, 4, 6, 2))
    expected = F.avg_pool2d(torch.tensor(x).permute(0, 3, 1, 2), (2, 3), stride=(2, 2),
                            padding=(0, 1), count_include_pad=True).permute(0, 2, 3, 1).numpy()
    assert np.allclose(layer.forward(x, precision="exact"), expected, rtol=0, atol=1e-15)


def test_dense_machine_by_hand():
    # dims [1, 1], W[input, output]: only W[0, 1] acts (block 0 into block 1).
    m = pmach.DenseMachine([1, 1], "identity", weights=np.array([[5.0, 7.0], [11.0, 13.0]]))
    assert m.kind == "DenseMachine" and m.dims == [1, 1] and m.space_shape == (2,)
    y0 = np.array([[2.0, 3.0]])
    for kernels in (False, True):
        y, z = m.forward(y0, kernels=kernels)
        assert y.tolist() == [[2.0, 3.0 + 7.0 * 2.0]] and z.tolist() == y.tolist()
        gy0, gz0, gw = m.backward(y0, ybar=np.array([[0.0, 1.0]]), kernels=kernels)
        assert gy0.tolist() == [[7.0, 1.0]] and gz0.tolist() == [[7.0, 0.0]]
        assert gw.tolist() == [[0.0, 2.0], [0.0, 0.0]]  # cleaned, z0 * ybar1 at (0, 1)


@pytest.mark.parametrize("make", [
    lambda: pmach.DenseMachine([2, 3, 1], "relu"),
    lambda: pmach.ConvMachine([1, 2], "identity", 6, [(1, 2)]),
    lambda: pmach.ConvMachine([1, 1, 2], "relu", (3, 4), [(1, 0), (0, 1)]),
    lambda: pmach.RecurMachine([1, 2], "relu", 7, 2, 3),
])
def test_kernels_agree_with_the_reference_exactly(rng, make):
    """Integer inputs and weights, rational σ: kernel, double and exact agree bit for bit."""
    m = make()
    m.weights = integers(rng, m.parameter_shape, 2)
    y0, z0 = integers(rng, (3,) + m.space_shape), integers(rng, (3,) + m.space_shape)
    ybar = integers(rng, (3,) + m.space_shape)
    ref = m.forward(y0, z0, precision="exact")
    for out in (m.forward(y0, z0), m.forward(y0, z0, kernels=True)):
        assert all(np.array_equal(a, b) for a, b in zip(out, ref))
    gref = m.backward(y0, z0, ybar, precision="exact")
    for g in (m.backward(y0, z0, ybar), m.backward(y0, z0, ybar, kernels=True)):
        assert all(np.array_equal(a, b) for a, b in zip(g, gref))


def test_the_kept_slope_gives_the_bits_of_the_recomputed_one(rng):
    """forward(keep_slope=True) keeps sigma'(y) of a dense machine for backward."""
    m = pmach.DenseMachine([3, 4, 2], "tanh")
    m.init_weights(seed=3)
    y0, z0 = rng.standard_normal((5, 9)), rng.standard_normal((5, 9))
    ybar, zbar = rng.standard_normal((5, 9)), rng.standard_normal((5, 9))
    for precision in ("float", "double"):
        y, z, slope = m.forward(y0, z0, precision=precision, kernels=True, keep_slope=True)
        assert slope.shape == y.shape and np.allclose(slope, 1 - np.tanh(y.astype(float)) ** 2,
                                                      rtol=0, atol=1e-6)
        kept = m.backward(ybar=ybar, zbar=zbar, precision=precision, state=(y, z, slope),
                          kernels=True)
        again = m.backward(ybar=ybar, zbar=zbar, precision=precision, state=(y, z), kernels=True)
        assert all(np.array_equal(a, b) for a, b in zip(kept, again))
        assert np.any(kept[0] != 0)
    assert m.forward(y0, z0, keep_slope=True)[2] is None  # the reference keeps none
    with pytest.raises(pmach.Error, match="slope"):
        m.backward(ybar=ybar, precision="double", state=(y, z, slope[:4]), kernels=True)


@pytest.mark.parametrize("make", [
    lambda: pmach.ConvMachine([1, 2], "tanh", 6, [(1, 2)]),
    lambda: pmach.ConvMachine([1, 1, 2], "sigmoid", (3, 4), [(1, 0), (0, 1)]),
    lambda: pmach.RecurMachine([2, 3], "tanh", 7, 2, 3),
])
def test_a_sequence_machines_kept_slope_gives_the_bits_of_the_recomputed_one(make, rng):
    """The convolution and recurrent kernels keep sigma'(y) too (in their own order)."""
    m = make()
    m.init_weights(seed=2)
    shape = (5,) + m.space_shape
    y0, z0, ybar, zbar = (rng.standard_normal(shape) for _ in range(4))
    for precision in ("float", "double"):
        y, z, slope = m.forward(y0, z0, precision=precision, kernels=True, keep_slope=True)
        assert slope is not None and slope.shape == y.shape
        kept = m.backward(ybar=ybar, zbar=zbar, precision=precision, state=(y, z, slope),
                          kernels=True)
        again = m.backward(ybar=ybar, zbar=zbar, precision=precision, state=(y, z), kernels=True)
        assert all(np.array_equal(a, b) for a, b in zip(kept, again))
        assert np.any(kept[0] != 0)
        ones = m.backward(ybar=ybar, zbar=zbar, precision=precision,
                          state=(y, z, np.ones_like(slope)), kernels=True)
        assert not np.array_equal(ones[0], kept[0])  # the slope is read, not recomputed


def test_load_examples_and_save_round_trip(tmp_path, rng):
    for name in ("dense.json", "conv1d.json", "avgpool.json", "graph.json"):
        layer = pmach.load(str(DATA / name))
        assert isinstance(layer, pmach.Layer)
        layer.save(str(tmp_path / name))
        again = pmach.load(str(tmp_path / name))
        assert not pmach.span_diff(layer, again) and again.edges == layer.edges
        x = rng.normal(size=(2,) + layer.source_shape)
        w = layer.weights if layer.weights is not None else rng.normal(size=layer.parameter_shape)
        if layer.weights is not None:
            assert np.array_equal(again.weights, layer.weights)
        assert np.array_equal(again.forward(x, w), layer.forward(x, w))
    for name in ("dense_machine.json", "recur_machine.json", "graded_machine.json"):
        m = pmach.load(str(DATA / name))
        assert isinstance(m, pmach.Machine)
        m.save(str(tmp_path / name))
        again = pmach.load(str(tmp_path / name))
        y0 = rng.normal(size=(2,) + m.space_shape)
        assert all(np.array_equal(a, b) for a, b in zip(again.forward(y0), m.forward(y0)))


def test_constructed_machines_save(tmp_path):
    m = pmach.ConvMachine([1, 2], "tanh", (3, 3), [(1, 1), (0, 2)])
    with pytest.raises(pmach.Error, match="the machine has no weights"):
        m.save(str(tmp_path / "c.json"))
    m.init_weights(5)
    m.save(str(tmp_path / "c.json"))
    spec = json.loads((tmp_path / "c.json").read_text())
    assert spec["machine"] == "ConvMachine" and spec["pad"] == [[1, 1], [0, 2]]
    assert np.array_equal(pmach.load(str(tmp_path / "c.json")).weights, m.weights)
    with pytest.raises(pmach.Error, match="expected a file name ending in .json"):
        m.save(str(tmp_path / "c.txt"))


def test_a_layer_with_a_bias_runs_the_kernels(rng):
    """kernels=True on a layer with a bias: the span kernel with the bias point set to 1,
    the same values as the reference and as PyTorch's conv2d with its bias."""
    layer = pmach.layers.conv((5, 6), 2, 3, 3, padding=1, bias=True, layout="torch")
    x, g = integers(rng, (4, 2, 5, 6)), integers(rng, (4, 3, 5, 6))
    w, b = integers(rng, (3, 2, 3, 3)), integers(rng, (3,))
    xt, wt, bt = (torch.tensor(a, requires_grad=True) for a in (x, w, b))
    y = F.conv2d(xt, wt, bt, padding=1)
    (y * torch.tensor(g)).sum().backward()
    flat = np.concatenate([w.ravel(), b])
    for kernels in (False, True):
        assert np.array_equal(layer.forward(x, flat, kernels=kernels), y.detach().numpy())
        gx, gw = layer.backward(x, g, flat, kernels=kernels)
        assert np.array_equal(gx, xt.grad.numpy())
        assert np.array_equal(gw, np.concatenate([wt.grad.numpy().ravel(), bt.grad.numpy()]))
