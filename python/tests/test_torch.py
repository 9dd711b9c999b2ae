"""pmach.torch: modules over the C++ kernels, autograd, gradcheck, devices,
determinism across thread counts."""
import os
import subprocess
import sys

import numpy as np
import pytest
import torch

import pmach
import pmach.torch as pt
from conftest import SOURCE

sys.path.insert(0, str(SOURCE / "bench"))
import compare_pytorch as loops  # noqa: E402  the machines written as PyTorch loops

MODULES = [
    ("dense", lambda: pt.DenseMachine([2, 3, 2], "tanh", dtype=torch.float64), (4, 7)),
    ("conv 1-d", lambda: pt.ConvMachine([1, 2, 1], "sigmoid", 6, [(1, 2)], dtype=torch.float64), (3, 6, 4)),
    ("conv 2-d", lambda: pt.ConvMachine([1, 2], "tanh", (3, 4), [(1, 0), (1, 1)], dtype=torch.float64),
     (2, 3, 4, 3)),
    ("recurrent", lambda: pt.RecurMachine([1, 2], "tanh", 7, 2, 3, dtype=torch.float64), (2, 7, 3)),
]


@pytest.mark.parametrize("name,make,shape", MODULES, ids=[m[0] for m in MODULES])
def test_gradcheck_machines(name, make, shape):
    torch.manual_seed(0)
    module = make()
    y0 = torch.randn(shape, dtype=torch.float64, requires_grad=True)
    z0 = torch.randn(shape, dtype=torch.float64, requires_grad=True)
    w = module.weight.detach().clone().requires_grad_()

    def f(w, y0, z0):
        return pt._MachineFunction.apply(module.machine, name, w, y0, z0)
    assert torch.autograd.gradcheck(f, (w, y0, z0))
    y, z = module(y0)  # z0 omitted: zero
    assert y.shape == shape and z.shape == shape


@pytest.mark.parametrize("layer", [
    pmach.layers.conv((4, 3), 2, 2, 3, padding=1, stride=(2, 1)),
    pmach.layers.graph(4, [(0, 1), (1, 2), (3, 0)], 2, 3, self_loops=True, norm="mean"),
    pmach.layers.dense(3, 2, bias=True),
    pmach.layers.avg_pool(6, 2, 2),
], ids=["conv", "graph", "dense+bias", "avg_pool"])
def test_gradcheck_layers(layer):
    module = pt.Layer(layer, dtype=torch.float64)
    x = torch.randn((2,) + layer.source_shape, dtype=torch.float64, requires_grad=True)
    inputs = (x,) if layer.parameter_shape == () else (module.weight.detach().clone().requires_grad_(), x)

    def f(*args):
        w = args[0] if len(args) == 2 else module.weight.detach()
        return pt._LayerFunction.apply(layer, "layer", w, args[-1])
    assert torch.autograd.gradcheck(f, inputs)
    assert module(x).shape == (2,) + layer.target_shape


def test_dense_module_equals_the_pytorch_loop_exactly():
    """Integer weights and inputs with σ = relu: both are exact in float64, so ==."""
    dims = [2, 3, 2]
    module = pt.DenseMachine(dims, "relu", dtype=torch.float64)
    g = torch.Generator().manual_seed(3)
    with torch.no_grad():
        module.weight.copy_(torch.randint(-2, 3, (7, 7), generator=g).double())
    y0 = torch.randint(-3, 4, (5, 7), generator=g).double().requires_grad_()
    z0 = torch.randint(-3, 4, (5, 7), generator=g).double()
    y, z = module(y0, z0)
    w_loop = module.weight.detach().clone().requires_grad_()
    y0_loop = y0.detach().clone().requires_grad_()
    ly, lz = loops.dense_forward(w_loop, y0_loop, z0, dims, sigma=torch.relu)
    assert torch.equal(y, ly) and torch.equal(z, lz)
    (y.sum() + 2 * z.sum()).backward()
    (ly.sum() + 2 * lz.sum()).backward()
    assert torch.equal(module.weight.grad, w_loop.grad) and torch.equal(y0.grad, y0_loop.grad)


def test_backward_after_an_in_place_change_of_the_outputs_is_refused():
    module = pt.DenseMachine([2, 2])
    y, z = module(torch.randn(3, 4))
    z.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()


def test_float32_runs_in_float32():
    module = pt.DenseMachine([2, 2])
    y, z = module(torch.randn(3, 4))
    assert module.weight.dtype == torch.float32 and y.dtype == torch.float32
    z.sum().backward()
    assert module.weight.grad.dtype == torch.float32


def test_devices_and_dtypes_are_checked():
    module = pt.DenseMachine([2, 2])
    with pytest.raises(pmach.Error, match="y0 is on meta, expected a CPU tensor"):
        module(torch.empty((3, 4), device="meta"))
    with pytest.raises(pmach.Error, match="y0 has dtype torch.float64, expected torch.float32"):
        module(torch.zeros((3, 4), dtype=torch.float64))
    with pytest.raises(pmach.Error, match=r"y0: shape \(3, 5\)"):
        module(torch.zeros((3, 5)))


def test_weights_follow_torch_manual_seed():
    torch.manual_seed(11)
    a = pt.RecurMachine([1, 2], "tanh", 5, 1, 2).weight
    torch.manual_seed(11)
    b = pt.RecurMachine([1, 2], "tanh", 5, 1, 2).weight
    assert torch.equal(a, b) and a.shape == (2, 3, 3) and a.abs().max() > 0


DETERMINISM = """
import hashlib, numpy as np, torch, pmach.torch as pt
torch.manual_seed(1)
m = pt.ConvMachine([8, 8, 8], "tanh", 32, [(2, 1)])
y0 = torch.randn(300, 32, 24, requires_grad=True)
y, z = m(y0)
(z * torch.linspace(-1, 1, 24)).sum().backward()
h = hashlib.sha256()
for t in (y, z, m.weight.grad, y0.grad):
    h.update(t.detach().numpy().tobytes())
print(h.hexdigest())
"""


def test_bits_do_not_depend_on_the_thread_count():
    digests = set()
    for threads in ("1", "2"):
        env = dict(os.environ, OMP_NUM_THREADS=threads)
        r = subprocess.run([sys.executable, "-c", DETERMINISM], env=env, capture_output=True,
                           text=True, timeout=120, check=True)
        digests.add(r.stdout.strip())
    assert len(digests) == 1 and len(digests.pop()) == 64
