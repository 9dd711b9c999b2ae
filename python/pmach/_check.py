"""pmach.check, pmach.assert_check and pmach.recover: implementations under
test, in NumPy or PyTorch, functions or torch.nn.Modules.

The laws, the span recovery and the span difference are the C++ validator's
(src/pm/validate/); this module only adapts the callables: PyTorch functions
get torch tensors (float64 unless dtype= says otherwise) and autograd
supplies their adjoints, NumPy functions get and return arrays, modules go
through pmach/_module.py. Misuse is found before the C++ check starts (a
signature that does not fit, a function autograd cannot run), so that it is
an exception and not a failed row.
"""
import inspect
import sys
import time

import numpy as np

from . import _module, _pmach
from ._machines import _int
from ._report import Report

# pm::io::max_cases: the bound of `pmach check --cases` (docs/formats.md §5.2).
_MAX_CASES = 100000


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


def _to(t, dtype):
    return t if dtype is None else t.to(dtype)


def _grads(outputs, inputs, cotangents):
    """The vector-Jacobian product, zeros for inputs the outputs do not use."""
    import torch
    gs = torch.autograd.grad(outputs, inputs, cotangents, allow_unused=True)
    return [np.zeros(tuple(i.shape)) if g is None else g.detach().numpy() for g, i in zip(gs, inputs)]


def _torch_layer(forward, parameter_shape, source_shape, dtype=None):
    """forward, transpose and gradient of a PyTorch layer, run in the dtype
    (the tensors' own float64 when None); the adjoints by autograd (at zero:
    the layer is linear in each argument)."""
    def fwd(w, x):
        return _to_numpy(forward(_to(_tensor(w), dtype), _to(_tensor(x), dtype)))

    def transpose(w, g):
        x = _tensor(np.zeros((g.shape[0],) + tuple(source_shape)), True)
        y = forward(_to(_tensor(w), dtype), _to(x, dtype))
        return _grads(y, [x], _to(_tensor(g), y.dtype))[0]

    def gradient(x, g):
        w = _tensor(np.zeros(tuple(parameter_shape)), True)
        y = forward(_to(w, dtype), _to(_tensor(x), dtype))
        return _grads(y, [w], _to(_tensor(g), y.dtype))[0]
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


def _name(f):
    return getattr(f, "__qualname__", type(f).__name__)


def _takes(f, count):
    """False when f's signature refuses `count` positional arguments (True
    when it has none to read: a builtin)."""
    try:
        inspect.signature(f).bind(*range(count))
    except TypeError:
        return False
    except ValueError:
        pass
    return True


def _signature(f):
    try:
        return str(inspect.signature(f))
    except ValueError:
        return "(...)"


def _callable(f, what, arities, expected):
    if not callable(f):
        raise TypeError(f"check: {what} is {type(f).__name__}, expected a callable {expected}")
    if not any(_takes(f, n) for n in arities):
        raise TypeError(f"check: {what} {_name(f)}{_signature(f)} cannot be called as {expected}")


def _scaled(f):
    """f(x) of a parameterless layer as the span's w · f(x) (its one scalar
    parameter)."""
    def forward(w, x):
        return w * f(x)
    forward.__qualname__ = _name(f)
    return forward


_NUMPY_HINT = ("a NumPy implementation passes its adjoints as transpose= and gradient=, or "
               "framework='numpy' to be checked on its forward pass alone")


def _preflight(forward, model, dtype):
    """One call on a zero sample before any law: a function that cannot run
    under autograd is misuse, answered by an exception, not a failed row."""
    import torch
    w = torch.zeros(model.parameter_shape, dtype=torch.float64, requires_grad=True)
    x = torch.zeros((1,) + model.source_shape, dtype=torch.float64, requires_grad=True)
    name = _name(forward)
    try:
        y = forward(w.to(dtype), x.to(dtype))
    except Exception as e:
        if "numpy" in str(e).lower():
            raise TypeError(f"check: {name}(w, x) cannot run on tensors that require grad "
                            f"({type(e).__name__}: {e}): {_NUMPY_HINT}") from e
        e.add_note(f"pmach.check: raised by {name}(w, x) on one zero sample, x of shape "
                   f"{tuple(x.shape)} and w of shape {tuple(w.shape)}, before any law was run")
        raise
    if not isinstance(y, torch.Tensor):
        raise TypeError(f"check: {name}(w, x) returned {type(y).__module__}.{type(y).__name__}, expected "
                        f"a torch.Tensor: {_NUMPY_HINT}")
    if y.device.type != "cpu":
        raise _pmach.Error(f"check: {name}(w, x) returned a tensor on {y.device}, expected the CPU")
    if not y.requires_grad:
        raise TypeError(f"check: {name}(w, x) returned a tensor that autograd cannot trace back to w "
                        f"and x (a NumPy step inside?): {_NUMPY_HINT}")


