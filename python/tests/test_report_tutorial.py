"""The shell blocks of docs/tutorials/read-a-conformance-report.md run, in
order, against the built pmach, from a folder where examples/ is the
repository's: each line is one command, which must exit 0 unless the line
before it is a comment `# exit status N`; the text block after a shell block
shows lines that its commands print."""
import os
import pathlib
import re
import subprocess

import pytest

from conftest import SOURCE

PAGE = SOURCE / "docs" / "tutorials" / "read-a-conformance-report.md"
PMACH = os.environ.get("PMACH_CLI")


def steps():
    """(commands, shown lines) per shell block; commands are (line, expected exit)."""
    blocks = re.findall(r"```(sh|text)\n(.*?)```", PAGE.read_text(), flags=re.S)
    out = []
    for kind, body in blocks:
        if kind == "text":
            assert out and out[-1][1] is None, "a text block follows a shell block"
            out[-1] = (out[-1][0], body.splitlines())
            continue
        commands, expect = [], 0
        for line in body.splitlines():
            m = re.fullmatch(r"# exit status (\d+)(:.*)?", line)
            if m:
                expect = int(m.group(1))
            elif line.strip():
                commands.append((line, expect))
                expect = 0
        out.append((commands, None))
    return out


@pytest.mark.skipif(PMACH is None, reason="PMACH_CLI is not set (no pmach target)")
def test_tutorial_commands_run_and_show_their_output(tmp_path):
    (tmp_path / "examples").symlink_to(SOURCE / "examples")
    env = dict(os.environ, PATH=f"{pathlib.Path(PMACH).parent}:/usr/bin:{os.environ['PATH']}")
    found = steps()
    assert len(found) == 7 and sum(len(c) for c, _ in found) == 9
    for commands, shown in found:
        printed = []
        for line, expect in commands:
            r = subprocess.run(["bash", "-c", line], cwd=tmp_path, env=env, capture_output=True, text=True,
                               timeout=120)
            assert r.returncode == expect, (line, r.stderr)
            if expect == 2:
                assert r.stdout == "" and r.stderr.count("\n") == 1
            printed += r.stdout.splitlines()
        for s in shown or []:
            assert s in printed, (s, commands)
