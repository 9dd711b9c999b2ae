"""Runs the python blocks of a tutorial page, in order, in one namespace, and
gives what they printed beside the lines the page's text blocks show."""
import contextlib
import io
import re


def blocks(page, kind):
    return re.findall(rf"```{kind}\n(.*?)```", page.read_text(), flags=re.S)


def run(page):
    """(python blocks, printed lines, shown lines)."""
    code = blocks(page, "python")
    printed = io.StringIO()
    namespace = {}
    with contextlib.redirect_stdout(printed):
        for block in code:
            exec(compile(block, str(page), "exec"), namespace)
    shown = [line for block in blocks(page, "text") for line in block.splitlines()]
    return code, printed.getvalue().splitlines(), shown
