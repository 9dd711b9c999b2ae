"""pmach: parametric machines and layers as parametric spans, from Python.

A thin skin over the C++ reference implementation of Vertechi & Bergomi,
"Machines of finite depth" and "Neural network layers as parametric spans":

- models: ``pmach.load(path)``, the layer constructors ``pmach.layers.*``
  and the seed machines ``pmach.DenseMachine``, ``pmach.ConvMachine``,
  ``pmach.RecurMachine``; ``model.forward``/``model.backward`` over NumPy
  arrays, ``model.save(path)``;
- validation: ``pmach.check(model, forward, ...)`` runs the laws on a PyTorch
  function, a torch.nn.Module or a NumPy implementation and compares it with
  the model; ``pmach.assert_check`` is the same for tests;
  ``pmach.check_model(model, example_input)`` audits every layer of a
  PyTorch model against its hyperparameters (``pmach.register`` adds a
  module type); a failing row's ``row.counterexample`` gives its tensors as
  NumPy arrays; ``pmach.recover(forward, ...)`` returns the span a black box
  implements;
- ``pmach.torch``: torch.nn.Modules that run the C++ kernels (import it
  explicitly: ``import pmach.torch``).

Errors are ``pmach.Error`` (a ValueError) with the one-line message of the
``pmach`` command; misuse of a callable is a TypeError.
"""
from . import layers
from ._check import assert_check, check, recover
from ._machines import ConvMachine, DenseMachine, RecurMachine
from ._model import ModelReport, check_model, register
from ._pmach import Error, Layer, Machine, SpanDiff, load, span_diff
from ._report import Report
from ._version import __version__

__all__ = ["Error", "Layer", "Machine", "Report", "ModelReport", "SpanDiff", "load", "span_diff", "layers",
           "DenseMachine", "ConvMachine", "RecurMachine", "check", "assert_check", "check_model", "register",
           "recover"]
