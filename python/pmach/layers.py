"""Constructors of the catalogue's layers, as pmach.Layer models.

Each returns the layer of src/pm/layers/ held by its rule (exact
coefficients, evaluated row by row) and, up to 2**22 edges, its edge list.
Two layouts:

- ``layout="pm"`` (the default): a space of positions and channels is the
  shape (*positions, channels), row-major (channels last), and the
  parameters are (*kernel, in_channels // groups, out_channels);
- ``layout="torch"``: PyTorch's, (channels, *positions) and the weight
  tensor of the torch.nn module unchanged, e.g. Conv2d's (out, in // groups,
  kH, kW) and Linear's (out, in), so that a module is checked with no permute.

``bias=True`` adds one bias per output channel: the source stays the input's
shape and the parameters become flat, the weight (in the layout's order)
followed by the bias (out_channels,) — ``torch.cat([w.flatten(), b])``.
(``dense(..., bias=True)`` in the pm layout keeps the seed's convention: the
bias input is an extra last source point that must be 1.)

Layers without parameters (avg_pool, interpolate, pixel_shuffle,
pixel_unshuffle, unfold, fold, roll) have a one-point parameter space: they are called as
``layer.forward(x)``, with no weights.

Per-axis arguments take an int (the same on every axis) or one value per
axis; ``padding`` also takes one (lo, hi) pair per axis. Errors are
pmach.Error with one line.
"""
from . import _pmach
from ._machines import _int

__all__ = ["dense", "conv", "conv_transpose", "time_conv", "graph", "avg_pool", "interpolate",
           "pixel_shuffle", "pixel_unshuffle", "unfold", "fold", "roll"]



def _size(value, what, who):
    """A size: an int or a NumPy integer >= 0 (a float or a negative value is
    refused in one line, not handed to the bindings)."""
    v = _int(value, what, f"layers.{who}")
    if v < 0:
        raise _pmach.Error(f"pmach.layers.{who}: {what} is {v}, expected an integer >= 0")
    return v


def _per_axis(value, rank, name, default):
    if value is None:
        return [default] * rank
    if not hasattr(value, "__len__"):
        return [_size(value, name, "constructor")] * rank
    value = list(value)
    if len(value) != rank:
        raise _pmach.Error(f"{name}: has {len(value)} entries, expected {rank} (one per spatial axis)")
    return [_size(v, f"{name}[{k}]", "constructor") for k, v in enumerate(value)]


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


def _spatial(spatial):
    if not hasattr(spatial, "__len__"):
        spatial = [spatial]
    return [_size(v, f"spatial[{k}]", "constructor") for k, v in enumerate(spatial)]


def dense(in_features, out_features, bias=False, *, layout="pm"):
    """Dense layer y = W^T x (+ b). pm layout: source (in,) (+1 for the bias
    input, which must be 1), target (out,), parameters (in, out), or flat
    (in*out + out,) with the bias after W. torch layout: nn.Linear's, source
    (in,), parameters W (out, in) then b (out,), flat with a bias."""
    return _pmach._dense(_size(in_features, "in_features", "dense"),
                         _size(out_features, "out_features", "dense"), bias, layout)


def _conv_args(spatial, kernel_size, stride, dilation, padding):
    spatial = _spatial(spatial)
    r = len(spatial)
    lo, hi = _padding(padding, r)
    return (spatial, _per_axis(kernel_size, r, "kernel_size", 1), lo, hi,
            _per_axis(stride, r, "stride", 1), _per_axis(dilation, r, "dilation", 1))


def conv(spatial, in_channels, out_channels, kernel_size, *, stride=1, dilation=1, padding=0,
         groups=1, padding_mode="zeros", bias=False, layout="pm"):
    """Convolution (cross-correlation, PyTorch's ConvNd semantics) on inputs
    with spatial extents ``spatial``, with padding (zeros, or padding_mode
    circular, reflect or replicate), stride, dilation and groups. Parameters
    (*kernel_size, in_channels // groups, out_channels), or in the torch
    layout (out_channels, in_channels // groups, *kernel_size)."""
    s, k, lo, hi, st, dl = _conv_args(spatial, kernel_size, stride, dilation, padding)
    return _pmach._conv(s, _size(in_channels, "in_channels", "conv"),
                        _size(out_channels, "out_channels", "conv"), k, lo, hi, st, dl,
                        _size(groups, "groups", "conv"), padding_mode, bias,
                        layout)


