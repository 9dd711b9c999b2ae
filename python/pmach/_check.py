"""pmach.check and pmach.recover: implementations under test, in NumPy or PyTorch.

The laws, the span recovery and the span difference are the C++ validator's
(src/pm/validate/); this module only adapts the callables: PyTorch functions
get torch.float64 tensors and autograd supplies their adjoints, NumPy
functions get and return arrays.
"""
import numpy as np

from . import _pmach


def _to_numpy(value):
    if hasattr(value, "detach"):  # a torch tensor
        value = value.detach().cpu().numpy()
    return np.asarray(value, dtype=np.float64)


def _numpy_callable(f):
    if f is None:
        return None

    def call(*args):
        r = f(*args)
        return tuple(_to_numpy(v) for v in r) if isinstance(r, (tuple, list)) else _to_numpy(r)
    call.__qualname__ = getattr(f, "__qualname__", "implementation")
    return call


def _tensor(a, requires_grad=False):
    import torch
    return torch.tensor(np.asarray(a), dtype=torch.float64, requires_grad=requires_grad)


def _grads(outputs, inputs, cotangents):
    """The vector-Jacobian product, zeros for inputs the outputs do not use."""
    import torch
    gs = torch.autograd.grad(outputs, inputs, cotangents, allow_unused=True)
    return [np.zeros(tuple(i.shape)) if g is None else g.detach().numpy() for g, i in zip(gs, inputs)]


def _torch_layer(forward, parameter_shape, source_shape):
    """forward, transpose and gradient of a PyTorch layer; the adjoints by
    autograd (at zero: the layer is linear in each argument)."""
    def fwd(w, x):
        return _to_numpy(forward(_tensor(w), _tensor(x)))

    def transpose(w, g):
        x = _tensor(np.zeros((g.shape[0],) + tuple(source_shape)), True)
        return _grads(forward(_tensor(w), x), [x], _tensor(g))[0]

    def gradient(x, g):
        w = _tensor(np.zeros(tuple(parameter_shape)), True)
        return _grads(forward(w, _tensor(x)), [w], _tensor(g))[0]
    name = getattr(forward, "__qualname__", "forward")
    fwd.__qualname__ = name
    return fwd, transpose, gradient


def _torch_machine(forward):
    """forward and backward of a PyTorch machine; the backward by autograd."""
    def fwd(w, y0, z0):
        y, z = forward(_tensor(w), _tensor(y0), _tensor(z0))
        return _to_numpy(y), _to_numpy(z)

    def backward(w, y0, z0, ybar, zbar):
        import torch
        args = [_tensor(w, True), _tensor(y0, True), _tensor(z0, True)]
        y, z = forward(*args)
        gw, gy0, gz0 = _grads([y, z], args, [_tensor(ybar), _tensor(zbar)])
        return gy0, gz0, gw
    fwd.__qualname__ = getattr(forward, "__qualname__", "forward")
    return fwd, backward


def _framework(framework, *given):
    if framework is None:
        return "numpy" if any(g is not None for g in given) else "torch"
    if framework not in ("torch", "numpy"):
        raise _pmach.Error(f"framework: is '{framework}', expected torch or numpy")
    return framework


def check(model, forward, *, transpose=None, gradient=None, backward=None, cases=100, seed=1,
          framework=None):
    """Checks an implementation of `model` (a pmach.Layer or pmach.Machine).

    Layer: forward(w, x) with w of model.parameter_shape and x of shape (n,
    *source_shape) returns (n, *target_shape); transpose(w, g) returns (n,
    *source_shape), gradient(x, g) returns the gradient in w summed over the
    batch. Machine: forward(w, y0, z0) returns (y, z); backward(w, y0, z0,
    ybar, zbar) returns (grad_y0, grad_z0, grad_w).

    With transpose, gradient and backward omitted the callables are PyTorch
    functions (torch.float64 tensors in, autograd for the adjoints); a NumPy
    implementation passes its adjoints, or framework="numpy" to be checked
    on its forward pass alone. Returns a pmach.Report: the laws on the
    implementation, then its agreement with the model. A failing row's
    ``row.counterexample`` is a dict name → ndarray: the shrunk case of a law
    (w, φ, g, … in the model's shapes), or for CONF-SPAN-DIFF the array
    "implemented − intended" of coefficients on target × source × parameter
    axes; ``row.scalars`` holds the case number and the two sides.
    """
    fw = _framework(framework, transpose, gradient, backward)
    if isinstance(model, _pmach.Layer):
        if backward is not None:
            raise _pmach.Error("check: backward= is for machines; a layer takes transpose= and gradient=")
        if fw == "torch":
            f, t, g = _torch_layer(forward, model.parameter_shape, model.source_shape)
        else:
            f, t, g = (_numpy_callable(c) for c in (forward, transpose, gradient))
        return _pmach._check_layer(model, f, t, g, cases, seed)
    if isinstance(model, _pmach.Machine):
        if transpose is not None or gradient is not None:
            raise _pmach.Error("check: transpose= and gradient= are for layers; a machine takes backward=")
        if fw == "torch":
            f, b = _torch_machine(forward)
        else:
            f, b = _numpy_callable(forward), _numpy_callable(backward)
        return _pmach._check_machine(model, f, b, cases, seed)
    raise _pmach.Error(f"check: model is {type(model).__name__}, expected a pmach.Layer or pmach.Machine")


def recover(forward, source_shape, target_shape, parameter_shape, *, framework="torch", seed=1):
    """The span that a black-box bilinear forward(w, x) implements, as a
    pmach.Layer (exact coefficients), by the C++ span recovery: about one
    call per parameter. forward gets torch.float64 tensors (framework="torch")
    or NumPy arrays (framework="numpy")."""
    _framework(framework)
    if framework == "torch":
        f = _torch_layer(forward, parameter_shape, source_shape)[0]
    else:
        f = _numpy_callable(forward)
    return _pmach._recover(f, tuple(source_shape), tuple(target_shape), tuple(parameter_shape), seed)
