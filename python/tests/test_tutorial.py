"""The code blocks of docs/tutorials/validate-a-pytorch-layer.md run, in
order, in one namespace; the output the page shows is the output they print."""
from conftest import SOURCE
from tutorial_page import run

PAGE = SOURCE / "docs" / "tutorials" / "validate-a-pytorch-layer.md"


def test_tutorial_runs_and_shows_its_output():
    code, printed, shown = run(PAGE)
    assert len(code) == 4
    assert shown and all(line in printed for line in shown)
