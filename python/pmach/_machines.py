"""The seed's machines (the authors' DenseMachine, ConvMachine, RecurMachine)."""
import json
import operator

from . import _pmach


def _int(value, what, who):
    """An integer argument: an int or a NumPy integer, never a float cut short."""
    if isinstance(value, bool):
        raise TypeError(f"pmach.{who}: {what} is a bool, expected an int")
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"pmach.{who}: {what} is a {type(value).__name__} ({value!r:.40}), "
                        "expected an int") from None


def _ints(values, what, who):
    """A list of integer arguments."""
    try:
        values = list(values)
    except TypeError:
        raise TypeError(f"pmach.{who}: {what} is a {type(values).__name__}, expected a list of "
                        "ints") from None
    return [_int(v, f"{what}[{k}]", who) for k, v in enumerate(values)]


def _plain(value):
    """NumPy scalars as the Python numbers JSON writes; anything else refused."""
    if hasattr(value, "item") and callable(value.item):
        return value.item()
    raise TypeError(f"is a {type(value).__name__}")


def _fields(dims, sigma, who, **more):
    fields = {"dims": _ints(dims, "dims", who), "sigma": sigma}
    fields.update(more)
    return fields


def _make(kind, fields, weights):
    try:
        text = json.dumps(fields, default=_plain, allow_nan=False)
    except TypeError as e:
        raise TypeError(f"pmach.{kind}: sigma holds a value that {e}, expected a name "
                        "(\"tanh\", …) or {\"polynomial\": [c0, c1, …]} of numbers") from None
    except ValueError:
        raise _pmach.Error(f"pmach.{kind}: sigma has a nan or inf coefficient, expected finite "
                           "numbers") from None
    m = _pmach._seed_machine(text, kind)
    if weights is not None:
        m.weights = weights
    return m


def DenseMachine(dims, sigma="tanh", *, weights=None):
    """DenseMachine(dims, sigma): N = sum(dims) channels in consecutive blocks,
    W of shape (N, N) (W[input, output]); only weights from an earlier block
    into a later one act. sigma: "identity", "tanh", "sigmoid", "relu",
    "softplus" or {"polynomial": [c0, c1, ...]}. Returns a pmach.Machine."""
    return _make("DenseMachine", _fields(dims, sigma, "DenseMachine"), weights)


def ConvMachine(dims, sigma, spatial, pad, *, weights=None):
    """ConvMachine(dims, sigma, spatial, pad): a size-preserving convolution on
    the grid `spatial` with pad = one (lo, hi) pair per axis (kernel lo+hi+1);
    space (*spatial, N), W of shape (*kernel, N, N)."""
    who = "ConvMachine"
    spatial = [spatial] if not hasattr(spatial, "__iter__") else spatial
    spatial = _ints(spatial, "spatial", who)
    try:
        pad = list(pad)
    except TypeError:
        raise TypeError(f"pmach.{who}: pad is a {type(pad).__name__}, expected one (lo, hi) pair "
                        "per spatial axis") from None
    pad = [_ints(p, f"pad[{k}]", who) for k, p in enumerate(pad)]
    return _make(who, _fields(dims, sigma, who, spatial=spatial, pad=pad), weights)


def RecurMachine(dims, sigma, length, pad, timeblock, *, weights=None):
    """RecurMachine(dims, sigma, length, pad, timeblock): causal time
    convolution with lags 0..pad, graded by (time block, channel block);
    space (length, N), W of shape (pad + 1, N, N)."""
    who = "RecurMachine"
    return _make(who, _fields(dims, sigma, who, length=_int(length, "length", who),
                              pad=_int(pad, "pad", who), timeblock=_int(timeblock, "timeblock", who)),
                 weights)
