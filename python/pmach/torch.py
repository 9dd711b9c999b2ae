"""PyTorch modules whose forward and backward run the pmach C++ kernels.

Each module holds a pmach model and a ``weight`` Parameter of the model's
parameter shape; a ``torch.autograd.Function`` calls the model's forward and
backward with ``kernels=True`` on the tensors' memory (CPU, float32 or
float64, no copy when contiguous). Results are bit-identical for any thread
count (src/pm/kernels/). A DenseMachine maps y0 of shape (n, N). A
ConvMachine and a RecurMachine take states channels last by default, the
library's layout, (n, *spatial, N) and (n, length, N); with
layout="channels_first" they take PyTorch's, (n, N, *spatial) and
(n, N, length), read without a copy whether contiguous or in the
torch.channels_last memory format, and return y, z in the memory format of
y0. A Layer maps (n, *source_shape) to (n, *target_shape). These modules run
unchanged under torch.nn.parallel.DistributedDataParallel on CPU (gloo),
deep-copy and pickle (torch.save of a module). Derivatives of every order
through a Layer are exact (gradient penalties, gradgradcheck); a second
derivative through a machine is refused. A process forked after a kernel
call (multiprocessing with fork) runs the kernels on one thread in the child.
"""
import numpy as np
import torch

from . import _machines, _pmach

__all__ = ["DenseMachine", "ConvMachine", "RecurMachine", "Layer", "MachineModule"]

_PRECISION = {torch.float32: "float", torch.float64: "double"}
_LAYOUTS = ("channels_last", "channels_first")


def _checked(t, what, who, dtype):
    """The tensor, detached, after the checks that make its memory the kernels'."""
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"{who}: {what} is a {type(t).__name__}, expected a torch.Tensor")
    if t.device.type != "cpu":
        raise _pmach.Error(f"{who}: {what} is on {t.device}, expected a CPU tensor "
                           "(the pmach kernels run on the CPU; call .cpu())")
    if t.dtype != dtype:
        raise _pmach.Error(f"{who}: {what} has dtype {t.dtype}, expected {dtype} "
                           "(the dtype of the weight; float32 or float64)")
    if t.numel() > _pmach._max_values:  # before .contiguous() pays for an expanded tensor
        raise _pmach.Error(f"{who}: {what} has {t.numel()} values, expected at most "
                           f"{_pmach._max_values} per array")
    return t.detach()


def _array(t, what, who, dtype):
    """The tensor's memory as a NumPy array, after the checks that make it so."""
    return _checked(t, what, who, dtype).contiguous().numpy()


class _Layout:
    """How one machine call hands its states to the kernels. With
    layout="channels_first" a state (n, N, *positions) is read in place
    channels first when y0 is contiguous, or through its permutation to
    (n, *positions, N) when that is contiguous (torch.channels_last memory),
    so that neither memory format is copied; the results come back in y0's
    format. Channels last is the library's layout, passed as it is."""

    def __init__(self, layout, space_shape, y0, z0):
        """y0 and z0 (or None) are checked tensors."""
        self.rank, self.space_shape = len(space_shape), space_shape
        self.move = (layout == "channels_first" and not y0.is_contiguous()
                     and self._shaped(y0) and (z0 is None or self._shaped(z0))
                     and self._to_kernel(y0).is_contiguous())
        self.channels_first = layout == "channels_first" and not self.move

    def _shaped(self, t):
        """Whether t is a state channels first. Only such states are permuted,
        so that the model names a wrong shape in the layout of the call."""
        channels_first = (self.space_shape[-1], *self.space_shape[:-1])
        return t.dim() in (self.rank, self.rank + 1) and tuple(t.shape[-self.rank:]) == channels_first

    def _to_kernel(self, t):
        return t.movedim(t.dim() - self.rank, -1)

    def array(self, t):
        """A checked state as the kernels' NumPy array: a copy only when its
        strides are neither layout's."""
        return (self._to_kernel(t) if self.move else t).contiguous().numpy()

    def tensor(self, a):
        """A state from the kernels in the layout of the call."""
        t = torch.from_numpy(a)
        return t.movedim(-1, t.dim() - self.rank) if self.move else t


def _precision(weight, who):
    if weight.device.type != "cpu":
        raise _pmach.Error(f"{who}: weight is on {weight.device}, expected a CPU tensor "
                           "(the pmach kernels run on the CPU; call .cpu())")
    if weight.dtype not in _PRECISION:
        raise _pmach.Error(f"{who}: weight has dtype {weight.dtype}, expected torch.float32 or "
                           "torch.float64")
    return _PRECISION[weight.dtype]


