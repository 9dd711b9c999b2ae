"""The build of the Python package pmach (pyproject.toml): the extension
pmach._pmach and pmach/_version.py come from the project's CMake (target
pmach_python, python/CMakeLists.txt), the pure-Python modules from
python/pmach. The version is project()'s in CMakeLists.txt.

PMACH_CMAKE_BUILD_DIR names a CMake build tree to build in (an existing one,
e.g. build/ after scripts/main.sh, is reused as configured); by default a
fresh one under setuptools' build directory. PMACH_CMAKE_ARGS adds
configure arguments (split on spaces)."""
import os
import pathlib
import re
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = pathlib.Path(__file__).resolve().parent


def project_version():
    text = (ROOT / "CMakeLists.txt").read_text()
    m = re.search(r"project\(\s*\w+\s+VERSION\s+([0-9][0-9.]*)", text)
    if not m:
        raise RuntimeError("CMakeLists.txt: no project(... VERSION x.y.z)")
    return m.group(1)


class CMakeBuild(build_ext):
    """Builds pmach._pmach by running CMake on the target pmach_python."""

    def build_extension(self, ext):
        tree = pathlib.Path(os.environ.get("PMACH_CMAKE_BUILD_DIR") or pathlib.Path(self.build_temp) / "cmake")
        tree = tree if tree.is_absolute() else ROOT / tree
        if not (tree / "CMakeCache.txt").exists():
            args = ["cmake", "-S", str(ROOT), "-B", str(tree), "-DCMAKE_BUILD_TYPE=Release",
                    "-DPM_BUILD_TESTS=OFF", "-DPM_BUILD_EXAMPLES=OFF", "-DPM_BUILD_BENCHMARKS=OFF",
                    "-DPM_PROOFS=OFF", "-DPM_INSTALL=OFF", f"-DPython_EXECUTABLE={sys.executable}"]
            if shutil.which("ninja"):
                args += ["-G", "Ninja"]
            args += os.environ.get("PMACH_CMAKE_ARGS", "").split()
            subprocess.run(args, check=True)
        jobs = str(self.parallel or os.cpu_count() or 1)
        subprocess.run(["cmake", "--build", str(tree), "--target", "pmach_python", "-j", jobs], check=True)
        built = tree / "python" / "pmach"
        dest = pathlib.Path(self.get_ext_fullpath(ext.name)).parent
        dest.mkdir(parents=True, exist_ok=True)
        shutil.copy2(built / pathlib.Path(self.get_ext_filename(ext.name)).name, dest)
        shutil.copy2(built / "_version.py", dest)


setup(version=project_version(), ext_modules=[Extension("pmach._pmach", sources=[])],
      cmdclass={"build_ext": CMakeBuild})
