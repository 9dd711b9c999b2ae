"""A torch.nn.Module as an implementation under test.

Its named parameters are the span's parameters: ``weight`` (of the
specification's parameter_shape, PyTorch's layout) and, when the module has
one, ``bias``, an affine term. A layer with a bias is affine, not bilinear, so
it is checked in two parts (spec/validator.md):

- the linear part, the module with its bias zero, against the specification's
  linear part, by the laws and the span comparison;
- the bias, b ↦ f(w, b, 0) − f(w, 0, 0) at a fixed integer w (so that the
  difference is b's contribution exactly: a bias that goes through the
  weight shows), as a layer from the one-point space {•} with the
  parameters b, against the intended bias.

The specification is in PyTorch's layout (layout="torch": source (C,
*spatial), parameters the module's weight shape) or in pmach's default
channels-last layout (layout="channels_last": source (*spatial, C),
parameters (*kernel, C_in, C_out)), for which the module's input, output and
weight are permuted around the call.

A module without parameters is f(x); the span of a parameterless
specification has one scalar parameter w, so it is called as w · f(x).
The module is called by functional_call (the parameters are the probes', the
module's own are untouched).
"""
import numpy as np

from . import _pmach

_DTYPES = ("float64", "float32")


def torch_dtype(dtype):
    import torch
    if dtype not in _DTYPES:
        raise _pmach.Error(f"dtype: is '{dtype}', expected float64 or float32")
    return getattr(torch, dtype)


def module_name(module):
    return type(module).__name__


def parameters(module):
    """weight and bias (None when absent) of a module on the CPU; anything
    else is refused."""
    named = dict(module.named_parameters())
    for name, p in named.items():
        if p.device.type != "cpu":
            raise _pmach.Error(f"check: {module_name(module)}.{name} is on {p.device}, expected the CPU "
                               "(pmach probes on the CPU: check module.cpu())")
    other = sorted(set(named) - {"weight", "bias"})
    if other:
        raise _pmach.Error(f"check: {module_name(module)} has the parameters {sorted(named)}, expected weight "
                           "and an optional bias (a module of several layers is checked by pmach.check_model)")
    if named and "weight" not in named:
        raise _pmach.Error(f"check: {module_name(module)} has a bias but no weight")
    return named.get("weight"), named.get("bias")


_LAYOUTS = ("torch", "channels_last")


class Layout:
    """Permutations between the specification's arrays and the module's."""

    def __init__(self, layout, weight_shape=None):
        if layout not in _LAYOUTS:
            raise _pmach.Error(f"layout: is '{layout}', expected torch or channels_last")
        self.channels_last = layout == "channels_last"
        self.weight_shape = weight_shape
        # A weight of rank < 2 (a user's diagonal layer) has no axes to move.
        self.permutes_weight = self.channels_last and weight_shape is not None and len(weight_shape) >= 2

    def spec_weight_shape(self):
        """The module's weight shape in the specification's layout: (O, I,
        *kernel) channels last is (*kernel, I, O)."""
        s = self.weight_shape
        return s if not self.permutes_weight else tuple(s[2:]) + (s[1], s[0])

    def weight(self, w):
        """A weight in the specification's layout as the module's."""
        if not self.permutes_weight:
            return w.reshape(self.weight_shape)
        r = len(self.weight_shape) - 2
        return w.reshape(self.spec_weight_shape()).permute((r + 1, r) + tuple(range(r)))

    def x(self, x):
        if not self.channels_last:
            return x
        return x.permute((0, x.dim() - 1) + tuple(range(1, x.dim() - 1)))

    def y(self, y):
        if not self.channels_last:
            return y
        return y.permute((0,) + tuple(range(2, y.dim())) + (1,))

    def channel_axis(self, target_shape):
        return len(target_shape) - 1 if self.channels_last else 0


def call(module, dtype, weight=None, bias=None):
    """f(w, x) of the module (weight and bias given as tensors, None for a
    module without them), with x cast to the dtype."""
    state = {}
    if weight is not None:
        state["weight"] = weight
    if bias is not None:
        state["bias"] = bias

    functional_call = _functional_call()

    def f(x):
        return functional_call(module, state, (x.to(dtype),))
    return f


