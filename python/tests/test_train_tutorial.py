"""The code blocks of docs/tutorials/train-a-machine.md run, in order, from a
directory laid out as the repository root (src/, build/, examples/): the
shell blocks as commands (`pmach` is the built command), the C++ block as
train.cpp, the Python blocks in one namespace; the output the page shows is
the output they print. A `cmake` line is not rerun on the suite's own build
tree: the test checks that the tree is what it makes."""
import contextlib
import io
import os
import pathlib
import re
import subprocess

from conftest import SOURCE

PAGE = SOURCE / "docs" / "tutorials" / "train-a-machine.md"


def blocks(kind):
    return re.findall(rf"```{kind}\n(.*?)```", PAGE.read_text(), flags=re.S)


def build_dir():
    """The build tree of the pmach command the suite runs (PMACH_CLI =
    <build>/src/cli/pmach)."""
    cli = os.environ.get("PMACH_CLI")
    assert cli, "PMACH_CLI is not set: run through the ctest python_tests"
    return pathlib.Path(cli).resolve().parents[2]


def run(command, cwd):
    """A shell line of the page; `pmach` is the built command."""
    if command.startswith("cmake "):
        assert command == ("cmake -S . -B build -DPM_BUILD_EXAMPLES=ON && "
                           "cmake --build build --target train_sine")
        assert "PM_BUILD_EXAMPLES:BOOL=ON" in (cwd / "build" / "CMakeCache.txt").read_text()
        assert (cwd / "build" / "examples" / "train_sine").is_file()
        return ""
    command = re.sub(r"^pmach ", os.environ["PMACH_CLI"] + " ", command)
    done = subprocess.run(command, shell=True, cwd=cwd, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"{command}\n{done.stdout}\n{done.stderr}"
    return done.stdout


def test_train_tutorial_runs_and_shows_its_output(tmp_path, monkeypatch):
    for name, target in (("src", SOURCE / "src"), ("examples", SOURCE / "examples"),
                         ("build", build_dir())):
        (tmp_path / name).symlink_to(target)
    shell, cpp, python, text = blocks("sh"), blocks("cpp"), blocks("python"), blocks("text")
    assert (len(shell), len(cpp), len(python), len(text)) == (3, 1, 3, 1)
    commands = [[line for line in b.splitlines() if line.strip()] for b in shell]

    # 1. The shipped example: its first line as shown, and exit 0 (a tenfold fall).
    printed = "".join(run(c, tmp_path) for c in commands[0])
    assert text[0].strip() == printed.splitlines()[0]
    assert (tmp_path / "train_sine_loss.csv").read_text().startswith("step,loss\n")

    # 2. The C++ program, compiled and run as the page says: exit 0 is a tenfold fall.
    (tmp_path / "train.cpp").write_text(cpp[0])
    printed = "".join(run(c, tmp_path) for c in commands[1])
    shown = re.search(r"`(initial loss [^`]*)`", PAGE.read_text()).group(1)
    losses = re.search(r"initial loss ([0-9.]+), final loss ([0-9.]+) \(([0-9.]+)x lower\)", printed)
    assert losses, printed
    assert shown == (f"initial loss {float(losses[1]):.4g}, final loss {float(losses[2]):.2g} "
                     f"({float(losses[3]):.0f}x lower)")

    # 3. Python: the blocks in order, in one namespace, then the commands on the saved file.
    monkeypatch.chdir(tmp_path)
    namespace = {}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        for block in python:
            exec(compile(block, str(PAGE), "exec"), namespace)
    assert re.fullmatch(r"loss [0-9.]+ -> [0-9.]+\n", out.getvalue())
    printed = "".join(run(c, tmp_path) for c in commands[2])
    assert " 0 failed" in printed
    dot = (tmp_path / "sine_machine.dot").read_text()
    assert "summary of 18 points and 324 edges" in dot
