#!/usr/bin/python3
"""The cost of a call through pmach.torch, against the raw C++ kernel and the
same machine written as a PyTorch loop (docs/performance.md, "pmach.torch
call overhead").

Per row: the median time of one forward call and one backward call of
  - the kernel alone, timed in C++ by bench/pm_bench_machine (forward; dual
    sweep + weight gradient);
  - the pmach.torch module: module(y0, z0), then torch.autograd.grad of (y, z)
    with respect to y0, z0 and the weight (the same dual sweep + gradient);
  - the PyTorch loop of bench/compare_pytorch.py (a loop over the levels,
    autograd for the backward).
Overhead = pmach.torch − kernel: conversion, checks, autograd bookkeeping.

Usage (from the repository root, after `ninja -C build pmach_python pm_bench_machine`):
    PYTHONPATH=build/python /usr/bin/python3 python/bench/overhead.py --build build
"""
import argparse
import os
import pathlib
import platform
import sys

# One thread on both sides; OpenMP reads this when the extension is loaded.
os.environ["OMP_NUM_THREADS"] = "1"

import torch  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))
import compare_pytorch as cp  # noqa: E402

import pmach.torch as pt  # noqa: E402

SIZES = {("dense", "small"), ("dense", "medium"), ("dense", "large"), ("conv", "small"),
         ("conv", "medium"), ("recur", "small"), ("recur", "medium")}


def module_of(r):
    if r["machine"] == "dense":
        return pt.DenseMachine(r["dims"], "tanh")
    if r["machine"] == "conv":
        return pt.ConvMachine(r["dims"], "tanh", r["length"], [(r["lo"], r["hi"])])
    return pt.RecurMachine(r["dims"], "tanh", r["length"], r["lag"], r["tb"])


def measure(exe, r, budget):
    n, batch = sum(r["dims"]), r["batch"]
    args = [r["machine"], "--dims", ",".join(map(str, r["dims"])), "--batch", batch,
            "--dtype", "float32", "--threads", 1, "--budget", budget]
    if r["machine"] == "conv":
        args += ["--length", r["length"], "--pad-lo", r["lo"], "--pad-hi", r["hi"]]
    if r["machine"] == "recur":
        args += ["--length", r["length"], "--max-lag", r["lag"], "--timeblock", r["tb"]]
    ours = cp.run_ours(exe, args)
    kernel_fwd = ours["forward"]["median_us"]
    kernel_bwd = ours["dual"]["median_us"] + ours["gradient"]["median_us"]

    module = module_of(r)
    state = (batch, n) if r["machine"] == "dense" else (batch, r["length"], n)
    y0, z0 = (torch.rand(state).requires_grad_() for _ in range(2))
    gy, gz = torch.rand(state), torch.rand(state)
    held = {}

    def build():
        held["yz"] = module(y0, z0)
    fwd, _ = cp.time_calls(lambda: module(y0, z0), budget)
    bwd, _ = cp.time_calls(lambda: torch.autograd.grad(held["yz"], [y0, z0, module.weight], [gy, gz]),
                           budget, before=build)

    mach = cp.Machine(r)
    w = torch.from_numpy(mach.weight_to_torch(module.weight.detach().numpy()).copy()).requires_grad_()
    ty0, tz0 = (torch.from_numpy(mach.state_to_torch(t.detach().numpy()).copy()).requires_grad_()
                for t in (y0, z0))
    tgy, tgz = (torch.from_numpy(mach.state_to_torch(t.numpy()).copy()) for t in (gy, gz))

    def build_loop():
        held["loop"] = mach.forward(w, ty0, tz0)
    loop_fwd, _ = cp.time_calls(lambda: mach.forward(w, ty0, tz0), budget)
    loop_bwd, _ = cp.time_calls(lambda: torch.autograd.grad(held["loop"], [ty0, tz0, w], [tgy, tgz]),
                                budget, before=build_loop)
    return kernel_fwd, kernel_bwd, fwd, bwd, loop_fwd, loop_bwd


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build", help="CMake build directory")
    ap.add_argument("--budget", type=float, default=0.5, help="seconds of timing per pass")
    a = ap.parse_args()
    torch.set_num_threads(1)
    exe = os.path.join(a.build, "bench", "pm_bench_machine")
    print(f"torch {torch.__version__}, {platform.processor() or platform.machine()}, float32, "
          f"1 thread, load average {os.getloadavg()[0]:.2f} at start")
    print("| machine | size | kernel fwd | pmach.torch fwd | overhead | PyTorch loop fwd "
          "| kernel bwd | pmach.torch bwd | overhead | PyTorch loop bwd |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in cp.ROWS:
        if (r["machine"], r["size"]) not in SIZES:
            continue
        kf, kb, f, b, lf, lb = measure(exe, r, a.budget)
        print(f"| {r['machine']} | {r['size']} | {kf:.1f} | {f:.1f} | {f - kf:+.1f} | {lf:.1f} "
              f"| {kb:.1f} | {b:.1f} | {b - kb:+.1f} | {lb:.1f} |", flush=True)
    print(f"load average {os.getloadavg()[0]:.2f} at end; times in μs, medians of single calls")


if __name__ == "__main__":
    main()