class _MachineFunction(torch.autograd.Function):
    """(y, z) = forward(w, y0, z0) on the kernels; backward by the dual sweep."""

    @staticmethod
    def forward(ctx, model, who, weight, y0, z0, layout="channels_last"):
        precision = _precision(weight, who)
        w = _array(weight, "weight", who, weight.dtype)
        y0 = _checked(y0, "y0", who, weight.dtype)
        z0 = None if z0 is None else _checked(z0, "z0", who, weight.dtype)
        states = _Layout(layout, model.space_shape, y0, z0)
        a, b = states.array(y0), None if z0 is None else states.array(z0)
        y, z, slope = model.forward(a, b, w, precision=precision, kernels=True, keep_slope=True,
                                    channels_first=states.channels_first)
        ctx.model, ctx.who, ctx.precision, ctx.has_z0 = model, who, precision, z0 is not None
        ctx.states = states
        ctx.slope = slope  # sigma'(y) for the dual sweep where the kernel keeps it, else None
        y, z = states.tensor(y), states.tensor(z)
        # Saved as tensors, so that autograd refuses a backward after they
        # were modified in place.
        ctx.save_for_backward(weight, y, z)
        return y, z

    @staticmethod
    def backward(ctx, gy, gz):
        # The dual sweep runs on NumPy memory, outside autograd's graph, and
        # its derivative needs sigma'': a second derivative through it would
        # come out silently zero, so it is refused.
        if torch.is_grad_enabled():
            raise RuntimeError(f"{ctx.who}: a second derivative through a pmach machine (backward "
                               "with create_graph=True, e.g. a gradient penalty) is not supported")
        weight, y, z = ctx.saved_tensors
        dtype, states = weight.dtype, ctx.states
        y, z = states.array(y), states.array(z)
        gy0, gz0, gw = ctx.model.backward(
            ybar=states.array(_checked(gy, "grad of y", ctx.who, dtype)),
            zbar=states.array(_checked(gz, "grad of z", ctx.who, dtype)),
            w=_array(weight, "weight", ctx.who, dtype), precision=ctx.precision,
            state=(y, z) if ctx.slope is None else (y, z, ctx.slope), kernels=True,
            channels_first=states.channels_first)
        return (None, None, torch.from_numpy(gw), states.tensor(gy0),
                states.tensor(gz0) if ctx.has_z0 else None, None)


# A layer is bilinear in (w, x): its forward L_w x, its transpose L_w^T g and
# its parameter gradient G(x, g) = sum_b grad_w <g_b, L_w x_b> are each
# bilinear, and each one's backward is made of the three again:
#   forward   (w, x) -> L_w x:   cotangent g gives (G(x, g), L_w^T g)
#   transpose (w, g) -> L_w^T g: cotangent a gives (G(a, g), L_w a)
#   gradient  (x, g) -> G(x, g): cotangent c gives (L_c^T g, L_c x)
# So derivatives of every order (a gradient penalty, gradgradcheck) are
# exact, and each runs on the span kernel.


def _keep(ctx, model, who, dtype, *tensors):
    """What a backward needs; the tensors saved so that autograd refuses a
    backward after they were modified in place (as torch.nn.Linear does)."""
    ctx.model, ctx.who, ctx.dtype = model, who, dtype
    ctx.precision = _PRECISION.get(dtype, "double")  # a wrong dtype is named by _array
    ctx.save_for_backward(*tensors)


def _kernel_args(ctx, tensors):
    """The (tensor, name) pairs as NumPy arrays for the kernels."""
    return [_array(t, what, ctx.who, ctx.dtype) for t, what in tensors]


class _LayerFunction(torch.autograd.Function):
    """L_w x on the span kernel; backward (G(x, g), L_w^T g)."""

    @staticmethod
    def forward(ctx, model, who, weight, x):
        _precision(weight, who)
        _keep(ctx, model, who, weight.dtype, weight, x)
        w, xa = _kernel_args(ctx, [(weight, "weight"), (x, "x")])
        return torch.from_numpy(model.forward(xa, w, precision=ctx.precision, kernels=True))

    @staticmethod
    def backward(ctx, g):
        weight, x = ctx.saved_tensors
        m, who = ctx.model, ctx.who
        if torch.is_grad_enabled():  # create_graph: this backward is differentiated in turn
            return (None, None, _LayerGradient.apply(m, who, x, g),
                    _LayerTranspose.apply(m, who, weight, g))
        xa, ga, w = _kernel_args(ctx, [(x, "x"), (g, "grad of the output"), (weight, "weight")])
        gx, gw = m.backward(xa, ga, w, precision=ctx.precision, kernels=True)
        return None, None, torch.from_numpy(gw), torch.from_numpy(gx)


class _LayerTranspose(torch.autograd.Function):
    """L_w^T g; backward (G(a, g), L_w a)."""

    @staticmethod
    def forward(ctx, model, who, weight, g):
        _precision(weight, who)
        _keep(ctx, model, who, weight.dtype, weight, g)
        w, ga = _kernel_args(ctx, [(weight, "weight"), (g, "grad of the output")])
        one = ga.shape == model.target_shape  # one sample, without the batch axis
        x_shape = model.source_shape if one else (ga.shape[0], *model.source_shape)
        gx, _ = model.backward(np.zeros(x_shape, dtype=ga.dtype), ga, w, precision=ctx.precision,
                               kernels=True)
        return torch.from_numpy(gx)

    @staticmethod
    def backward(ctx, a):
        weight, g = ctx.saved_tensors
        m, who = ctx.model, ctx.who
        return (None, None, _LayerGradient.apply(m, who, a, g), _LayerFunction.apply(m, who, weight, a))


