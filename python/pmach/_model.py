"""pmach.check_model: every layer of a PyTorch model against the layer its
hyperparameters say it is.

The model runs once on the example input; forward hooks record the input
shape of each leaf module (a module without children; a module with children
and parameters of its own gets a row too, not checked). A leaf whose type
(or a base class of it) has a specification function is checked by
pmach.check at that shape; any other leaf gets a row that says it was not
checked, never a pass. The wiring between leaves (the forward of a module
with children: residual sums, reshapes) is the model's own code and is not
checked.

A specification function takes the module and the shape of one input sample
(without the batch axis) and returns a pmach.Layer; the built-in ones use
the pmach.layers constructors in PyTorch's own layout (layout="torch"), so
that the module's arrays are compared as they are.
"""
import sys
import time

from . import _module, _pmach, layers
from ._check import check
from ._module import module_name

_SPECS = {}


def register(module_type, spec_fn, *, layout="torch"):
    """Adds a module type to pmach.check_model: spec_fn(module, input_shape)
    returns the pmach.Layer it should implement (input_shape is one
    sample's shape as the module sees it, without the batch axis), or None
    for a module it cannot specify. layout is the specification's, as in
    pmach.check: "torch" (the module's own arrays: a model file with
    "layout": "torch", or an edge list on them) or "channels_last" (the
    pmach.layers constructors). A subclass of a registered type is checked
    with its base's function unless it has its own."""
    if not isinstance(module_type, type) or not callable(spec_fn):
        raise TypeError("register: expected a module type and a callable spec_fn(module, input_shape)")
    _module.Layout(layout)  # refuses an unknown layout now rather than at the check
    _SPECS[module_type] = (spec_fn, layout)


def _spec_fn(module):
    for t in type(module).__mro__:
        if t in _SPECS:
            return _SPECS[t]
    return None


class Unspecified(Exception):
    """A module of a registered type with options no constructor covers."""