def conv_transpose(spatial, in_channels, out_channels, kernel_size, *, stride=1, dilation=1,
                   padding=0, output_padding=0, groups=1, bias=False, layout="pm"):
    """The transposed convolution, PyTorch's ConvTransposeNd(in_channels,
    out_channels, ...) on inputs with spatial extents ``spatial``: the adjoint
    of the convolution from out_channels to in_channels whose output has
    these extents. Parameters (*kernel_size, out_channels // groups,
    in_channels), or in the torch layout ConvTransposeNd's weight
    (in_channels, out_channels // groups, *kernel_size)."""
    s, k, lo, hi, st, dl = _conv_args(spatial, kernel_size, stride, dilation, padding)
    op = _per_axis(output_padding, len(s), "output_padding", 0)
    return _pmach._conv_transpose(s, _size(in_channels, "in_channels", "conv_transpose"),
                                  _size(out_channels, "out_channels", "conv_transpose"), k, lo, hi, st, dl, op, groups, bias,
                                  layout)


def time_conv(length, in_channels, out_channels, max_lag, *, bias=False, layout="pm"):
    """Causal time convolution (time, channel) -> (time, channel) with lags
    0..max_lag; parameters (max_lag + 1, in_channels, out_channels), or in
    the torch layout (channel, time) and (out_channels, in_channels,
    max_lag + 1)."""
    return _pmach._time_conv(length, in_channels, out_channels, max_lag, bias, layout)


def graph(nodes, edges, in_channels, out_channels, *, self_loops=False, norm="sum", bias=False,
          layout="pm"):
    """Graph convolution over the directed edges (u, v) (from u into v):
    (node, in_channels) -> (node, out_channels), parameters (in_channels,
    out_channels), or (out_channels, in_channels) in the torch layout; norm
    "sum", "mean" (1/deg v) or "symmetric" (deg(u)^-1/2 deg(v)^-1/2: for
    degrees that are not squares the weight is the nearest double, and the
    layer is marked inexact)."""
    return _pmach._graph(nodes, [(int(u), int(v)) for u, v in edges], in_channels, out_channels,
                         self_loops, norm, bias, layout)


def avg_pool(spatial, channels, window, *, stride=None, padding=0, count_include_pad=True,
             ceil_mode=False, layout="pm"):
    """Average pooling (PyTorch's AvgPoolNd) on (*spatial, channels), or
    (channels, *spatial) in the torch layout; no parameters. stride defaults
    to the window; count_include_pad counts padded positions in the divisor;
    ceil_mode keeps a last window that starts inside the input."""
    spatial = _spatial(spatial)
    r = len(spatial)
    lo, hi = _padding(padding, r)
    win = _per_axis(window, r, "window", 1)
    st = _per_axis(stride, r, "stride", 1) if stride is not None else []
    return _pmach._avg_pool(spatial, channels, win, lo, hi, st, count_include_pad, ceil_mode, layout)


def interpolate(spatial, channels, size=None, *, scale_factor=None, mode="nearest",
                align_corners=False, layout="pm"):
    """F.interpolate to the output extents ``size`` (or the input extents
    times an integer ``scale_factor``): mode nearest, linear (1-d), bilinear
    (2-d) or trilinear (3-d), align_corners either way; no parameters. The
    weights are exact rationals (3/7 at 4 -> 7)."""
    spatial = _spatial(spatial)
    r = len(spatial)
    if (size is None) == (scale_factor is None):
        raise _pmach.Error("interpolate: expected exactly one of size and scale_factor")
    if size is None:
        size = [n * f for n, f in zip(spatial, _per_axis(scale_factor, r, "scale_factor", 1))]
    return _pmach._interpolate(spatial, channels, _per_axis(size, r, "size", 1), mode,
                               align_corners, layout)


