"""States channels first, (n, N, *positions) as PyTorch's NCHW: Machine.forward
and backward with channels_first=True, and pmach.torch's ConvMachine and
RecurMachine with layout="channels_first", give bit for bit the library's
channels-last results permuted, and hand the tensors' memory to the kernels
without a copy."""
import numpy as np
import pytest
import torch

import pmach
import pmach.torch as pt

# (name, constructor, its arguments): a 2-D convolution on the product path
# (30 positions), one on the direct path (72 positions), a recurrent machine.
MACHINES = [
    ("conv 2-d", "ConvMachine", ([3, 4, 2], "tanh", (5, 6), [(1, 1), (1, 1)])),
    ("conv 2-d direct", "ConvMachine", ([3, 4, 2], "tanh", (8, 9), [(1, 1), (1, 1)])),
    ("recurrent", "RecurMachine", ([2, 3], "tanh", 7, 2, 3)),
]
IDS = [m[0] for m in MACHINES]
DTYPES = {np.float64: "double", np.float32: "float"}


def first(a):
    """A state channels last, (n, *positions, N), as a C-order array channels first."""
    return np.ascontiguousarray(np.moveaxis(a, -1, 1))


def states(machine, dtype, count, n=3):
    rng = np.random.default_rng(5)
    return [rng.normal(size=(n, *machine.space_shape)).astype(dtype) for _ in range(count)]


@pytest.mark.parametrize("kernels", [True, False], ids=["kernels", "reference"])
@pytest.mark.parametrize("dtype", list(DTYPES), ids=["float64", "float32"])
@pytest.mark.parametrize("name,kind,args", MACHINES, ids=IDS)
def test_model_channels_first_is_the_permuted_channels_last(name, kind, args, dtype, kernels):
    m = getattr(pmach, kind)(*args)
    m.init_weights(2)
    w = m.weights.astype(dtype)
    y0, z0, ybar, zbar = states(m, dtype, 4)
    call = dict(precision=DTYPES[dtype], kernels=kernels)
    y, z, slope = m.forward(y0, z0, w, keep_slope=True, **call)
    yf, zf, slope_f = m.forward(first(y0), first(z0), w, keep_slope=True, channels_first=True, **call)
    assert yf.dtype == dtype and yf.shape == first(y).shape
    assert np.array_equal(yf, first(y)) and np.array_equal(zf, first(z))
    assert (slope is None) == (slope_f is None)
    assert slope_f is None or slope_f.shape == yf.shape
    assert slope_f is not None or not kernels or kind != "RecurMachine"  # the kept slope is tested

    grads = m.backward(y0, z0, ybar, zbar, w, **call)
    for state in [None, (yf, zf), (yf, zf, slope_f)]:
        if state is not None and state[-1] is None:
            continue  # no slope kept
        gf = m.backward(first(y0), first(z0), first(ybar), first(zbar), w, state=state,
                        channels_first=True, **call)
        assert np.array_equal(gf[0], first(grads[0])) and np.array_equal(gf[1], first(grads[1]))
        assert np.array_equal(gf[2], grads[2])

    # One sample without the batch axis: (N, *positions).
    one = m.forward(first(y0)[0], None, w, channels_first=True, **call)[0]
    assert np.array_equal(one, first(m.forward(y0[:1], None, w, **call)[0])[0])


def test_exact_precision_channels_first():
    m = pmach.RecurMachine([1, 2], "relu", 4, 1, 2)
    m.init_weights(3)
    y0, ybar = states(m, np.float64, 2, n=2)
    y, z = m.forward(y0, precision="exact")
    assert np.array_equal(m.forward(first(y0), precision="exact", channels_first=True)[1], first(z))
    g = m.backward(y0, None, ybar, precision="exact")
    gf = m.backward(first(y0), None, first(ybar), precision="exact", channels_first=True)
    assert np.array_equal(gf[0], first(g[0])) and np.array_equal(gf[2], g[2])


def test_dense_machine_is_the_same_channels_first():
    m = pmach.DenseMachine([2, 3])
    m.init_weights(1)
    y0, ybar = states(m, np.float64, 2)
    for kernels in (True, False):
        assert np.array_equal(m.forward(y0, kernels=kernels, channels_first=True)[0],
                              m.forward(y0, kernels=kernels)[0])
        assert np.array_equal(m.backward(y0, None, ybar, kernels=kernels, channels_first=True)[2],
                              m.backward(y0, None, ybar, kernels=kernels)[2])


def test_model_shape_errors_name_the_argument_in_the_layout():
    m = pmach.ConvMachine([3, 4, 2], "tanh", (5, 6), [(1, 1), (1, 1)])
    m.init_weights(1)
    y0, z0 = states(m, np.float64, 2)
    expected = r"expected \(batch, 9, 5, 6\) or without the batch axis \(9, 5, 6\) with channels_first=True"
    for kernels in (True, False):
        with pytest.raises(pmach.Error, match=r"^y0: shape \(3, 5, 6, 9\), " + expected + "$"):
            m.forward(y0, channels_first=True, kernels=kernels)
        with pytest.raises(pmach.Error, match=r"^z0: shape \(3, 5, 6, 9\), " + expected + "$"):
            m.forward(first(y0), z0, channels_first=True, kernels=kernels)
        with pytest.raises(pmach.Error, match=r"^ybar: shape \(3, 5, 6, 9\), " + expected + "$"):
            m.backward(first(y0), None, y0, channels_first=True, kernels=kernels)


