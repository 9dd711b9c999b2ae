#!/usr/bin/python3
"""Side-by-side timing of the machine kernels and the same machines in PyTorch.

PyTorch runs the machines the way a PyTorch user writes them: a loop over the
levels for the forward pass, autograd for the backward pass; and at its best,
the same loop compiled by torch.jit.script and, for the 2-D and 3-D machines,
on channels-last tensors, the fastest of which has columns of its own. The
script refuses PyTorch on the reference BLAS and, with --isa native, pins
OpenBLAS to the CPU's AVX-512 (AVX2) kernels when OpenBLAS does not recognise
the CPU (OPENBLAS_CORETYPE, unless set by the caller). The kernels run in
pm_bench_machine (a subprocess) on the very same input arrays, with the same
thread count and dtype, the kernels' states in the layout their products want (--layout auto:
channel-major, PyTorch's NCHW, where the direct path runs, position-major elsewhere). Both sides time each pass call by call and report the
minimum (the machine may be shared; the load is printed with every row). The kernels' outputs are checked against a float64 evaluation within
the forward error bound of docs/tolerances.md, and PyTorch's deviation from the
same reference is shown beside ours.

Usage (from the repository root, after building pm_bench_machine):
    /usr/bin/python3 bench/compare_pytorch.py --build build-kernels [--threads 1 2]
With --isa avx2 both sides are held to AVX2 on a CPU that has AVX-512: PyTorch
through its environment (set before torch is imported), the kernels by a build
compiled for AVX2 (-DPM_NATIVE=OFF -DCMAKE_CXX_FLAGS=-march=haswell).
"""
import argparse
import ctypes
import itertools
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from typing import List, Tuple

# numpy, torch and torch.nn.functional: imported by main() once the
# environment that restricts PyTorch's instruction set (--isa) is in place
# (numpy loads the same OpenBLAS as torch, which reads OPENBLAS_CORETYPE when
# it is loaded), or on import when this file is used as a module.
np = torch = F = None


def import_numerics():
    global np, torch, F
    import numpy as np
    import torch
    import torch.nn.functional as F


if __name__ != "__main__":
    import_numerics()

# What holds PyTorch 1.13 to AVX2, each measured on an AVX-512 CPU (one
# thread): ATen's vectorised kernels (torch.__config__.show() reports "CPU
# capability usage: AVX2" against AVX512 with ATEN_CPU_CAPABILITY=avx512;
# torch.tanh on 10⁶ floats 2.2 ms against 1.5 ms); OpenBLAS's kernels
# (openblas_get_corename() "Haswell" instead of "SkylakeX"; torch.mm 1024³
# 97 against 142 GFLOP/s); oneDNN's convolutions (DNNL_VERBOSE names
# jit:avx2 instead of jit:avx512_core; F.conv1d 64 → 64 channels, 7 taps,
# 16 × 256: 102 against 140 GFLOP/s; ONEDNN_MAX_CPU_ISA has the same effect).
ISA_ENVIRONMENT = {"avx2": {"ATEN_CPU_CAPABILITY": "avx2", "OPENBLAS_CORETYPE": "Haswell",
                            "DNNL_MAX_CPU_ISA": "AVX2", "ONEDNN_MAX_CPU_ISA": "AVX2"}}

# The paper's sizes (seeds.md §4: conv length 16, pad (3, 3); recurrent
# length 16, max lag 6, time block 5) and large ones; the large rows also run
# with two threads.
SMALL, MEDIUM, LARGE = [2] * 5, [32] * 5, [64] * 4
ROWS = [
    dict(machine="dense", size="small", dims=SMALL, batch=2),
    dict(machine="dense", size="medium", dims=MEDIUM, batch=32),
    dict(machine="dense", size="large", dims=[256] * 4, batch=256),
    dict(machine="conv", size="small", dims=SMALL, batch=2, length=16, lo=3, hi=3),
    dict(machine="conv", size="medium", dims=MEDIUM, batch=32, length=16, lo=3, hi=3),
    dict(machine="conv", size="large", dims=LARGE, batch=16, length=256, lo=3, hi=3),
    dict(machine="recur", size="small", dims=SMALL, batch=2, length=16, lag=6, tb=5),
    dict(machine="recur", size="medium", dims=MEDIUM, batch=32, length=16, lag=6, tb=5),
    dict(machine="recur", size="large", dims=LARGE, batch=16, length=128, lag=6, tb=5),
    # The 2-D and 3-D convolution machines: 3 × 3 (× 3) kernels, pad 1 on every side.
    dict(machine="conv2d", size="medium", dims=[16] * 4, batch=8, extents=[32, 32], pad=[1] * 4),
    dict(machine="conv2d", size="large", dims=[32] * 4, batch=8, extents=[64, 64], pad=[1] * 4),
    dict(machine="conv3d", size="medium", dims=[8] * 4, batch=4, extents=[16] * 3, pad=[1] * 6),
    dict(machine="conv3d", size="large", dims=[16] * 4, batch=4, extents=[24] * 3, pad=[1] * 6),
]
CONV_ND = {"conv2d", "conv3d"}  # F.conv2d, F.conv3d
# The graph convolution layer (mean normalisation, self loops) on random graphs.
GRAPHS = [
    dict(machine="graph", size="medium", nodes=1000, edges=8000, channels=(8, 8), batch=16),
    dict(machine="graph", size="large", nodes=10000, edges=100000, channels=(32, 32), batch=16),
]


def clean_mask(dims, dtype):
    """mask[x, y] = 1 when block(x) < block(y): the weights cleaning keeps."""
    block = torch.cat([torch.full((d,), k) for k, d in enumerate(dims)])
    return (block[:, None] < block[None, :]).to(dtype)


def slices(dims):
    o = 0
    for d in dims:
        yield o, d
        o += d


def dense_forward(w, y0, z0, dims, sigma):
    """y = y0 + z W̃, z = z0 + σ(y), one level at a time (rows are samples)."""
    wc = w * clean_mask(dims, w.dtype)
    ys, zs = [], []
    for o, d in slices(dims):
        y = y0[:, o:o + d]
        if o > 0:
            y = y + torch.cat(zs, dim=1) @ wc[:o, o:o + d]
        ys.append(y)
        zs.append(z0[:, o:o + d] + sigma(y))
    return torch.cat(ys, dim=1), torch.cat(zs, dim=1)


def blocks_of(dims):
    return torch.cat([torch.full((d,), k) for k, d in enumerate(dims)])


