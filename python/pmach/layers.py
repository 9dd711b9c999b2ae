"""Constructors of the catalogue's layers, as pmach.Layer models.

Each returns the parametric span of src/pm/layers/ (exact coefficients), in
the library's layout: a space of positions and channels is the shape
(*positions, channels), row-major (channels last). Per-axis arguments take
an int (the same on every axis) or one value per axis; ``padding`` also takes
one (lo, hi) pair per axis. Errors are pmach.Error with one line.
"""
from . import _pmach

__all__ = ["dense", "conv", "conv_transpose", "time_conv", "graph", "avg_pool"]


def _per_axis(value, rank, name, default):
    if value is None:
        return [default] * rank
    if isinstance(value, int):
        return [value] * rank
    value = list(value)
    if len(value) != rank:
        raise _pmach.Error(f"{name}: has {len(value)} entries, expected {rank} (one per spatial axis)")
    return [int(v) for v in value]


def _padding(padding, rank):
    """(lo, hi) lists from an int, one int per axis, or one (lo, hi) pair per axis."""
    if padding is None or isinstance(padding, int):
        p = _per_axis(padding, rank, "padding", 0)
        return p, p
    padding = list(padding)
    if len(padding) != rank:
        raise _pmach.Error(f"padding: has {len(padding)} entries, expected {rank} (one per spatial axis)")
    lo, hi = [], []
    for j, p in enumerate(padding):
        if isinstance(p, int):
            lo.append(p), hi.append(p)
        elif len(p) == 2:
            lo.append(int(p[0])), hi.append(int(p[1]))
        else:
            raise _pmach.Error(f"padding[{j}]: expected an int or a (lo, hi) pair")
    return lo, hi


def dense(in_features, out_features, bias=False):
    """Dense layer y = W^T x (+ b): source (in,) (+1 for the bias input, which
    must be 1), target (out,), parameters (in, out), or flat (in*out + out,)
    with the bias after W."""
    return _pmach._dense(in_features, out_features, bias)


def _conv_args(spatial, kernel_size, stride, dilation, padding):
    spatial = [int(s) for s in ([spatial] if isinstance(spatial, int) else spatial)]
    r = len(spatial)
    lo, hi = _padding(padding, r)
    return (spatial, _per_axis(kernel_size, r, "kernel_size", 1), lo, hi,
            _per_axis(stride, r, "stride", 1), _per_axis(dilation, r, "dilation", 1))


def conv(spatial, in_channels, out_channels, kernel_size, *, stride=1, dilation=1, padding=0,
         groups=1):
    """Convolution (cross-correlation, PyTorch's ConvNd semantics) on inputs
    of shape (*spatial, in_channels), with zero padding, stride, dilation and
    groups. Parameters (*kernel_size, in_channels // groups, out_channels)."""
    s, k, lo, hi, st, dl = _conv_args(spatial, kernel_size, stride, dilation, padding)
    return _pmach._conv(s, in_channels, out_channels, k, lo, hi, st, dl, groups, False)


def conv_transpose(spatial, in_channels, out_channels, kernel_size, *, stride=1, dilation=1,
                   padding=0, groups=1):
    """The transposed convolution: the adjoint of conv(...) with the same
    arguments, from its output space back to the input space (*spatial,
    in_channels)."""
    s, k, lo, hi, st, dl = _conv_args(spatial, kernel_size, stride, dilation, padding)
    return _pmach._conv(s, in_channels, out_channels, k, lo, hi, st, dl, groups, True)


def time_conv(length, in_channels, out_channels, max_lag):
    """Causal time convolution (time, channel) -> (time, channel) with lags
    0..max_lag; parameters (max_lag + 1, in_channels, out_channels)."""
    return _pmach._time_conv(length, in_channels, out_channels, max_lag)


def graph(nodes, edges, in_channels, out_channels, *, self_loops=False, norm="sum"):
    """Graph convolution over the directed edges (u, v) (from u into v):
    (node, in_channels) -> (node, out_channels), parameters (in_channels,
    out_channels); norm "sum", "mean" (1/deg v) or "symmetric"
    (deg(u)^-1/2 deg(v)^-1/2)."""
    return _pmach._graph(nodes, [(int(u), int(v)) for u, v in edges], in_channels, out_channels,
                         self_loops, norm)


def avg_pool(spatial, channels, window, *, stride=None, padding=0):
    """Average pooling (padded positions count as zeros) on (*spatial,
    channels); no parameters. stride defaults to the window."""
    spatial = [int(s) for s in ([spatial] if isinstance(spatial, int) else spatial)]
    r = len(spatial)
    lo, hi = _padding(padding, r)
    win = _per_axis(window, r, "window", 1)
    return _pmach._avg_pool(spatial, channels, win, lo, hi, _per_axis(stride, r, "stride", 1) if stride is not None else [])
