"""`pip install --no-build-isolation .` into a fresh virtual environment with
the system's site packages, offline: the installed pmach is the venv's, its
version is the C++ library's, and its stubs and py.typed marker ship. pip
reuses the CMake build tree of the pmach under test
(PMACH_CMAKE_BUILD_DIR, setup.py), so nothing is compiled again."""
import json
import os
import pathlib
import subprocess

import pmach
from conftest import SOURCE


def test_pip_installs_pmach_into_a_virtual_environment(tmp_path):
    build = pathlib.Path(pmach._pmach.__file__).resolve().parents[2]
    assert (build / "CMakeCache.txt").exists(), f"{build} is not the CMake build tree of the pmach under test"
    venv = tmp_path / "venv"
    subprocess.run(["/usr/bin/python3", "-m", "venv", "--system-site-packages", str(venv)], check=True)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PMACH_CMAKE_BUILD_DIR"] = str(build)
    python = str(venv / "bin" / "python")
    subprocess.run([python, "-m", "pip", "install", "--no-build-isolation", "--no-deps", "--no-index", "--quiet",
                    str(SOURCE)], check=True, env=env, cwd=tmp_path)
    probe = ("import json, pathlib, pmach; r = pmach.check(pmach.layers.dense(2, 2), lambda w, x: x @ w, cases=2); "
             "d = pathlib.Path(pmach.__file__).parent; "
             "print(json.dumps([str(d), pmach.__version__, json.loads(r.to_json())['version'], r.passed, "
             "sorted(p.name for p in d.iterdir() if p.suffix in ('.pyi', '.typed'))]))")
    out = subprocess.run([python, "-c", probe], check=True, env=env, cwd=tmp_path, capture_output=True, text=True)
    where, version, cpp_version, passed, typing_files = json.loads(out.stdout)
    assert where.startswith(str(venv)) and passed
    assert version == cpp_version and version.count(".") == 2
    assert typing_files == ["__init__.pyi", "py.typed"]