def module_pair(kind, args, dtype):
    """The module channels last and the same one (its weight copied) channels first."""
    torch.manual_seed(4)
    last = getattr(pt, kind)(*args, dtype=dtype)
    firsts = getattr(pt, kind)(*args, dtype=dtype, layout="channels_first")
    with torch.no_grad():
        firsts.weight.copy_(last.weight)
    return last, firsts


def channels_last_memory(t):
    """t (n, N, *positions) with the strides of torch.channels_last: a permuted
    view of a C-order (n, *positions, N) array."""
    if t.dim() == 4:
        return t.contiguous(memory_format=torch.channels_last)
    return t.movedim(1, -1).contiguous().movedim(-1, 1)


def run(module, y0, z0, cy, cz):
    y0, z0 = y0.detach().requires_grad_(), z0.detach().requires_grad_()
    y, z = module(y0, z0)
    module.weight.grad = None
    ((y * cy).sum() + (z * cz).sum()).backward()
    return y, z, y0.grad, z0.grad, module.weight.grad


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32], ids=["float64", "float32"])
@pytest.mark.parametrize("name,kind,args", MACHINES, ids=IDS)
def test_module_channels_first_is_the_permuted_channels_last(name, kind, args, dtype):
    last, firsts = module_pair(kind, args, dtype)
    g = torch.Generator().manual_seed(6)
    y0, z0, cy, cz = (torch.randn((3, *last.machine.space_shape), generator=g, dtype=dtype) for _ in range(4))
    reference = [t.movedim(-1, 1) for t in run(last, y0, z0, cy, cz)[:4]] + [last.weight.grad]
    to_first = [t.movedim(-1, 1).contiguous() for t in (y0, z0, cy, cz)]
    variants = [
        (to_first, torch.Tensor.is_contiguous),
        ([channels_last_memory(t) for t in to_first], lambda t: t.movedim(1, -1).is_contiguous()),
        ([torch.stack([t, t], -1)[..., 0] for t in to_first], None),  # neither layout's strides
    ]
    for given, in_format in variants:
        out = run(firsts, *given)
        for got, want in zip(out, reference):
            assert got.shape == want.shape and torch.equal(got, want)
        if in_format is not None:  # y and z in y0's memory format
            assert in_format(given[0]) and in_format(out[0]) and in_format(out[1])


class Recording:
    """A machine that records the arrays the module hands to it."""

    def __init__(self, machine):
        self.machine, self.calls = machine, []

    def __getattr__(self, name):
        return getattr(self.machine, name)

    def __repr__(self):
        return repr(self.machine)

    def forward(self, y0, z0, w, **kw):
        self.calls.append((y0, z0, kw))
        return self.machine.forward(y0, z0, w, **kw)

    def backward(self, **kw):
        self.calls.append((kw["ybar"], kw["zbar"], kw))
        return self.machine.backward(**kw)


@pytest.mark.parametrize("memory_format", ["contiguous", "channels_last"])
@pytest.mark.parametrize("name,kind,args", MACHINES, ids=IDS)
def test_module_hands_the_tensors_memory_to_the_kernels(name, kind, args, memory_format):
    _, module = module_pair(kind, args, torch.float64)
    module.machine = Recording(module.machine)
    shape = (2, *module.machine.space_shape)
    y0, z0 = (torch.randn(shape, dtype=torch.float64).movedim(-1, 1).contiguous() for _ in range(2))
    if memory_format == "channels_last":
        y0, z0 = channels_last_memory(y0), channels_last_memory(z0)
    y0.requires_grad_()
    y, z = module(y0, z0)
    gy, gz = torch.ones_like(y), torch.ones_like(z)
    if memory_format == "channels_last":
        gy, gz = channels_last_memory(gy), channels_last_memory(gz)
    torch.autograd.backward([y, z], [gy, gz])
    (a, b, kw), (ga, gb, bkw) = module.machine.calls
    assert kw["channels_first"] == bkw["channels_first"] == (memory_format == "contiguous")
    for given, tensor in [(a, y0), (b, z0), (ga, gy), (gb, gz), (bkw["state"][0], y), (bkw["state"][1], z)]:
        assert np.shares_memory(given, tensor.detach().numpy())


def test_module_layout_errors_are_one_line():
    with pytest.raises(pmach.Error) as e:
        pt.ConvMachine([1, 2], "tanh", (3, 4), [(1, 1), (1, 1)], layout="NCHW")
    assert str(e.value) == "ConvMachine: layout is 'NCHW', expected 'channels_last' or 'channels_first'"
    with pytest.raises(pmach.Error, match=r"^RecurMachine: layout is None, expected 'channels_last' or "):
        pt.RecurMachine([1, 2], "tanh", 5, 1, 2, layout=None)
    module = pt.ConvMachine([1, 2], "tanh", (3, 4), [(1, 1), (1, 1)], dtype=torch.float64,
                            layout="channels_first")
    expected = r"expected \(batch, 3, 3, 4\) or without the batch axis \(3, 3, 4\) with channels_first=True$"
    with pytest.raises(pmach.Error, match=r"^y0: shape \(2, 3, 4, 3\), " + expected):
        module(torch.zeros(2, 3, 4, 3, dtype=torch.float64))
    y0 = channels_last_memory(torch.zeros(2, 3, 3, 4, dtype=torch.float64))
    with pytest.raises(pmach.Error, match=r"^z0: shape \(2, 3, 4, 3\), " + expected):
        module(y0, torch.zeros(2, 3, 4, 3, dtype=torch.float64))
    with pytest.raises(pmach.Error, match="y0 has dtype torch.float32, expected torch.float64"):
        module(y0.float())
    y, z = module(y0.requires_grad_())
    with pytest.raises(RuntimeError, match="a second derivative through a pmach machine"):
        torch.autograd.grad(z.sum(), y0, create_graph=True)
