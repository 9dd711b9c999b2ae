"""DistributedDataParallel runs pmach.torch modules unchanged: two CPU
processes (gloo on 127.0.0.1) each take half of the batch; the averaged
gradient must equal the one-process gradient of the whole batch.

The bound is 0, derived: weights, inputs and the loss's coefficients are
small integers and σ = relu, so every forward and backward value is an
integer of magnitude far below 2^53 and float64 arithmetic is exact in any
order of summation; DDP's average of two gradients (a sum and a halving)
and the loss's 1/batch scaling by a power of two are exact too."""
import os
import socket
import subprocess
import sys

import torch

import pmach.torch as pt

DIMS, BATCH = [3, 4, 3], 8

WORKER = """
import sys, torch, torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
sys.path.insert(0, {here!r})
from test_ddp import problem
rank, port, out = int(sys.argv[1]), sys.argv[2], sys.argv[3]
dist.init_process_group("gloo", init_method="tcp://127.0.0.1:" + port, rank=rank, world_size=2)
module, y0, c = problem()
ddp = DDP(module)
half = slice(rank * len(y0) // 2, (rank + 1) * len(y0) // 2)
y, z = ddp(y0[half])
((z * c[half]).sum() / (len(y0) // 2)).backward()
torch.save(module.weight.grad, out)
dist.destroy_process_group()
"""


def problem():
    """The same module, batch and loss coefficients in every process."""
    g = torch.Generator().manual_seed(5)
    module = pt.DenseMachine(DIMS, "relu", dtype=torch.float64)
    n = sum(DIMS)
    with torch.no_grad():
        module.weight.copy_(torch.randint(-2, 3, (n, n), generator=g).double())
    y0 = torch.randint(-3, 4, (BATCH, n), generator=g).double()
    c = torch.randint(-2, 3, (BATCH, n), generator=g).double()
    return module, y0, c


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return str(s.getsockname()[1])


def test_two_process_ddp_gradient_equals_the_whole_batch_gradient(tmp_path):
    here = os.path.dirname(os.path.abspath(__file__))
    script = tmp_path / "worker.py"
    script.write_text(WORKER.format(here=here))
    port = free_port()
    outs = [tmp_path / f"grad{r}.pt" for r in (0, 1)]
    procs = [subprocess.Popen([sys.executable, str(script), str(r), port, str(outs[r])],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT) for r in (0, 1)]
    try:
        logs = [p.communicate(timeout=120)[0].decode() for p in procs]
    finally:
        for p in procs:
            p.kill()
    assert all(p.returncode == 0 for p in procs), "\n".join(logs)
    module, y0, c = problem()
    y, z = module(y0)
    ((z * c).sum() / BATCH).backward()
    whole = module.weight.grad
    assert whole.abs().sum() > 0  # the comparison is not vacuous
    for out in outs:
        assert torch.equal(torch.load(out), whole)
