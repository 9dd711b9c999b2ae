"""Every public name of the package is documented."""
import inspect

import pmach
import pmach.layers
import pmach.torch


def public(obj):
    return [n for n in dir(obj) if not n.startswith("_")]


def test_every_public_name_has_a_docstring():
    names = [(pmach, n) for n in pmach.__all__] + [(pmach.layers, n) for n in pmach.layers.__all__]
    names += [(pmach.torch, n) for n in pmach.torch.__all__]
    missing = []
    for module, name in names:
        obj = getattr(module, name)
        if not (obj.__doc__ or "").strip():
            missing.append(f"{module.__name__}.{name}")
        if inspect.isclass(obj) and not issubclass(obj, BaseException) and module is pmach:
            for member in public(obj):
                if not (getattr(obj, member).__doc__ or "").strip():
                    missing.append(f"{module.__name__}.{name}.{member}")
    assert not missing, missing
    assert pmach.__doc__ and pmach.torch.__doc__ and pmach.layers.__doc__