_FUNCTIONAL_CALL = []


def _functional_call():
    """torch.func.functional_call, or torch.nn.utils.stateless's before
    torch 2.0 (Debian 12 has 1.13); looked up once, not on every probe."""
    if not _FUNCTIONAL_CALL:
        try:
            from torch.func import functional_call
        except ImportError:
            from torch.nn.utils.stateless import functional_call
        _FUNCTIONAL_CALL.append(functional_call)
    return _FUNCTIONAL_CALL[0]


def linear_forward(module, dtype, layout, bias_shape):
    """The linear part as a forward(w, x) in the specification's layout: the
    module with the weight w and a zero bias, in the dtype."""
    def forward(w, x):
        import torch
        x = layout.x(x)
        if layout.weight_shape is None:  # parameterless: w · f(x)
            return w.to(dtype) * layout.y(call(module, dtype)(x))
        zero = None if bias_shape is None else torch.zeros(bias_shape, dtype=dtype)
        return layout.y(call(module, dtype, layout.weight(w.to(dtype)), zero)(x))
    forward.__qualname__ = module_name(module)
    return forward


def bias_forward(module, dtype, layout, source_shape, seed):
    """The bias part as a forward(b, s) from the one-point space:
    s · (f(w0, b, 0) − f(w0, 0, 0)) at an integer w0. At x = 0 the linear
    part is exactly 0, so the difference is the bias's term with no
    rounding."""
    import torch
    rng = np.random.default_rng(seed)
    w0 = torch.tensor(rng.integers(-2, 3, size=layout.weight_shape), dtype=dtype)
    x0 = layout.x(torch.zeros((1,) + tuple(source_shape), dtype=dtype))

    base = []  # f(w0, 0, 0), the same on every call: computed once

    def forward(b, s):
        b = b.to(dtype)
        if not base:
            base.append(call(module, dtype, w0, torch.zeros_like(b))(x0).detach())
        d = call(module, dtype, w0, b)(x0) - base[0]
        return s.reshape((-1,) + (1,) * (d.dim() - 1)).to(dtype) * layout.y(d)
    forward.__qualname__ = module_name(module) + " bias"
    return forward


def channel_bias(target_shape, channels, axis):
    """The intended bias of a PyTorch layer: b[c] added to every output of
    channel c (the target's axis `axis`), as a layer from the one-point
    space (exact coefficients 1)."""
    def intended(b, s):
        shape = [1] * (len(target_shape) + 1)
        shape[axis + 1] = channels
        b = np.asarray(b).reshape(shape)
        return s.reshape((-1,) + (1,) * len(target_shape)) * np.broadcast_to(b, (1,) + tuple(target_shape))
    return _pmach._recover(_numpy(intended, "bias"), (1,), tuple(target_shape), (channels,), 1)


def spec_bias(spec, weight_size, bias_size):
    """The bias of a specification with one (parameters flat: the layer's,
    then the bias's) as a layer from the one-point space; its coefficients
    are the C++ reference's."""
    def intended(b, s):
        w = np.concatenate([np.zeros(weight_size), np.asarray(b).ravel()])
        y = spec.forward(np.zeros((1,) + spec.source_shape), w)
        return s.reshape((-1,) + (1,) * len(spec.target_shape)) * y
    return _pmach._recover(_numpy(intended, "bias"), (1,), spec.target_shape, (bias_size,), 1)


def spec_linear(spec, weight_shape, bias_size):
    """The linear part of a specification with a bias, in the module's
    weight shape: the span of the C++ reference with the bias zero."""
    def intended(w, x):
        return spec.forward(x, np.concatenate([np.asarray(w).ravel(), np.zeros(bias_size)]))
    return _pmach._recover(_numpy(intended, spec.name), spec.source_shape, spec.target_shape,
                           tuple(weight_shape), 1)


def _numpy(f, name):
    def call_(*args):
        return np.asarray(f(*args), dtype=np.float64)
    call_.__qualname__ = name
    return call_
