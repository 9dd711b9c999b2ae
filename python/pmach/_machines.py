"""The seed's machines (the authors' DenseMachine, ConvMachine, RecurMachine)."""
import json

from . import _pmach


def _fields(dims, sigma, weights, **more):
    fields = {"dims": [int(d) for d in dims], "sigma": sigma}
    fields.update(more)
    return fields


def _make(kind, fields, weights):
    m = _pmach._seed_machine(json.dumps(fields), kind)
    if weights is not None:
        m.weights = weights
    return m


def DenseMachine(dims, sigma="tanh", *, weights=None):
    """DenseMachine(dims, sigma): N = sum(dims) channels in consecutive blocks,
    W of shape (N, N) (W[input, output]); only weights from an earlier block
    into a later one act. sigma: "identity", "tanh", "sigmoid", "relu",
    "softplus" or {"polynomial": [c0, c1, ...]}. Returns a pmach.Machine."""
    return _make("DenseMachine", _fields(dims, sigma, weights), weights)


def ConvMachine(dims, sigma, spatial, pad, *, weights=None):
    """ConvMachine(dims, sigma, spatial, pad): a size-preserving convolution on
    the grid `spatial` with pad = one (lo, hi) pair per axis (kernel lo+hi+1);
    space (*spatial, N), W of shape (*kernel, N, N)."""
    spatial = [spatial] if isinstance(spatial, int) else list(spatial)
    pad = [list(p) for p in pad]
    return _make("ConvMachine", _fields(dims, sigma, weights, spatial=spatial, pad=pad), weights)


def RecurMachine(dims, sigma, length, pad, timeblock, *, weights=None):
    """RecurMachine(dims, sigma, length, pad, timeblock): causal time
    convolution with lags 0..pad, graded by (time block, channel block);
    space (length, N), W of shape (pad + 1, N, N)."""
    return _make("RecurMachine",
                 _fields(dims, sigma, weights, length=int(length), pad=int(pad),
                         timeblock=int(timeblock)), weights)