def _check_layer(model, fwd, transpose, gradient, cases, seed, dtype):
    # dtype reaches the C++ side only when it is not its default float64.
    extra = () if dtype == "float64" else (dtype,)
    return _pmach._check_layer(model, fwd, transpose, gradient, cases, seed, *extra)


def _torch_check(model, forward, cases, seed, dtype):
    tdtype = _module.torch_dtype(dtype)
    _preflight(forward, model, tdtype)
    f, t, g = _torch_layer(forward, model.parameter_shape, model.source_shape, tdtype)
    return _check_layer(model, f, t, g, cases, seed, dtype)


def _module_parts(spec, module, cases, seed, dtype, layout):
    """The reports of a torch.nn.Module: its linear part, then its bias (pmach/_module.py)."""
    name = _module.module_name(module)
    weight, bias = _module.parameters(module)
    tdtype = _module.torch_dtype(dtype)
    lay = _module.Layout(layout, None if weight is None else tuple(weight.shape))
    if weight is None:
        if spec.parameter_shape != ():
            raise _pmach.Error(f"check: {name} has no parameters, the specification has parameters "
                               f"{spec.parameter_shape}")
        return [_torch_check(spec, _module.linear_forward(module, tdtype, lay, None), cases, seed, dtype)]
    wshape = lay.spec_weight_shape()
    bshape = None if bias is None else tuple(bias.shape)
    hint = ("a specification of a PyTorch module is in its layout (layout=\"torch\" on the "
            "pmach.layers constructors), or check(..., layout=\"channels_last\")")
    if bias is None or spec.parameter_shape == wshape:
        if spec.parameter_shape != wshape:
            raise _pmach.Error(f"check: {name}.weight is {wshape} in the layout {layout}, the specification's "
                               f"parameters {spec.parameter_shape}: {hint}")
        linear = spec
        if bias is not None:
            axis = lay.channel_axis(spec.target_shape)
            if spec.target_shape[axis:axis + 1] != bshape:
                raise _pmach.Error(f"check: {name}.bias has shape {bshape}, the specification's target "
                                   f"{spec.target_shape} has not as many channels on axis {axis}: {hint}")
            intended_bias = _module.channel_bias(spec.target_shape, bias.numel(), axis)
    elif spec.parameter_shape == (weight.numel() + bias.numel(),):
        linear = _module.spec_linear(spec, wshape, bias.numel())
        intended_bias = _module.spec_bias(spec, weight.numel(), bias.numel())
    else:
        raise _pmach.Error(f"check: {name} has weight {wshape} and bias {bshape}, the specification's "
                           f"parameters {spec.parameter_shape}, expected {wshape} or "
                           f"({weight.numel() + bias.numel()},) (the weight flat, then the bias)")
    parts = [_torch_check(linear, _module.linear_forward(module, tdtype, lay, bshape), cases, seed, dtype)]
    if bias is not None:
        parts.append(_torch_check(intended_bias, _module.bias_forward(module, tdtype, lay, spec.source_shape,
                                                                      seed), cases, seed, dtype))
    return parts


def _is_module(f):
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(f, torch.nn.Module)


def _layer_parts(model, forward, transpose, gradient, cases, seed, framework, dtype, layout):
    if _is_module(forward):
        if transpose is not None or gradient is not None or framework == "numpy":
            raise _pmach.Error("check: a torch.nn.Module is checked with autograd's adjoints; "
                               "transpose=, gradient= and framework='numpy' are for functions")
        return _module_parts(model, forward, cases, seed, dtype, layout)
    if layout != "torch":
        raise _pmach.Error("check: layout= is for a torch.nn.Module; a function takes the specification's layout")
    fw = _framework(framework, transpose, gradient)
    parameterless = model.parameter_shape == ()
    expected = "forward(w, x)" + (" or forward(x) (the layer has no parameters)" if parameterless else "")
    _callable(forward, "forward", (2, 1) if parameterless else (2,), expected)
    if not _takes(forward, 2):
        forward = _scaled(forward)
    if fw == "torch":
        return [_torch_check(model, forward, cases, seed, dtype)]
    _callable(transpose or (lambda w, g: None), "transpose", (2,), "transpose(w, g)")
    _callable(gradient or (lambda x, g: None), "gradient", (2,), "gradient(x, g)")
    f, t, g = (_numpy_callable(c) for c in (forward, transpose, gradient))
    return [_check_layer(model, f, t, g, cases, seed, dtype)]


