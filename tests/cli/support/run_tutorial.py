"""Runs the code blocks of a tutorial page in order, in one empty folder, as
a reader would: ```sh blocks with bash (errexit, pipefail; the built pmach
first on PATH), ```python blocks in one shared namespace (as
python/tests/test_tutorial.py runs its page). Every line of a ```text block
must occur in the output of the code block before it. Exit 0 when every
block ran and every shown line was printed; else 1, naming the block.

usage: run_tutorial.py PAGE.md PMACH_DIR WORK_DIR
"""
import contextlib
import io
import os
import re
import shutil
import subprocess
import sys


def main(page, pmach_dir, work):
    text = open(page, encoding="utf-8").read()
    blocks = re.findall(r"^```(sh|python|text)\n(.*?)^```$", text, flags=re.S | re.M)
    kinds = [k for k, _ in blocks]
    if kinds.count("sh") == 0 or kinds.count("text") == 0:
        print(f"{page}: expected sh and text blocks, found {kinds}")
        return 1
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    os.chdir(work)
    env = dict(os.environ, PATH=pmach_dir + os.pathsep + os.environ.get("PATH", ""))
    namespace = {}
    output, shown = None, 0
    for n, (kind, code) in enumerate(blocks, 1):
        where = f"{page}: block {n} ({kind})"
        if kind == "sh":
            run = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", code], env=env,
                                 capture_output=True, text=True)
            output = run.stdout + run.stderr
            if run.returncode != 0:
                print(f"{where}: exit code {run.returncode}\n{output}")
                return 1
        elif kind == "python":
            printed = io.StringIO()
            with contextlib.redirect_stdout(printed):
                exec(compile(code, where, "exec"), namespace)
            output = printed.getvalue()
        else:
            if output is None:
                print(f"{where}: no code block before it")
                return 1
            lines = output.splitlines()
            for line in code.splitlines():
                if line.strip() and line.rstrip() not in (l.rstrip() for l in lines):
                    print(f"{where}: the line\n  {line}\nwas not printed; the output was:\n{output}")
                    return 1
                shown += bool(line.strip())
    print(f"{page}: {len(blocks)} blocks ran, {shown} shown lines printed")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