def _padding(module, kernel, dilation):
    p = module.padding
    if p == "valid":
        return 0
    if p == "same":  # PyTorch puts the odd pixel of a total padding at the end
        total = [d * (k - 1) for k, d in zip(kernel, dilation)]
        return [(t // 2, t - t // 2) for t in total]
    return list(p)


def _conv(module, shape):
    k, d = list(module.kernel_size), list(module.dilation)
    return layers.conv(tuple(shape[1:]), module.in_channels, module.out_channels, k, stride=list(module.stride),
                       dilation=d, padding=_padding(module, k, d), groups=module.groups,
                       padding_mode=module.padding_mode, layout="torch")


def _conv_transpose(module, shape):
    """PyTorch's ConvTransposeNd on the input extents seen (output_padding
    at the end of each axis)."""
    if module.padding_mode != "zeros":  # PyTorch itself accepts no other
        raise Unspecified(f"padding_mode '{module.padding_mode}' has no constructor")
    k, d, s, p = (list(v) for v in (module.kernel_size, module.dilation, module.stride, module.padding))
    return layers.conv_transpose(tuple(shape[1:]), module.in_channels, module.out_channels, k, stride=s,
                                 dilation=d, padding=p, output_padding=list(module.output_padding),
                                 groups=module.groups, layout="torch")


def _linear(module, shape):
    if len(shape) != 1:
        raise Unspecified(f"input of shape {tuple(shape)} per sample (a dense layer is checked on vectors)")
    return layers.dense(module.in_features, module.out_features, layout="torch")


def _avg_pool(module, shape):
    if getattr(module, "divisor_override", None) is not None:
        raise Unspecified("divisor_override has no constructor")
    r = len(shape) - 1

    def axes(v):
        return [v] * r if isinstance(v, int) else list(v)
    return layers.avg_pool(tuple(shape[1:]), shape[0], axes(module.kernel_size), stride=axes(module.stride),
                           padding=axes(module.padding), count_include_pad=module.count_include_pad,
                           ceil_mode=module.ceil_mode, layout="torch")


def _upsample(module, shape):
    """nn.Upsample: nearest, linear, bilinear or trilinear, to a size or by
    an integer scale factor (a fractional one maps coordinates by the factor
    itself, not by the ratio of the sizes: no constructor)."""
    spatial = tuple(shape[1:])
    if module.mode not in ("nearest", "linear", "bilinear", "trilinear"):
        raise Unspecified(f"mode '{module.mode}' has no constructor")
    align = bool(module.align_corners)
    if module.size is not None:
        return layers.interpolate(spatial, shape[0], module.size, mode=module.mode, align_corners=align,
                                  layout="torch")
    factors = module.scale_factor if isinstance(module.scale_factor, tuple) else [module.scale_factor] * len(spatial)
    if any(float(f) != int(f) for f in factors):
        raise Unspecified(f"scale_factor {module.scale_factor} is not an integer")
    return layers.interpolate(spatial, shape[0], scale_factor=[int(f) for f in factors], mode=module.mode,
                              align_corners=align, layout="torch")


def _pixel_shuffle(module, shape):
    r = module.upscale_factor
    return layers.pixel_shuffle(tuple(shape[1:]), shape[0] // r ** (len(shape) - 1), r, layout="torch")


def _pixel_unshuffle(module, shape):
    return layers.pixel_unshuffle(tuple(shape[1:]), shape[0], module.downscale_factor, layout="torch")


def _unfold_args(module):
    return dict(dilation=module.dilation, padding=module.padding, stride=module.stride, layout="torch")


def _unfold(module, shape):
    """nn.Unfold on (C, *spatial)."""
    return layers.unfold(tuple(shape[1:]), shape[0], module.kernel_size, **_unfold_args(module))


def _fold(module, shape):
    """nn.Fold on (C * K, blocks), C from K, the kernel's size."""
    size = module.output_size if isinstance(module.output_size, tuple) else (module.output_size,) * 2
    k = module.kernel_size if isinstance(module.kernel_size, tuple) else (module.kernel_size,) * len(size)
    count = 1
    for n in k:
        count *= n
    if shape[0] % count:
        raise Unspecified(f"input of {shape[0]} rows is no multiple of the kernel's {count} taps")
    return layers.fold(size, shape[0] // count, k, **_unfold_args(module))


def _register_builtins():
    """The PyTorch types pmach knows, unless the user registered them first
    (torch is imported by the first check_model, not by import pmach)."""
    import torch.nn as nn
    known = {_conv: (nn.Conv1d, nn.Conv2d, nn.Conv3d),
             _conv_transpose: (nn.ConvTranspose1d, nn.ConvTranspose2d, nn.ConvTranspose3d),
             _linear: (nn.Linear,), _avg_pool: (nn.AvgPool1d, nn.AvgPool2d, nn.AvgPool3d),
             _upsample: (nn.Upsample,), _pixel_shuffle: (nn.PixelShuffle,),
             _pixel_unshuffle: (nn.PixelUnshuffle,), _unfold: (nn.Unfold,), _fold: (nn.Fold,)}
    for fn, types in known.items():
        for t in types:
            _SPECS.setdefault(t, (fn, "torch"))


_STATUS_WIDTH = 11


class ModelReport:
    """The audit of a model by pmach.check_model: one row per leaf module.

    ``rows`` lists dicts with the keys module (its name in the model), type,
    input (one sample's shape), status ("passed", "failed", "not checked",
    "not called", "not compared" or "ignored"), detail and report (the module's pmach.Report, or
    None); ``passed`` is True when every leaf was checked and passed (a
    type given in ignore= counts as checked); ``failed`` and ``unchecked``
    list the rows that failed and were not checked; ``str(report)`` is the
    table with the failing checks' tables, ``repr(report)`` its summary and failing rows; ``duration`` the
    seconds the audit took.
    """

    def __init__(self, rows, duration):
        self.rows = rows
        self.duration = duration

    @property
    def failed(self):
        """The rows of the modules that failed their check."""
        return [r for r in self.rows if r["status"] == "failed"]

    @property
    def unchecked(self):
        """The rows of the modules that were not checked (no specification,
        not called on the example input, or checked without a comparison with
        the specification)."""
        return [r for r in self.rows if r["status"] in ("not checked", "not called", "not compared")]

    @property
    def passed(self):
        """True when every leaf module was checked (or ignored) and passed."""
        return any(r["status"] == "passed" for r in self.rows) and not self.failed and not self.unchecked

    def summary(self):
        """One line: the counts of modules by status and the duration."""
        counts = {}
        for r in self.rows:
            counts[r["status"]] = counts.get(r["status"], 0) + 1
        text = ", ".join(f"{n} {s}" for s, n in counts.items())
        return f"{len(self.rows)} modules: {text} in {self.duration:.2f} s"

    def __str__(self):
        wm = max([6] + [len(r["module"]) for r in self.rows])
        wt = max([4] + [len(r["type"]) for r in self.rows])
        wi = max([5] + [len(str(r["input"])) for r in self.rows])

        def line(m, t, i, s, d):
            return f"{m:<{wm}}  {t:<{wt}}  {i:<{wi}}  {s:<{_STATUS_WIDTH}}  {d}".rstrip()
        out = [line("module", "type", "input", "status", "detail")]
        out += [line(r["module"], r["type"], str(r["input"]), r["status"], r["detail"]) for r in self.rows]
        for r in self.failed:
            out += ["", f"{r['module']} ({r['type']}):", r["report"].failing_text().rstrip()]
        out.append(self.summary())
        return "\n".join(out)

    def __repr__(self):
        lines = [f"<pmach.ModelReport {'passed' if self.passed else 'FAILED'}: {self.summary()}"]
        for r in self.failed + self.unchecked:
            lines.append(f"  {r['module']} ({r['type']}): {r['status']}: {r['detail']}")
        return "\n".join(lines) + ">"

    def __bool__(self):
        return self.passed


def _leaves(model):
    """The leaf modules, and the modules with children that also hold
    parameters of their own (whose use in their forward is not a child's)."""
    def own_parameters(m):
        return any(True for _ in m.parameters(recurse=False))
    return [(name or type(model).__name__, m) for name, m in model.named_modules()
            if not list(m.children()) or own_parameters(m)]


def _input_shapes(model, example_input, leaves):
    """The first input shape each leaf sees (one sample, no batch axis)."""
    import torch
    shapes = {}

    def hook(module, args, output):
        if id(module) not in shapes and args and isinstance(args[0], torch.Tensor):
            shapes[id(module)] = tuple(args[0].shape[1:])
    handles = [m.register_forward_hook(hook) for _, m in leaves]
    try:
        with torch.no_grad():
            model(example_input)
    finally:
        for h in handles:
            h.remove()
    return shapes


def _module_row(name, module, shape, ignore, cases, seed, dtype):
    row = {"module": name, "type": module_name(module), "input": shape, "report": None}
    if shape is None:
        return dict(row, status="not called", detail="the example input does not reach it")
    if isinstance(module, ignore):
        return dict(row, status="ignored", detail="its type is in ignore=")
    if list(module.children()):
        return dict(row, status="not checked", detail="parameters of its own beside its child modules")
    known = _spec_fn(module)
    if known is None:
        return dict(row, status="not checked", detail="no specification")
    spec_fn, layout = known
    try:
        spec = spec_fn(module, shape)
    except Unspecified as e:
        return dict(row, status="not checked", detail=f"no specification: {e}")
    if spec is None:
        return dict(row, status="not checked", detail="its specification function gave None")
    report = check(spec, module, cases=cases, seed=seed, dtype=dtype, layout=layout)
    if not report.passed:
        return dict(row, status="failed", detail=report.summary(), report=report)
    missing = _not_compared(report)
    if missing:
        return dict(row, status="not compared", detail=missing, report=report)
    return dict(row, status="passed", detail=report.summary(), report=report)


_COMPARISONS = ("CONF-SPAN-DIFF", "CONF-EQUAL")


def _not_compared(report):
    """Why a passing report compared some part of the module with nothing
    (e.g. recovery refused at its size), or "": a row passes only when every
    part was compared with its specification."""
    for subject in dict.fromkeys(r["subject"] for r in report.rows):
        rows = [r for r in report.rows if r["subject"] == subject and r["law"] in _COMPARISONS]
        if not any(r["status"] == "passed" for r in rows):
            why = "; ".join(r["detail"] for r in rows if r["detail"]) or "no comparison row"
            return f"{subject} was not compared with its specification: {why}"
    return ""


def _progress(enabled):
    """A line on stderr naming the module being checked, rewritten in place
    (a terminal's; progress=None enables it when stderr is one)."""
    if enabled is None:
        enabled = sys.stderr.isatty()
    width = [0]

    def show(text):
        if enabled:
            sys.stderr.write("\r" + text.ljust(width[0]) if text else "\r" + " " * width[0] + "\r")
            sys.stderr.flush()
            width[0] = max(width[0], len(text))
    return show


def check_model(model, example_input, *, cases=20, seed=1, dtype="float64", ignore=(), progress=None):
    """Audits a PyTorch model: each leaf module against the layer its type
    and hyperparameters specify, at the input shape it sees on
    example_input (a batch), by pmach.check. Known types: Conv1d/2d/3d
    (every padding_mode, stride, dilation, groups, padding "same"/"valid"),
    ConvTranspose1d/2d/3d, Linear, AvgPool1d/2d/3d (count_include_pad,
    ceil_mode), Upsample (nearest, linear, bilinear, trilinear; a size or an
    integer scale factor), PixelShuffle, PixelUnshuffle, Unfold, Fold;
    pmach.register adds others. A leaf of another type, or with options no
    constructor covers, is "not checked"; a leaf the example input does not
    reach is "not called"; neither is a pass. ignore= is a tuple of types
    left out of the audit on purpose (e.g. nonlinearities). progress=True
    shows the module being checked on a line of stderr (None: when stderr
    is a terminal). Returns a pmach.ModelReport; print it for one row per
    module.
    """
    import torch
    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"check_model: model is {type(model).__name__}, expected a torch.nn.Module")
    if not isinstance(example_input, torch.Tensor):
        raise TypeError(f"check_model: example_input is {type(example_input).__name__}, expected a torch.Tensor "
                        "(a batch)")
    if example_input.device.type != "cpu":
        raise _pmach.Error(f"check_model: example_input is on {example_input.device}, expected the CPU")
    ignore = tuple(ignore)
    _register_builtins()
    start = time.perf_counter()
    leaves = _leaves(model)
    shapes = _input_shapes(model, example_input, leaves)
    show = _progress(progress)
    rows = []
    for k, (name, m) in enumerate(leaves):
        show(f"pmach.check_model: {k + 1}/{len(leaves)} {name} ({module_name(m)})")
        rows.append(_module_row(name, m, shapes.get(id(m)), ignore, cases, seed, dtype))
    show("")
    return ModelReport(rows, time.perf_counter() - start)
