"""The code blocks of docs/tutorials/audit-a-ported-model.md run, in order, in
one namespace; the output the page shows is the output they print, with the
durations cut from the rows (the page says so)."""
import re

import pmach
from conftest import SOURCE
from tutorial_page import run

PAGE = SOURCE / "docs" / "tutorials" / "audit-a-ported-model.md"


def test_audit_tutorial_runs_and_shows_its_output():
    try:
        code, printed, shown = run(PAGE)
    finally:
        pmach._model._SPECS.pop(next((t for t in pmach._model._SPECS if t.__name__ == "Scale"), None), None)
    assert len(code) == 3
    printed = [re.sub(r" in \d+\.\d\d s$", "", line) for line in printed]
    assert shown and all(line in printed for line in shown), [line for line in shown if line not in printed]