def _machine_parts(model, forward, backward, cases, seed, framework):
    fw = _framework(framework, backward)
    _callable(forward, "forward", (3,), "forward(w, y0, z0)")
    if fw == "torch":
        f, b = _torch_machine(forward)
    else:
        if backward is not None:
            _callable(backward, "backward", (5,), "backward(w, y0, z0, ybar, zbar)")
        f, b = _numpy_callable(forward), _numpy_callable(backward)
    return [_pmach._check_machine(model, f, b, cases, seed)]


def check(model, forward, *, transpose=None, gradient=None, backward=None, cases=100, seed=1,
          framework=None, dtype="float64", layout="torch"):
    """Checks an implementation of `model` (a pmach.Layer or pmach.Machine).

    Layer: forward(w, x) with w of model.parameter_shape and x of shape (n,
    *source_shape) returns (n, *target_shape); transpose(w, g) returns (n,
    *source_shape), gradient(x, g) returns the gradient in w summed over the
    batch. A layer without parameters may be given as forward(x). Machine:
    forward(w, y0, z0) returns (y, z); backward(w, y0, z0, ybar, zbar)
    returns (grad_y0, grad_z0, grad_w).

    forward may be a torch.nn.Module: layout="torch" (the default) when the
    specification is in PyTorch's layout (layout="torch" on the pmach.layers
    constructors), "channels_last" when it is in pmach's default layout (the
    module's input, output and weight are permuted). Its ``weight`` is the
    span's parameters; its ``bias``, when it has one, an affine term checked
    exactly beside the linear part, against the specification's bias (the
    parameters flat, the weight's then the bias's) or, when the specification
    has none, against one bias per channel (the target's first axis, or its
    last channels last).

    With transpose, gradient and backward omitted the callables are PyTorch
    functions (torch tensors in, autograd for the adjoints); a NumPy
    implementation passes its adjoints, or framework="numpy" to be checked
    on its forward pass alone. dtype ("float64" or "float32") is the
    precision the PyTorch implementation is run in.

    Misuse raises instead of reporting: TypeError for a callable of the wrong
    signature or a NumPy function given without adjoints, pmach.Error for a
    module or tensor off the CPU or parameters that do not fit.

    Returns a pmach.Report: the laws on the implementation, then its
    agreement with the model. Each law runs `cases` random cases, or fewer
    when they would pass more than 2^25 values through the implementation
    (a Linear 1024 runs 3 to 7, every layer at least 2; docs/formats.md §3):
    such a row's ``cases`` are those run, and its detail says "ran 3 of 100
    cases: scaled to the layer's size (…)", as does ``str(report)``. A
    failing row's ``row.counterexample`` is a dict name → ndarray: the
    shrunk case of a law (w, φ, g, … in the model's shapes), or for CONF-SPAN-DIFF the array "implemented − intended" of
    coefficients on target × source × parameter axes; ``row.scalars`` holds
    the case number and the two sides.
    """
    start = time.perf_counter()
    cases = _int(cases, "cases", "check")
    if not 1 <= cases <= _MAX_CASES:
        raise _pmach.Error(f"check: cases is {cases}, expected 1 to {_MAX_CASES} (the command's bound)")
    if isinstance(model, _pmach.Layer):
        if backward is not None:
            raise _pmach.Error("check: backward= is for machines; a layer takes transpose= and gradient=")
        parts = _layer_parts(model, forward, transpose, gradient, cases, seed, framework, dtype, layout)
    elif isinstance(model, _pmach.Machine):
        if transpose is not None or gradient is not None:
            raise _pmach.Error("check: transpose= and gradient= are for layers; a machine takes backward=")
        if _is_module(forward):
            raise TypeError("check: a machine's implementation is forward(w, y0, z0), not a torch.nn.Module")
        if dtype != "float64":
            raise _pmach.Error(f"dtype: is '{dtype}' for a machine, expected float64")
        if layout != "torch":
            raise _pmach.Error("check: layout= is for a torch.nn.Module; a machine takes the specification's layout")
        parts = _machine_parts(model, forward, backward, cases, seed, framework)
    else:
        raise _pmach.Error(f"check: model is {type(model).__name__}, expected a pmach.Layer or pmach.Machine")
    return Report(parts, time.perf_counter() - start)


def assert_check(model, forward, **options):
    """pmach.check for tests: returns the report when it passed, else raises
    AssertionError with the summary and the failing rows."""
    report = check(model, forward, **options)
    if not report.passed:
        raise AssertionError(f"pmach.check of {_name(forward)} failed\n{report!r}")
    return report


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
