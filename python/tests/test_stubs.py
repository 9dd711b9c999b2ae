"""The type stubs (python/pmach/__init__.pyi) name what the package has: the
stub's public names are pmach.__all__ and __version__, and each class's
public members are the runtime class's."""
import ast
import inspect

import pmach
from conftest import SOURCE

STUB = ast.parse((SOURCE / "python" / "pmach" / "__init__.pyi").read_text())


def public(names):
    return {n for n in names if not n.startswith("_")}


def defined(body):
    """The names a stub body defines: functions, classes, annotated and assigned names."""
    out = set()
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, ast.AnnAssign):
            out.add(node.target.id)
        elif isinstance(node, ast.Assign):
            out.update(t.id for t in node.targets)
        elif isinstance(node, ast.ImportFrom) and node.module is None:  # from . import layers as layers
            out.update(a.asname for a in node.names if a.asname)
    return out


def test_stub_names_are_the_packages_public_names():
    assert public(defined(STUB.body)) | {"__version__"} == set(pmach.__all__) | {"__version__"}
    assert "__version__" in defined(STUB.body)


def test_stub_classes_have_the_runtime_members():
    report = pmach.check(pmach.layers.dense(2, 2), lambda w, x: x @ w, cases=2)
    instances = {"Report": report, "ModelReport": pmach.ModelReport([], 0.0)}
    for node in STUB.body:
        if isinstance(node, ast.ClassDef) and not node.name.startswith("_") and node.name != "Error":
            cls = getattr(pmach, node.name)
            runtime = public(dir(cls)) | public(vars(instances[node.name]) if node.name in instances else ())
            assert public(defined(node.body)) == runtime, node.name


def test_stub_functions_take_the_runtime_parameters():
    for node in STUB.body:
        if isinstance(node, ast.FunctionDef) and not node.name.startswith("_"):
            f = getattr(pmach, node.name)
            a = node.args
            stub = [x.arg for x in a.posonlyargs + a.args + a.kwonlyargs]
            stub += [x.arg for x in (a.vararg, a.kwarg) if x]
            try:
                runtime = list(inspect.signature(f).parameters)
            except ValueError:  # a C++ function: its pybind11 signature line
                runtime = [p.split(":")[0].strip() for p in f.__doc__.split("(", 1)[1].split(")")[0].split(",")]
            assert stub == runtime, node.name