def pixel_shuffle(spatial, channels, factor, *, layout="pm"):
    """F.pixel_shuffle(x, factor) on inputs (*spatial, channels * factor**k)
    (torch layout: (channels * factor**k, *spatial)), to (*spatial * factor,
    channels); ``channels`` is the output's. No parameters."""
    return _pmach._pixel_shuffle(_spatial(spatial), channels, factor, False, layout)


def pixel_unshuffle(spatial, channels, factor, *, layout="pm"):
    """F.pixel_unshuffle(x, factor), the inverse of pixel_shuffle: from
    (*spatial, channels) to (*spatial / factor, channels * factor**k), with
    ``spatial`` and ``channels`` the input's. No parameters."""
    spatial = _spatial(spatial)
    for j, n in enumerate(spatial):
        if n % factor:
            raise _pmach.Error(f"pixel_unshuffle: spatial[{j}] is {n}, expected a multiple of {factor}")
    return _pmach._pixel_shuffle([n // factor for n in spatial], channels, factor, True, layout)


def _unfold(who, spatial, channels, kernel_size, dilation, padding, stride, fold, layout):
    spatial = _spatial(spatial)
    r = len(spatial)
    return _pmach._unfold(spatial, _size(channels, "channels", who),
                          _per_axis(kernel_size, r, "kernel_size", 1), _per_axis(padding, r, "padding", 0),
                          _per_axis(stride, r, "stride", 1), _per_axis(dilation, r, "dilation", 1), fold,
                          layout)


def unfold(spatial, channels, kernel_size, *, dilation=1, padding=0, stride=1, layout="pm"):
    """F.unfold (im2col) of images with extents ``spatial`` and ``channels``
    channels: from (*spatial, channels) to (blocks, channels * K), K the
    kernel's size; torch layout: from (channels, *spatial) to
    (channels * K, blocks), F.unfold's output for one sample. Column
    c * K + kappa of block l is the input at l's position * stride + kappa *
    dilation - padding (kernel offsets row-major), nothing in the padding. No
    parameters."""
    return _unfold("unfold", spatial, channels, kernel_size, dilation, padding, stride, False, layout)


def fold(output_size, channels, kernel_size, *, dilation=1, padding=0, stride=1, layout="pm"):
    """F.fold (col2im), the transpose of unfold: from the columns (blocks,
    channels * K) (torch layout: (channels * K, blocks)) to images with
    extents ``output_size`` and ``channels`` channels, each pixel the sum of
    the columns that read it. No parameters."""
    return _unfold("fold", output_size, channels, kernel_size, dilation, padding, stride, True, layout)


def roll(shape, shifts, dims=None):
    """torch.roll(x, shifts, dims) on tensors of shape ``shape`` (the
    tensor's own shape, any layout): out[i] = x[i - shift mod n] on each
    rolled axis, or on the flattened tensor when dims is None. No
    parameters."""
    shape = _spatial(shape)
    if dims is None:
        if not isinstance(shifts, int):
            raise _pmach.Error("roll: shifts is a sequence, expected an int when dims is None")
        return _pmach._roll(shape, [int(shifts)], True)
    shifts = [shifts] if isinstance(shifts, int) else list(shifts)
    dims = [dims] if isinstance(dims, int) else list(dims)
    if len(dims) != len(shifts):
        raise _pmach.Error(f"roll: shifts has {len(shifts)} entries, expected one per dim ({len(dims)})")
    per_axis = [0] * len(shape)
    for s, d in zip(shifts, dims):
        if not -len(shape) <= d < len(shape):
            raise _pmach.Error(f"roll: dim {d} is out of range for shape {tuple(shape)}")
        per_axis[d] += int(s)
    return _pmach._roll(shape, per_axis, False)
