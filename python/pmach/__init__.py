"""pmach: parametric machines and layers as parametric spans, from Python.

A thin skin over the C++ reference implementation of Vertechi & Bergomi,
"Machines of finite depth" and "Neural network layers as parametric spans":

- models: ``pmach.load(path)``, the layer constructors ``pmach.layers.*``
  and the seed machines ``pmach.DenseMachine``, ``pmach.ConvMachine``,
  ``pmach.RecurMachine``; ``model.forward``/``model.backward`` over NumPy
  arrays, ``model.save(path)``;
- validation: ``pmach.check(model, forward, ...)`` runs the laws on a PyTorch
  or NumPy implementation and compares it with the model; a failing row's
  ``row.counterexample`` gives its tensors as NumPy arrays;
  ``pmach.recover(forward, ...)`` returns the span a black box implements;
- ``pmach.torch``: torch.nn.Modules that run the C++ kernels (import it
  explicitly: ``import pmach.torch``).

Errors are ``pmach.Error`` (a ValueError) with the one-line message of the
``pmach`` command.
"""
from . import layers
from ._check import check, recover
from ._machines import ConvMachine, DenseMachine, RecurMachine
from ._pmach import Error, Layer, Machine, Report, SpanDiff, load, span_diff

__all__ = ["Error", "Layer", "Machine", "Report", "SpanDiff", "load", "span_diff", "layers", "DenseMachine",
           "ConvMachine", "RecurMachine", "check", "recover"]
