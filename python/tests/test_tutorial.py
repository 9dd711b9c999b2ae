"""The code blocks of docs/tutorials/validate-a-pytorch-layer.md run, in
order, in one namespace; the output the page shows is the output they print."""
import contextlib
import io
import re

from conftest import SOURCE

PAGE = SOURCE / "docs" / "tutorials" / "validate-a-pytorch-layer.md"


def blocks(kind):
    return re.findall(rf"```{kind}\n(.*?)```", PAGE.read_text(), flags=re.S)


def test_tutorial_runs_and_shows_its_output():
    code = blocks("python")
    assert len(code) == 4
    printed = io.StringIO()
    namespace = {}
    with contextlib.redirect_stdout(printed):
        for block in code:
            exec(compile(block, str(PAGE), "exec"), namespace)
    shown = [line for block in blocks("text") for line in block.splitlines()]
    assert shown and all(line in printed.getvalue().splitlines() for line in shown)