class _LayerGradient(torch.autograd.Function):
    """G(x, g) = sum_b grad_w <g_b, L_w x_b> (independent of w); backward
    (L_c^T g, L_c x)."""

    @staticmethod
    def forward(ctx, model, who, x, g):
        _keep(ctx, model, who, x.dtype, x, g)
        xa, ga = _kernel_args(ctx, [(x, "x"), (g, "grad of the output")])
        _, gw = model.backward(xa, ga, np.ones(model.parameter_shape, dtype=xa.dtype),
                               precision=ctx.precision, kernels=True)
        return torch.from_numpy(gw)

    @staticmethod
    def backward(ctx, c):
        x, g = ctx.saved_tensors
        m, who = ctx.model, ctx.who
        return (None, None, _LayerTranspose.apply(m, who, c, g), _LayerFunction.apply(m, who, c, x))


def _initial_weight(model, dtype):
    """The model's weights; else Glorot-uniform weights (the authors'
    initialisation) from a seed drawn from torch's generator, so that
    torch.manual_seed fixes them. A layer without parameters has the one
    weight 1."""
    if model.weights is not None:
        return torch.from_numpy(np.array(model.weights)).to(dtype)
    if model.parameter_shape == ():
        return torch.ones((), dtype=dtype)
    model.init_weights(int(torch.randint(0, 2 ** 62, (1,)).item()))
    w = torch.from_numpy(np.array(model.weights)).to(dtype)
    model.weights = None
    return w


class MachineModule(torch.nn.Module):
    """A torch.nn.Module over any pmach.Machine: forward(y0, z0=None) -> (y, z)
    with states of shape (n, *machine.space_shape) and the Parameter
    ``weight`` of machine.parameter_shape. layout="channels_first" moves the
    last axis of space_shape (a machine's channels) first: states
    (n, N, *positions), y and z in the memory format of y0."""

    layout = "channels_last"  # what a module pickled before the keyword existed takes

    def __init__(self, machine, dtype=torch.float32, layout="channels_last"):
        super().__init__()
        if not isinstance(layout, str) or layout not in _LAYOUTS:
            raise _pmach.Error(f"{type(self).__name__}: layout is {layout!r}, expected "
                               "'channels_last' or 'channels_first'")
        self.machine = machine
        self.layout = layout
        self.weight = torch.nn.Parameter(_initial_weight(machine, dtype))

    def forward(self, y0, z0=None):
        return _MachineFunction.apply(self.machine, type(self).__name__, self.weight, y0, z0,
                                      self.layout)

    def extra_repr(self):
        return repr(self.machine) + ("" if self.layout == "channels_last" else f", layout={self.layout!r}")


class DenseMachine(MachineModule):
    """pmach.DenseMachine(dims, sigma) as a module: weight (N, N), y0 (n, N)."""

    def __init__(self, dims, sigma="tanh", dtype=torch.float32):
        super().__init__(_machines.DenseMachine(dims, sigma), dtype)


class ConvMachine(MachineModule):
    """pmach.ConvMachine(dims, sigma, spatial, pad) as a module: weight
    (*kernel, N, N), y0 (n, *spatial, N); with layout="channels_first"
    y0 (n, N, *spatial) as torch.nn.Conv2d takes, contiguous or
    torch.channels_last (either read without a copy), y and z in y0's
    memory format."""

    def __init__(self, dims, sigma, spatial, pad, dtype=torch.float32, layout="channels_last"):
        super().__init__(_machines.ConvMachine(dims, sigma, spatial, pad), dtype, layout)


class RecurMachine(MachineModule):
    """pmach.RecurMachine(dims, sigma, length, pad, timeblock) as a module:
    weight (pad + 1, N, N), y0 (n, length, N); with layout="channels_first"
    y0 (n, N, length) as torch.nn.Conv1d takes, y and z in y0's memory
    format."""

    def __init__(self, dims, sigma, length, pad, timeblock, dtype=torch.float32,
                 layout="channels_last"):
        super().__init__(_machines.RecurMachine(dims, sigma, length, pad, timeblock), dtype, layout)


class Layer(torch.nn.Module):
    """A catalogue layer (pmach.layers.*, pmach.load) as a module: forward(x)
    maps (n, *source_shape) to (n, *target_shape) with the Parameter
    ``weight`` of parameter_shape."""

    def __init__(self, layer, dtype=torch.float32):
        super().__init__()
        self.layer = layer
        self.weight = torch.nn.Parameter(_initial_weight(layer, dtype))

    def forward(self, x):
        return _LayerFunction.apply(self.layer, "pmach.torch.Layer", self.weight, x)

    def extra_repr(self):
        return repr(self.layer)