def conv_mask(dims, taps, dtype):
    """mask[co, ci, k...] = 1 when block(ci) < block(co), for conv1d's (conv2d's,
    conv3d's) weight layout; taps is the kernel size (a tuple for a grid)."""
    b = blocks_of(dims)
    taps = taps if isinstance(taps, tuple) else (taps,)
    m = (b[None, :] < b[:, None]).to(dtype)
    return m.reshape(m.shape + (1,) * len(taps)).expand(-1, -1, *taps)


def grid_pad(pad):
    """F.pad's order (last axis first) of our (lo_0, hi_0, lo_1, hi_1, ...)."""
    return tuple(p for j in reversed(range(len(pad) // 2)) for p in (pad[2 * j], pad[2 * j + 1]))


def grid_forward(weight, y0, z0, dims, pad, sigma):
    """The convolution machine on a grid, one channel block at a time: states
    (B, C, e_0, ...), weight (C_out, C_in, k_0, ...) as for conv2d / conv3d."""
    conv = getattr(F, {2: "conv2d", 3: "conv3d"}[weight.ndim - 2])
    wc = weight * conv_mask(dims, tuple(weight.shape[2:]), weight.dtype)
    ys, zs = [], []
    for o, d in slices(dims):
        y = y0[:, o:o + d]
        if o > 0:
            y = y + conv(F.pad(torch.cat(zs, dim=1), grid_pad(pad)), wc[o:o + d, :o])
        ys.append(y)
        zs.append(z0[:, o:o + d] + sigma(y))
    return torch.cat(ys, dim=1), torch.cat(zs, dim=1)


def recur_mask(dims, lag, tb, dtype):
    """mask[co, ci, k] for lag = lag_max − k: every pair when lag ≥ tb, else block(ci) < block(co)."""
    m = conv_mask(dims, lag + 1, dtype).clone()
    for k in range(lag + 1):
        if lag - k >= tb:
            m[:, :, k] = 1
    return m


def conv_forward(weight, y0, z0, dims, lo, hi, sigma):
    """The convolution machine, one channel block at a time: states (B, C, L),
    weight (C_out, C_in, K) as for conv1d (cross-correlation, padding (lo, hi))."""
    wc = weight * conv_mask(dims, weight.shape[2], weight.dtype)
    ys, zs = [], []
    for o, d in slices(dims):
        y = y0[:, o:o + d]
        if o > 0:
            y = y + F.conv1d(F.pad(torch.cat(zs, dim=1), (lo, hi)), wc[o:o + d, :o])
        ys.append(y)
        zs.append(z0[:, o:o + d] + sigma(y))
    return torch.cat(ys, dim=1), torch.cat(zs, dim=1)


def recur_forward(weight, y0, z0, dims, lag, tb, sigma):
    """The recurrent machine, one (time block, channel block) level at a time:
    a causal conv1d with lags 0..lag (kernel index lag − lag)."""
    wc = weight * recur_mask(dims, lag, tb, weight.dtype)
    y, z = y0.clone(), z0.clone()
    length = y0.shape[2]
    for t0 in range(0, length, tb):
        t1 = min(length, t0 + tb)
        for o, d in slices(dims):
            zp = F.pad(z[:, :, max(0, t0 - lag):t1], (max(0, lag - t0), 0))
            yi = y0[:, o:o + d, t0:t1] + F.conv1d(zp, wc[o:o + d])
            y[:, o:o + d, t0:t1] = yi
            z[:, o:o + d, t0:t1] = z0[:, o:o + d, t0:t1] + sigma(yi)
    return y, z


_SCRIPTED = {}


def scripted_loops():
    """The level loops above compiled by torch.jit.script, by machine (compiled on first use:
    torch is imported late). What TorchScript does not take is moved out of the loop: σ = tanh
    is written in (no function arguments), the blocks are a list of offsets (no generators), and
    the mask comes in as an argument (built once, as a module's buffer would be; the weight is
    still cleaned in every call). Every level machine has one; the graph layer has no loop."""
    if _SCRIPTED:
        return _SCRIPTED

    def conv(w: torch.Tensor, mask: torch.Tensor, y0: torch.Tensor, z0: torch.Tensor,
             offsets: List[int], pad: List[int]) -> Tuple[torch.Tensor, torch.Tensor]:
        """dense_forward (w of dim 2, pad unused), conv_forward and grid_forward (pad in
        F.pad's order): one loop, the level's product chosen by the weight's dim."""
        wc = w * mask
        ys: List[torch.Tensor] = []
        zs: List[torch.Tensor] = []
        for i in range(len(offsets) - 1):
            o, e = offsets[i], offsets[i + 1]
            y = y0[:, o:e]
            if o > 0 and w.dim() == 2:
                y = y + torch.cat(zs, dim=1) @ wc[:o, o:e]
            elif o > 0:
                z = F.pad(torch.cat(zs, dim=1), pad)
                if w.dim() == 3:
                    y = y + F.conv1d(z, wc[o:e, :o])
                elif w.dim() == 4:
                    y = y + F.conv2d(z, wc[o:e, :o])
                else:
                    y = y + F.conv3d(z, wc[o:e, :o])
            ys.append(y)
            zs.append(z0[:, o:e] + torch.tanh(y))
        return torch.cat(ys, dim=1), torch.cat(zs, dim=1)

    def recur(w: torch.Tensor, mask: torch.Tensor, y0: torch.Tensor, z0: torch.Tensor,
              offsets: List[int], lag: int, tb: int) -> Tuple[torch.Tensor, torch.Tensor]:
        wc = w * mask
        y, z = y0.clone(), z0.clone()
        length = y0.size(2)
        for t0 in range(0, length, tb):
            t1 = min(length, t0 + tb)
            for i in range(len(offsets) - 1):
                o, e = offsets[i], offsets[i + 1]
                zp = F.pad(z[:, :, max(0, t0 - lag):t1], [max(0, lag - t0), 0])
                yi = y0[:, o:e, t0:t1] + F.conv1d(zp, wc[o:e])
                y[:, o:e, t0:t1] = yi
                z[:, o:e, t0:t1] = z0[:, o:e, t0:t1] + torch.tanh(yi)
        return y, z

    _SCRIPTED.update(conv=torch.jit.script(conv), recur=torch.jit.script(recur))
    return _SCRIPTED


def dense_dual(w, slope, gy, gz, dims):
    """z̄ = g_z + ȳ W̃ᵀ, ȳ = g_y + slope ⊙ z̄, levels in reverse (float64 reference)."""
    wc = w * clean_mask(dims, w.dtype)
    yb, zb = torch.zeros_like(gy), torch.zeros_like(gz)
    for o, d in reversed(list(slices(dims))):
        end = o + d
        zb[:, o:end] = gz[:, o:end] + yb[:, end:] @ wc[o:end, end:].T
        yb[:, o:end] = gy[:, o:end] + slope[:, o:end] * zb[:, o:end]
    return yb, zb


def gamma(n, u):
    return n * u / (1 - n * u)


class Machine:
    """One row's machine in PyTorch's layout: states (B, N) or (B, N, L); the
    weight (N, N) for dense, (C_out, C_in, K) as conv1d's otherwise."""

    def __init__(self, r):
        self.r, self.dims, self.n = r, r["dims"], sum(r["dims"])
        self.grid = r["machine"] in CONV_ND
        if self.grid:
            pad = r["pad"]
            self.kernel = tuple(pad[2 * j] + pad[2 * j + 1] + 1 for j in range(len(pad) // 2))
            self.taps = int(np.prod(self.kernel))
        else:
            self.taps = {"dense": 1, "conv": r.get("lo", 0) + r.get("hi", 0) + 1,
                         "recur": r.get("lag", 0) + 1}[r["machine"]]

    def forward(self, w, y0, z0, sigma=None):
        sigma = sigma or torch.tanh
        r = self.r
        if r["machine"] == "dense":
            return dense_forward(w, y0, z0, self.dims, sigma)
        if r["machine"] == "conv":
            return conv_forward(w, y0, z0, self.dims, r["lo"], r["hi"], sigma)
        if self.grid:
            return grid_forward(w, y0, z0, self.dims, r["pad"], sigma)
        return recur_forward(w, y0, z0, self.dims, r["lag"], r["tb"], sigma)

    def linear(self, w, z):
        """L_W̃ z, all levels at once."""
        r = self.r
        if r["machine"] == "dense":
            return z @ (w * clean_mask(self.dims, w.dtype))
        if r["machine"] == "conv":
            return F.conv1d(F.pad(z, (r["lo"], r["hi"])),
                            w * conv_mask(self.dims, self.taps, w.dtype))
        if self.grid:
            return getattr(F, r["machine"])(F.pad(z, grid_pad(r["pad"])),
                                         w * conv_mask(self.dims, self.kernel, w.dtype))
        return F.conv1d(F.pad(z, (r["lag"], 0)), w * recur_mask(self.dims, r["lag"], r["tb"], w.dtype))

    def variants(self, dtype):
        """PyTorch at its best beside the plain loop (forward()): name → (forward(w, y0, z0), the
        memory format of the leaves and cotangents). "script": the loop compiled by
        torch.jit.script (scripted_loops()); for the grids also "channels_last"
        ("channels_last_3d"): the plain loop on channels-last states and weight, and the two
        together. (PyTorch 1.13 runs oneDNN's 2-D convolutions on them as they are, NHWC; its
        3-D ones on a contiguous copy, DNNL_VERBOSE "abcde": the plain loop's sums, bit for
        bit, and copies more.)"""
        r, loops, plain = self.r, scripted_loops(), torch.contiguous_format
        offsets = [0] + list(itertools.accumulate(self.dims))
        if r["machine"] == "dense":
            mask = clean_mask(self.dims, dtype)
            return {"script": (lambda w, y0, z0: loops["conv"](w, mask, y0, z0, offsets, []), plain)}
        if r["machine"] == "recur":
            mask = recur_mask(self.dims, r["lag"], r["tb"], dtype)
            return {"script": (lambda w, y0, z0: loops["recur"](w, mask, y0, z0, offsets, r["lag"],
                                                                r["tb"]), plain)}
        if r["machine"] == "conv":
            mask, pad = conv_mask(self.dims, self.taps, dtype).contiguous(), [r["lo"], r["hi"]]
            return {"script": (lambda w, y0, z0: loops["conv"](w, mask, y0, z0, offsets, pad),
                               plain)}
        last = torch.channels_last if len(self.kernel) == 2 else torch.channels_last_3d
        name, pad = str(last).split(".")[-1], list(grid_pad(r["pad"]))
        masks = {f: conv_mask(self.dims, self.kernel, dtype).contiguous(memory_format=f)
                 for f in [plain, last]}
        return {"script": (lambda w, y0, z0: loops["conv"](w, masks[plain], y0, z0, offsets, pad),
                           plain),
                name: (self.forward, last),
                "script+" + name: (lambda w, y0, z0: loops["conv"](w, masks[last], y0, z0,
                                                                   offsets, pad), last)}

    # Our layout ↔ PyTorch's.
    # States (B, positions..., N) ↔ (B, N, positions...); W (taps, N_in, N_out)
    # ↔ (N_out, N_in, kernel...).
    def state_shape(self):
        r = self.r
        if r["machine"] == "dense":
            return (r["batch"], self.n)
        return (r["batch"], *r.get("extents", [r.get("length")]), self.n)

    def state_to_torch(self, x):
        return x if x.ndim == 2 else np.moveaxis(x, -1, 1)

    def weight_to_torch(self, w):
        if self.r["machine"] == "dense":
            return w
        if self.grid:
            return np.transpose(w.reshape(self.kernel + w.shape[1:]),
                                (len(self.kernel) + 1, len(self.kernel)) + tuple(range(len(self.kernel))))
        return np.transpose(w[::-1] if self.r["machine"] == "recur" else w, (2, 1, 0))


def check_forward(mach, inp, out, u, sigma_error):
    """Max of |ours − reference| / bound over the forward outputs (≤ 1 passes):
    the forward bound of docs/tolerances.md, "Kernels", with the largest
    fan-in (taps × N) for every output."""
    t = {k: torch.from_numpy(np.ascontiguousarray(v)).double() for k, v in {**inp, **out}.items()}
    y, z = mach.forward(t["w"], t["y0"], t["z0"])
    absw = t["w"].abs()
    alpha = gamma(mach.taps * mach.n + 1, u) * (t["y0"].abs() + mach.linear(absw, t["z"].abs()))
    beta = u * t["z"].abs() + sigma_error[0] * u
    ey, ez = mach.forward(absw, alpha, beta, sigma=lambda x: x)
    worst = 0.0
    for name, ref, bound in [("y", y, ey), ("z", z, ez)]:
        assert float(((t[name] - ref).abs() - bound).max()) <= 0, f"{name}: outside its bound"
        worst = max(worst, float(((t[name] - ref).abs() / bound).max()))
    return worst


def check_dense_backward(dims, inp, out, u, sigma_error):
    """The same for the dense dual sweep and gradient, at our own state (y, z)."""
    f64 = {k: torch.from_numpy(v).double() for k, v in {**inp, **out}.items()}
    w, n, batch = f64["w"], inp["w"].shape[0], inp["y0"].shape[0]
    absw = w.abs() * clean_mask(dims, w.dtype)
    cd = sigma_error[1]
    slope = 1 - torch.tanh(f64["y"]) ** 2
    yb, zb = dense_dual(w, slope, f64["gy"], f64["gz"], dims)
    dw = (f64["z"].T @ yb) * clean_mask(dims, w.dtype)
    alpha = gamma(n + 1, u) * (f64["gz"].abs() + f64["ybar"].abs() @ absw.T)
    beta = gamma(2, u) * (f64["gy"].abs() + (slope.abs() + cd * u) * f64["zbar"].abs()) \
        + cd * u * f64["zbar"].abs()
    eyb, ezb = dense_dual(absw, torch.ones_like(slope), beta, alpha, dims)
    edw = f64["z"].abs().T @ (gamma(batch, u) * f64["ybar"].abs() + eyb) * clean_mask(dims, w.dtype)
    worst = 0.0
    for name, ref, bound in [("ybar", yb, eyb), ("zbar", zb, ezb), ("dw", dw, edw)]:
        assert float(((f64[name] - ref).abs() - bound).max()) <= 0, f"{name}: outside its bound"
        worst = max(worst, float(((f64[name] - ref).abs() / bound.clamp_min(1e-300)).max()))
    return worst


def relative_deviation(a, b):
    """max |a − b| / max |b|."""
    return float((a - b).abs().max() / b.abs().max().clamp_min(1e-300))


# "wall": elapsed time; "cpu": the process's CPU time (all its threads), which
# a loaded machine does not inflate by descheduling; with several threads it
# is the work of a call, not its duration.
CLOCK = "wall"


def time_calls(f, budget, before=None):
    """Median and minimum microseconds of single calls of f (at least 11, until
    `budget` seconds) on CLOCK, after two warm-up calls; `before` runs untimed
    first."""
    clock = time.process_time if CLOCK == "cpu" else time.perf_counter
    for _ in range(2):
        if before:
            before()
        f()
    us, start = [], time.perf_counter()
    while len(us) < 11 or time.perf_counter() - start < budget:
        if before:
            before()
        t0 = clock()
        f()
        us.append((clock() - t0) * 1e6)
    return statistics.median(us), min(us)


def ours_min(result, key):
    """Our minimum for a pass on CLOCK."""
    return result[key]["min_cpu_us" if CLOCK == "cpu" else "min_us"]


def torch_peak(dtype, budget, size=1024):
    a, b = torch.rand(size, size, dtype=dtype), torch.rand(size, size, dtype=dtype)
    _, best = time_calls(lambda: torch.mm(a, b), budget)
    return 2 * size ** 3 / best * 1e-3  # GFLOP/s


def run_ours(exe, args):
    res = subprocess.run([exe] + [str(a) for a in args], capture_output=True, text=True, check=True)
    return json.loads(res.stdout)


def row(exe, r, threads, dtype, budget, seed=1, layout="auto"):
    torch.set_num_threads(threads)
    mach, n, batch = Machine(r), sum(r["dims"]), r["batch"]
    g = np.random.default_rng(seed)
    npdt = np.float32 if dtype == torch.float32 else np.float64
    # Our layout: states (B, N) or (B, L, N); W (N, N) or (taps, N_in, N_out).
    state = mach.state_shape()
    wshape = (n, n) if r["machine"] == "dense" else (mach.taps, n, n)
    glorot = np.sqrt(6 / (2 * mach.taps * n))
    inp = {"w": g.uniform(-glorot, glorot, wshape).astype(npdt)}
    for k in ["y0", "z0", "gy", "gz"]:
        inp[k] = g.uniform(-1, 1, state).astype(npdt)
    args = [r["machine"], "--dims", ",".join(map(str, r["dims"])), "--batch", batch,
            "--dtype", "float32" if dtype == torch.float32 else "float64", "--threads", threads,
            "--budget", budget]
    if r["machine"] == "conv":
        args += ["--length", r["length"], "--pad-lo", r["lo"], "--pad-hi", r["hi"]]
    if r["machine"] == "recur":
        args += ["--length", r["length"], "--max-lag", r["lag"], "--timeblock", r["tb"]]
    if mach.grid:
        args[0] = "conv"
        args += ["--extents", ",".join(map(str, r["extents"])), "--pad", ",".join(map(str, r["pad"]))]
    if r["machine"] != "dense":
        args += ["--layout", layout]
    with tempfile.TemporaryDirectory() as io:
        for k, v in inp.items():
            v.tofile(os.path.join(io, k + ".bin"))
        ours = run_ours(exe, args + ["--io", io])
        shapes = {"y": state, "z": state, "ybar": state, "zbar": state, "dw": wshape}
        out = {k: np.fromfile(os.path.join(io, k + ".bin"), dtype=npdt).reshape(s)
               for k, s in shapes.items()}
    # Everything in PyTorch's layout from here on.
    inp = {k: (mach.weight_to_torch(v) if k == "w" else mach.state_to_torch(v))
           for k, v in inp.items()}
    out = {k: (mach.weight_to_torch(v) if k == "dw" else mach.state_to_torch(v))
           for k, v in out.items()}
    u = float(np.finfo(npdt).eps) / 2 + float(np.finfo(np.float64).eps) / 2
    worst = check_forward(mach, inp, out, u, ours["sigma_error"])
    if r["machine"] == "dense":
        worst = max(worst, check_dense_backward(r["dims"], inp, out, u, ours["sigma_error"]))

    t = {k: torch.from_numpy(np.ascontiguousarray(v)) for k, v in inp.items()}
    load = os.getloadavg()[0]
    tf, tb, (ty, tz), (tyb, tzb, tdw) = torch_pass(mach.forward, t, torch.contiguous_format,
                                                   budget)

    def checked(yz, grads):
        """PyTorch's outputs, and their max err/bound: the forward outputs against the forward
        bound as ours are (and for dense, the dual and gradient against theirs)."""
        outputs = {k: v.detach().contiguous()
                   for k, v in zip(["y", "z", "ybar", "zbar", "dw"], yz + grads)}
        arrays = {k: v.numpy() for k, v in outputs.items()}
        vworst = check_forward(mach, inp, arrays, u, ours["sigma_error"])
        if r["machine"] == "dense":
            vworst = max(vworst, check_dense_backward(r["dims"], inp, arrays, u,
                                                      ours["sigma_error"]))
        return outputs, vworst

    # PyTorch at its best: each variant timed as the plain loop is, checked as above, and all its
    # outputs against the plain loop's.
    plain, pworst = checked((ty, tz), (tyb, tzb, tdw))
    variants = {"plain": dict(fwd=tf, bwd=tb, worst=pworst, dev_plain=0.0)}
    for name, (forward, fmt) in mach.variants(dtype).items():
        vf, vb, yz, grads = torch_pass(forward, t, fmt, budget)
        outputs, vworst = checked(yz, grads)
        dev = max(relative_deviation(v.double(), plain[k].double()) for k, v in outputs.items())
        assert dev <= VARIANT_TOLERANCE * u, f"PyTorch {name}: {dev:.1e} from the plain loop"
        variants[name] = dict(fwd=vf, bwd=vb, worst=vworst, dev_plain=dev)
    f64 = {k: v.double() for k, v in t.items()}
    y64, z64 = mach.forward(f64["w"], f64["y0"], f64["z0"])
    o = {k: torch.from_numpy(np.ascontiguousarray(v)).double() for k, v in out.items()}
    dev_torch = max(relative_deviation(ty.double(), y64), relative_deviation(tz.double(), z64))
    dev_ours = max(relative_deviation(o["y"], y64), relative_deviation(o["z"], z64))
    agree = max(relative_deviation(o[k], v.detach().double())
                for k, v in [("y", ty), ("z", tz), ("ybar", tyb), ("zbar", tzb), ("dw", tdw)])
    of, od, og = (ours_min(ours, k) for k in ["forward", "dual", "gradient"])
    return dict(load=load, machine=r["machine"], size=r["size"], threads=threads, torch_fwd=tf, ours_fwd=of,
                torch_bwd=tb, ours_dual=od, ours_grad=og, flops=ours["flops_per_pass"],
                layout=ours["layout"],
                worst=worst, dev_torch=dev_torch, dev_ours=dev_ours, agree=agree,
                flags=ours["flags"], **best_of(variants))


# A variant of the PyTorch loop computes what the plain loop does when each of its outputs is
# within VARIANT_TOLERANCE · u of the plain loop's, relative to its largest element
# (relative_deviation). The two sum in different orders, which moved them by at most 9e-6 (150 u
# in float32; conv2d large, channels_last: oneDNN's NHWC kernels, W̄ summed over 32768
# positions); a variant that computes something else (a lost mask, a mixed-up layout) is off by
# O(1). The forward outputs are held to the forward bound as well (check_forward), as ours are.
VARIANT_TOLERANCE = 1e4


def torch_pass(forward, t, fmt, budget):
    """PyTorch's forward(w, y0, z0) and autograd's backward for (y0, z0, w), timed by time_calls
    with the leaves and cotangents of t in memory format fmt: (forward µs, backward µs, (y, z),
    (ȳ, z̄, W̄))."""
    leaves = {k: t[k].clone(memory_format=fmt).requires_grad_(True) for k in ["w", "y0", "z0"]}
    cotangents = [t[k].clone(memory_format=fmt) for k in ["gy", "gz"]]
    state = {}

    def fwd():
        return forward(leaves["w"], leaves["y0"], leaves["z0"])

    def build():
        state["yz"] = fwd()

    def bwd():
        return torch.autograd.grad(state["yz"], [leaves["y0"], leaves["z0"], leaves["w"]],
                                   cotangents)

    _, tf = time_calls(fwd, budget)
    _, tb = time_calls(bwd, budget, before=build)
    build()
    return tf, tb, tuple(state["yz"]), bwd()


# The columns of a row that are times: their minimum over --repeat runs.
TIMES = ("torch_fwd", "ours_fwd", "torch_bwd", "ours_dual", "ours_grad")


def merge_runs(runs):
    """One row from the runs of a row (alternating ours and PyTorch's, --repeat): each side's
    minimum of each time, per variant for PyTorch's, the largest error and deviations, and the
    highest load seen."""
    first = runs[0]
    merged = dict(first, **{k: min(r[k] for r in runs) for k in TIMES})
    merged.update({k: max(r[k] for r in runs) for k in ("worst", "dev_torch", "dev_ours", "agree",
                                                         "load")})
    variants = {}
    for name, v in first["variants"].items():
        vs = [r["variants"][name] for r in runs]
        variants[name] = dict(v, fwd=min(x["fwd"] for x in vs), bwd=min(x["bwd"] for x in vs),
                              dev_plain=max(x["dev_plain"] for x in vs))
    merged.update(best_of(variants))
    return merged


def best_of(variants):
    """The row's columns for PyTorch at its best over its variants (name → times): the fastest
    forward, and the fastest forward + backward of one variant, each with its name."""
    fwd = min(variants, key=lambda k: variants[k]["fwd"])
    fb = min(variants, key=lambda k: variants[k]["fwd"] + variants[k]["bwd"])
    return dict(variants=variants, torch_best_fwd=variants[fwd]["fwd"], torch_best_fwd_variant=fwd,
                torch_best_fb=variants[fb]["fwd"] + variants[fb]["bwd"],
                torch_best_fb_variant=fb)


# The rows where the matrix products dominate: the targets on the share of
# the peak apply to them.
COMPUTE_BOUND = {("dense", "large"), ("conv", "medium"), ("conv", "large"), ("recur", "medium"),
                 ("recur", "large")}


def summary(rows, peaks):
    """The table's extremes, against the targets: ≥ 1.5× PyTorch forward and
    forward+backward on every row (and the same ratios against PyTorch's fastest
    variant), dual ≤ 1.1× forward, ≥ 70 % of the peak on the compute-bound rows
    for every pass, two threads ≥ 1.8× one."""
    name = lambda r: f"{r['machine']} {r['size']} {r['threads']}t"
    ratios = [(r["torch_fwd"] / r["ours_fwd"], name(r), "fwd") for r in rows]
    ratios += [((r["torch_fwd"] + r["torch_bwd"]) / (r["ours_fwd"] + r["ours_dual"] + r["ours_grad"]),
                name(r), "f+b") for r in rows]
    best = [(r["torch_best_fwd"] / r["ours_fwd"], name(r), "fwd") for r in rows]
    best += [(r["torch_best_fb"] / (r["ours_fwd"] + r["ours_dual"] + r["ours_grad"]), name(r), "f+b")
             for r in rows]
    worst = min(ratios)
    dual = max((r["ours_dual"] / r["ours_fwd"], name(r)) for r in rows)
    shares = [(100 * r["flops"] / r[f"ours_{p}"] * 1e-3 / peaks[r["threads"]], name(r), p)
              for r in rows if (r["machine"], r["size"]) in COMPUTE_BOUND
              for p in ["fwd", "dual", "grad"]]
    print(f"\nworst torch/ours: {worst[0]:.2f} ({worst[1]}, {worst[2]}; target >= 1.5); "
          f"rows below 1.5: {sum(x[0] < 1.5 for x in ratios)} of {len(ratios)}")
    low = min(best)
    print(f"worst best torch/ours (PyTorch's fastest variant): {low[0]:.2f} ({low[1]}, {low[2]}); "
          f"rows below 1.5: {sum(x[0] < 1.5 for x in best)} of {len(best)}")
    print(f"largest ours dual/fwd: {dual[0]:.2f} ({dual[1]}; target <= 1.1)")
    if shares:
        low = min(shares)
        print(f"lowest share of peak on the compute-bound rows: {low[0]:.0f} % ({low[1]}, {low[2]}; "
              f"target >= 70 %); passes below 70 %: "
              + (", ".join(f"{x[1]} {x[2]} {x[0]:.0f} %" for x in sorted(shares) if x[0] < 70)
                 or "none"))


def graph_row(exe, r, threads, dtype, budget, seed=1):
    """The graph layer: ours (graph kernel) against PyTorch's sparse path,
    H = torch.sparse.mm(A, X) over the nodes, then H @ W, and autograd."""
    torch.set_num_threads(threads)
    g = np.random.default_rng(seed)
    npdt = np.float32 if dtype == torch.float32 else np.float64
    n, (ci, co), batch = r["nodes"], r["channels"], r["batch"]
    ends = g.integers(0, n, size=(r["edges"], 2)).astype(np.int64)
    u = np.concatenate([ends[:, 0], np.arange(n)])
    v = np.concatenate([ends[:, 1], np.arange(n)])
    deg = np.bincount(v, minlength=n)
    inp = {"w": g.uniform(-np.sqrt(3 / ci), np.sqrt(3 / ci), (ci, co)).astype(npdt),
           "phi": g.uniform(-1, 1, (batch, n, ci)).astype(npdt),
           "g": g.uniform(-1, 1, (batch, n, co)).astype(npdt)}
    args = ["graph", "--nodes", n, "--edges", r["edges"], "--channels", f"{ci},{co}",
            "--batch", batch, "--dtype", "float32" if dtype == torch.float32 else "float64",
            "--threads", threads, "--budget", budget]
    with tempfile.TemporaryDirectory() as io:
        ends.tofile(os.path.join(io, "edges.bin"))
        for k, x in inp.items():
            x.tofile(os.path.join(io, k + ".bin"))
        ours = run_ours(exe, args + ["--io", io])
        out = {k: np.fromfile(os.path.join(io, k + ".bin"), dtype=npdt).reshape(s)
               for k, s in {"out": (batch, n, co), "back": (batch, n, ci), "dw": (ci, co)}.items()}

    def adjacency(dt):
        a = torch.sparse_coo_tensor(np.stack([v, u]), (1.0 / deg[v]).astype(dt), (n, n))
        return a.coalesce()

    def layer(a, w, x):
        """(B, N, C_in) → (B, N, C_out): aggregate over the nodes, then the channels."""
        h = torch.sparse.mm(a, x.permute(1, 0, 2).reshape(n, batch * ci))
        return h.reshape(n, batch, ci).permute(1, 0, 2) @ w

    t = {k: torch.from_numpy(x) for k, x in inp.items()}
    a = adjacency(npdt)
    w, x = t["w"].clone().requires_grad_(True), t["phi"].clone().requires_grad_(True)
    state = {}

    def fwd():
        return layer(a, w, x)

    def build():
        state["out"] = fwd()

    def bwd():
        return torch.autograd.grad(state["out"], [x, w], t["g"])

    load = os.getloadavg()[0]
    _, tf = time_calls(fwd, budget)
    _, tb = time_calls(bwd, budget, before=build)
    build()
    tback, tdw = bwd()
    # Against float64; the bound: every output sums deg(v) · C_in terms, each
    # through at most deg(v) + C_in + 1 roundings (src/pm/kernels/graph_conv.hpp).
    f64 = {k: x.double() for k, x in t.items()}
    a64 = adjacency(np.float64)
    ref = layer(a64, f64["w"], f64["phi"])
    u_ = float(np.finfo(npdt).eps) / 2 + float(np.finfo(np.float64).eps) / 2
    bound = gamma(int(deg.max()) + ci + 1, u_) * layer(a64, f64["w"].abs(), f64["phi"].abs())
    ours_out = torch.from_numpy(out["out"]).double()
    assert float(((ours_out - ref).abs() - bound).max()) <= 0, "graph forward outside its bound"
    worst = float(((ours_out - ref).abs() / bound.clamp_min(1e-300)).max())
    agree = max(relative_deviation(ours_out, fwd().detach().double()),
                relative_deviation(torch.from_numpy(out["back"]).double(), tback.double()),
                relative_deviation(torch.from_numpy(out["dw"]).double(), tdw.double()))
    of, od, og = (ours_min(ours, k) for k in ["forward", "dual", "gradient"])
    return dict(load=load, machine=r["machine"], size=r["size"], threads=threads, torch_fwd=tf,
                ours_fwd=of, torch_bwd=tb, ours_dual=od, ours_grad=og,
                flops=ours["flops_per_pass"], worst=worst,
                dev_torch=relative_deviation(fwd().detach().double(), ref),
                dev_ours=relative_deviation(ours_out, ref), agree=agree, flags=ours["flags"],
                **best_of({"plain": dict(fwd=tf, bwd=tb, worst=None, dev_plain=0.0)}))


def openblas_core():
    """The kernels OpenBLAS (PyTorch's BLAS here) chose, or "unknown"."""
    try:
        blas = ctypes.CDLL("libblas.so.3")
        blas.openblas_get_corename.restype = ctypes.c_char_p
        return blas.openblas_get_corename().decode()
    except (OSError, AttributeError):
        return "unknown"


# OpenBLAS's cores (openblas_get_corename(), lower case) with AVX-512 kernels, and with AVX2
# kernels or better.
AVX512_CORES = {"skylakex", "cooperlake", "sapphirerapids"}
AVX2_CORES = AVX512_CORES | {"haswell", "zen"}
AVX512_FLAGS = {"avx512f", "avx512bw", "avx512vl", "avx512dq", "avx512cd"}  # SkylakeX's


def cpu_flags(path="/proc/cpuinfo"):
    """The CPU's flags as /proc/cpuinfo lists them (empty when it cannot be read)."""
    try:
        with open(path) as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def openblas_pin(flags, chosen):
    """The OPENBLAS_CORETYPE that gives OpenBLAS the kernels of the CPU's instruction set (flags)
    when the core it chose by itself (chosen, None when libblas.so.3 is not OpenBLAS) is for an
    older one, else None. OpenBLAS 0.3.21 does not know the CPUs newer than it: it chooses
    Haswell on an AMD EPYC with AVX-512 (family 26), Prescott (SSE3) on others."""
    if not chosen:
        return None
    if AVX512_FLAGS <= flags and chosen.lower() not in AVX512_CORES:
        return "SkylakeX"
    if {"avx2", "fma"} <= flags and chosen.lower() not in AVX2_CORES:
        return "Haswell"
    return None


def probe_openblas_core():
    """openblas_get_corename() of libblas.so.3 as a new process loads it, or None when it is not
    OpenBLAS. A subprocess, because OpenBLAS reads OPENBLAS_CORETYPE once, when it is loaded:
    loaded here, it would keep its own choice."""
    code = ("import ctypes\n"
            "f = ctypes.CDLL('libblas.so.3').openblas_get_corename\n"
            "f.restype = ctypes.c_char_p\n"
            "print(f().decode())")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    return (res.stdout.strip() or None) if res.returncode == 0 else None


def loaded_libraries(maps="/proc/self/maps"):
    """The files mapped into this process (links resolved), in the order of their first mapping."""
    try:
        with open(maps) as f:
            paths = [line.split(None, 5)[5].strip() for line in f if len(line.split(None, 5)) == 6]
    except OSError:
        return []
    return list(dict.fromkeys(p for p in paths if p.startswith("/")))


def classify_blas(paths):
    """The BLAS that libblas.so.3 is among the loaded files `paths` (loaded_libraries()), as
    (kind, path): "reference" for the netlib reference BLAS (Debian's libblas3,
    .../blas/libblas.so.3.11.0), "openblas", "blis", "atlas" or "mkl" for the libblas.so.3 of
    Debian's alternatives in .../openblas-openmp/ (-pthread, -serial), .../blis-openmp/, ...;
    (None, None) when no libblas.so.3 is loaded (a PyTorch with its own BLAS). One libblas.so.3
    is loaded at most (it is one soname); under LD_PRELOAD of the reference, PyTorch's
    libopenblas may be mapped too (through liblapack.so.3) while the reference serves sgemm_."""
    for p in paths:
        if not os.path.basename(p).startswith("libblas.so"):
            continue
        parent = os.path.basename(os.path.dirname(p))
        return next((k for k in ["openblas", "blis", "atlas", "mkl"] if parent.startswith(k)),
                    "reference"), p
    return None, None


def torch_blas():
    """classify_blas() of this process after one torch.mm (PyTorch built with MKL has it inside:
    "mkl")."""
    torch.mm(torch.ones(64, 64), torch.ones(64, 64))
    if "BLAS_INFO=mkl" in torch.__config__.show():
        return "mkl", "linked into PyTorch"
    return classify_blas(loaded_libraries())


def refuse(message):
    """One line on stderr, exit 2."""
    print(f"compare_pytorch.py: {message}", file=sys.stderr)
    sys.exit(2)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build-kernels", help="CMake build directory")
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--dtype", choices=["float32", "float64"], default="float32")
    ap.add_argument("--budget", type=float, default=1.0, help="seconds of timing per pass")
    ap.add_argument("--clock", choices=["wall", "cpu"], default="wall",
                    help="time on the elapsed clock or on the CPU clock (summed over threads)")
    ap.add_argument("--isa", choices=["native", "avx2"], default="native",
                    help="avx2: hold PyTorch to AVX2 and require a kernel build for AVX2")
    ap.add_argument("--layout", choices=["auto", "channels_last", "channels_first"],
                    default="auto", help="the kernels' state layout (SequencePlan::channels_first; "
                    "the inputs are converted outside the timing); auto: channel-major where the "
                    "plan takes the direct path, position-major elsewhere")
    ap.add_argument("--only", nargs="*",
                    help="machines to run (dense, conv, recur, conv2d, conv3d, graph)")
    ap.add_argument("--repeat", type=int, default=1,
                    help="runs of each row, ours and PyTorch's alternating, each side's minimum "
                    "kept (and of the peak): on a shared host one run can move either side by a "
                    "fifth")
    a = ap.parse_args()
    if a.repeat < 1:
        refuse(f"--repeat is {a.repeat}, expected at least 1")
    global CLOCK
    CLOCK = a.clock
    exe = os.path.join(a.build, "bench", "pm_bench_machine")
    if not os.access(exe, os.X_OK):
        refuse(f"{exe} not found: build the target pm_bench_machine in {a.build}")
    build = run_ours(exe, ["isa"])
    if a.isa == "avx2" and build["isa"] == "avx512":
        refuse(f"--isa avx2, but {exe} is compiled for AVX-512 ({build['flags']}); configure "
               f"it with -DPM_NATIVE=OFF -DCMAKE_CXX_FLAGS=-march=haswell")
    user_core = os.environ.get("OPENBLAS_CORETYPE")
    os.environ.update(ISA_ENVIRONMENT.get(a.isa, {}))
    # --isa native: OpenBLAS's kernels for the CPU's instruction set, pinned when OpenBLAS chooses
    # older ones (it does not know the CPU); a core set by the caller is kept, and noted.
    flags, core_note = cpu_flags(), ""
    if a.isa == "native" and user_core is None:
        chosen = probe_openblas_core()
        pin = openblas_pin(flags, chosen)
        if pin:
            os.environ["OPENBLAS_CORETYPE"] = pin
            core_note = f" (pinned: OpenBLAS chose {chosen} on this CPU)"
    elif a.isa == "native":
        better = openblas_pin(flags, user_core)
        core_note = f" (OPENBLAS_CORETYPE={user_core} set by the caller" + (
            f"; this CPU has {better}'s instruction set" if better else "") + ")"
    import_numerics()
    kind, path = torch_blas()
    if kind == "reference":
        missing = ", no openblas_get_corename" if openblas_core() == "unknown" else ""
        refuse(f"PyTorch's matrix product runs on the reference BLAS ({path}{missing}), about "
               f"50x slower than OpenBLAS, which makes the comparison meaningless; install "
               f"OpenBLAS: apt-get install libopenblas0-openmp (scripts/install-deps.sh does)")
    dtype = torch.float32 if a.dtype == "float32" else torch.float64
    capability = next((line.split(":")[1].strip() for line in torch.__config__.show().splitlines()
                       if "CPU capability usage" in line), "unknown")
    print(f"torch {torch.__version__}, {platform.processor() or platform.machine()}, "
          f"load average {os.getloadavg()[0]:.2f} at start")
    print(f"instruction sets: kernels {build['isa']} ({build['flags']}); PyTorch ATen {capability}, "
          f"OpenBLAS core {openblas_core()}"
          + core_note
          + "".join(f", {k}={v}" for k, v in ISA_ENVIRONMENT.get(a.isa, {}).items()))
    peaks = {}
    for th in a.threads:
        torch.set_num_threads(th)
        for _ in range(a.repeat):
            eig = run_ours(exe, ["gemm", "--size", 1024, "--dtype", a.dtype, "--threads", th,
                                 "--budget", a.budget])
            peaks[th] = max(peaks.get(th, 0), torch_peak(dtype, a.budget),
                            eig["flops_per_pass"] / ours_min(eig, "gemm") * 1e-3)
        print(f"matrix-product peak, {th} thread(s), 1024³ {a.dtype}: {peaks[th]:.1f} GFLOP/s "
              f"(max of torch.mm and Eigen)")
    rows = []
    for r in ROWS + GRAPHS:
        if a.only and r["machine"] not in a.only:
            continue
        for th in a.threads:
            if th > 1 and r["size"] != "large":
                continue
            run = (lambda: graph_row(exe, r, th, dtype, a.budget)) if r["machine"] == "graph" \
                else (lambda: row(exe, r, th, dtype, a.budget, layout=a.layout))
            rows.append(merge_runs([run() for _ in range(a.repeat)]))
    layouts = {}
    for r in rows:
        if "layout" in r:
            layouts.setdefault(r["layout"], []).append(f"{r['machine']} {r['size']}")
    print("kernel state layouts (--layout " + a.layout + "): " + "; ".join(
        f"{lay}: {', '.join(dict.fromkeys(rs))}" for lay, rs in layouts.items()))
    print(f"kernel flags: {rows[0]['flags']}; dtype {a.dtype}; times are minima in µs on the "
          f"{CLOCK} clock" + (f", each side's over {a.repeat} alternating runs" if a.repeat > 1 else "")
          + "; load is the 1-minute load average at the start of the row (the highest of its runs)\n")
    print("| machine | size | thr | torch fwd | ours fwd | torch/ours | torch bwd | ours dual "
          "| ours grad | torch/ours bwd | torch/ours f+b | ours dual/fwd | ours fwd GFLOP/s "
          "(% peak) | torch fwd GFLOP/s (% peak) | max err/bound | dev ours | dev torch | load "
          "| torch best fwd | best/ours fwd | torch best f+b | best/ours f+b |")
    print("|" + "---|" * 22)
    for r in rows:
        ob = r["ours_dual"] + r["ours_grad"]
        gf_o = r["flops"] / r["ours_fwd"] * 1e-3
        gf_t = r["flops"] / r["torch_fwd"] * 1e-3
        pk = peaks[r["threads"]]
        print(f"| {r['machine']} | {r['size']} | {r['threads']} | {r['torch_fwd']:.1f} | "
              f"{r['ours_fwd']:.1f} | {r['torch_fwd'] / r['ours_fwd']:.1f} | {r['torch_bwd']:.1f} | "
              f"{r['ours_dual']:.1f} | {r['ours_grad']:.1f} | {r['torch_bwd'] / ob:.1f} | "
              f"{(r['torch_fwd'] + r['torch_bwd']) / (r['ours_fwd'] + ob):.1f} | "
              f"{r['ours_dual'] / r['ours_fwd']:.2f} | {gf_o:.1f} ({100 * gf_o / pk:.0f}%) | "
              f"{gf_t:.1f} ({100 * gf_t / pk:.0f}%) | {r['worst']:.2g} | {r['dev_ours']:.1e} | "
              f"{r['dev_torch']:.1e} | {r['load']:.1f} | {r['torch_best_fwd']:.1f} "
              f"({r['torch_best_fwd_variant']}) | {r['torch_best_fwd'] / r['ours_fwd']:.1f} | "
              f"{r['torch_best_fb']:.1f} ({r['torch_best_fb_variant']}) | "
              f"{r['torch_best_fb'] / (r['ours_fwd'] + ob):.1f} |")
    if any(len(r["variants"]) > 1 for r in rows):
        print("\nPyTorch's variants (plain: the loop above; script: torch.jit.script of the loop; "
              "channels_last(_3d): channels-last states and weight), minima in µs; max err/bound "
              "as above; dev plain: max relative difference from the plain loop's outputs\n")
        print("| machine | size | thr | variant | fwd | bwd | f+b | max err/bound | dev plain |")
        print("|" + "---|" * 9)
        for r in (r for r in rows if len(r["variants"]) > 1):  # not the graph rows: no variants
            for name, v in r["variants"].items():
                print(f"| {r['machine']} | {r['size']} | {r['threads']} | {name} | {v['fwd']:.1f} | "
                      f"{v['bwd']:.1f} | {v['fwd'] + v['bwd']:.1f} | {v['worst']:.2g} | "
                      f"{v['dev_plain']:.1e} |")
    one = {(r["machine"], r["size"]): r for r in rows if r["threads"] == 1}
    multi = [r for r in rows if r["threads"] > 1 and (r["machine"], r["size"]) in one]
    if multi and CLOCK == "cpu":
        print("\n(no speed-up table: the CPU clock sums the threads' time)")
    elif multi:
        print("\n| machine | size | thr | ours f+d+g speed-up | torch f+b speed-up |")
        print("|---|---|---|---|---|")
        for r in multi:
            o = one[(r["machine"], r["size"])]
            ours = lambda x: x["ours_fwd"] + x["ours_dual"] + x["ours_grad"]
            theirs = lambda x: x["torch_fwd"] + x["torch_bwd"]
            print(f"| {r['machine']} | {r['size']} | {r['threads']} | {ours(o) / ours(r):.2f} | "
                  f"{theirs(o) / theirs(r):.2f} |")
    summary(rows, peaks)
    print(f"\nload average {os.getloadavg()[0]:.2f} at end; ours vs torch, max relative "
          f"difference over all outputs: {max(r['agree'] for r in rows):.1e}")


if __name__ == "__main__":
    main()
