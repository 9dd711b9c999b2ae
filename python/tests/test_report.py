"""Reports people can use: the JSON report against docs/report.schema.json,
JUnit XML, the --law and --subject filters, the repro command of each
failure, the sparse counterexamples of the table, and the counterexamples
of pmach.check as NumPy arrays."""
import copy
import json
import re
import os
import pathlib
import shlex
import subprocess
import xml.etree.ElementTree as ET
from fractions import Fraction

import numpy as np
import pytest

import pmach
from conftest import DATA, SOURCE
from report_schema import errors

PMACH = os.environ.get("PMACH_CLI")
SCHEMA = json.loads((SOURCE / "docs" / "report.schema.json").read_text())
DENSE = str(DATA / "dense.json")
WRONG_SAMPLES = str(DATA / "samples_dense_wrong")
FAULTS = DATA / "faults"

needs_cli = pytest.mark.skipif(PMACH is None, reason="PMACH_CLI is not set (no pmach target)")


def pmach_cli(*args, cwd=None):
    return subprocess.run([PMACH, *map(str, args)], capture_output=True, text=True, cwd=cwd, timeout=120)


def report_of(*args):
    r = pmach_cli(*args, "--json")
    assert r.returncode in (0, 1), r.stderr
    return json.loads(r.stdout), r.returncode


def by_law(report):
    return {row["law"]: row for row in report["results"]}


def test_cli_is_given():
    # The ctest sets PMACH_CLI whenever pmach is built; without it the other
    # tests of this file would be skipped, which must not pass silently.
    assert PMACH is not None and pathlib.Path(PMACH).is_file()


@needs_cli
@pytest.mark.parametrize("args", [
    ("check", "--cases", "3"),
    ("check", DENSE, "--against", WRONG_SAMPLES),
    ("check", FAULTS / "conv2d.json", "--same-as", FAULTS / "conv2d_wrong_dilation.json", "--cases", "3"),
    ("check", DATA / "dense_machine.json", "--against", DATA / "samples_dense_machine_wrong", "--cases", "3"),
])
def test_json_reports_follow_the_schema(args):
    report, code = report_of(*args)
    assert errors(report, SCHEMA) == []
    assert report["schema_version"] == 1 and report["passed"] == (code == 0)
    # The failing reports carry what the schema describes: a counterexample and a repro line.
    failed = [r for r in report["results"] if r["status"] == "failed"]
    assert (code == 1) == bool(failed)
    for row in failed:
        assert row["repro"].startswith("pmach check ")


def test_python_reports_follow_the_schema():
    layer = pmach.layers.dense(3, 2)
    wrong = pmach.check(layer, lambda w, x: x @ w, transpose=lambda w, g: 2 * g @ w.T,
                        gradient=lambda x, g: x.T @ g, cases=10)
    report = json.loads(wrong.to_json())
    assert errors(report, SCHEMA) == []
    assert any("counterexample" in r for r in report["results"])
    # Durations: every row's, and the report's their sum.
    assert all(r["seconds"] >= 0 for r in report["results"])
    assert report["seconds"] == pytest.approx(sum(r["seconds"] for r in report["results"]))


@needs_cli
def test_the_schema_validator_rejects_what_the_schema_forbids():
    report, _ = report_of("check", DENSE, "--against", WRONG_SAMPLES)
    assert errors(report, SCHEMA) == []
    bad = [copy.deepcopy(report) for _ in range(5)]
    del bad[0]["schema_version"]
    bad[1]["results"][0]["status"] = "fine"
    bad[2]["results"][0]["surprise"] = 1
    row = next(r for r in bad[3]["results"] if "counterexample" in r)
    row["counterexample"]["tensors"][0]["values"][0] = "three"
    bad[4]["results"][0]["cases"] = -1
    for b in bad:
        assert errors(b, SCHEMA) != []


@needs_cli
def test_junit_counts_and_failure_message(tmp_path):
    out = tmp_path / "report.xml"
    r = pmach_cli("check", DENSE, "--against", WRONG_SAMPLES, "--junit", out)
    assert r.returncode == 1
    report, _ = report_of("check", DENSE, "--against", WRONG_SAMPLES)
    suites = ET.parse(out).getroot()
    assert suites.tag == "testsuites"
    (suite,) = suites.findall("testsuite")
    cases = suite.findall("testcase")
    statuses = [row["status"] for row in report["results"]]
    assert len(cases) == len(statuses) == int(suite.get("tests")) == int(suites.get("tests"))
    assert int(suite.get("failures")) == statuses.count("failed") + statuses.count("too weak") == 1
    assert int(suite.get("skipped")) == statuses.count("not applicable")
    (failing,) = [c for c in cases if c.find("failure") is not None]
    assert failing.get("name") == "SAMPLE grad_w" and failing.get("classname") == "dense 3 -> 2"
    failure = failing.find("failure")
    assert failure.get("message").startswith("element 0 (at (0, 0)): theirs -0.25, reference 0.75")
    assert "grad_w − reference[1, 2] = 3" in failure.text and "repro: pmach check" in failure.text
    assert all(float(c.get("time")) >= 0 for c in cases) and float(suite.get("time")) >= 0


@needs_cli
def test_junit_file_is_replaced_whole_and_refuses_a_folder(tmp_path):
    out = tmp_path / "report.xml"
    out.write_text("old")
    assert pmach_cli("check", DENSE, "--junit", out).returncode == 0
    assert ET.parse(out).getroot().get("failures") == "0"
    r = pmach_cli("check", DENSE, "--junit", tmp_path)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "not a regular file" in r.stderr


@needs_cli
def test_filters_select_rows_and_refuse_to_select_nothing():
    report, code = report_of("check", DENSE, "--law", "PSPAN-*", "--subject", "* (exact)")
    laws = {r["law"] for r in report["results"]}
    assert code == 0 and laws == {"PSPAN-BILINEAR", "PSPAN-ADJOINT", "PSPAN-GRADIENT", "PSPAN-COMP"}
    assert {r["subject"] for r in report["results"]} == {"dense 3 -> 2 (exact)"}
    for args in (("--law", "NO-SUCH-LAW"), ("--subject", "nothing"), ("--law", "WF-SIZES", "--subject", "dense 3 -> 2")):
        r = pmach_cli("check", DENSE, *args)
        assert r.returncode == 2 and r.stdout == "" and r.stderr.count("\n") == 1, r.stderr
        assert "selects none of the 13 rows" in r.stderr and "PSPAN-ADJOINT" in r.stderr
    # The catalogue is filtered alike.
    report, code = report_of("check", "--cases", "2", "--law", "MACH-CAUSALITY")
    assert code == 0 and len(report["results"]) > 1
    assert {r["law"] for r in report["results"]} == {"MACH-CAUSALITY"}


@needs_cli
@pytest.mark.parametrize("args", [
    (DENSE, "--against", WRONG_SAMPLES),
    (FAULTS / "conv2d.json", "--same-as", FAULTS / "conv2d_wrong_dilation.json", "--cases", "7", "--seed", "5"),
    (DATA / "dense_machine.json", "--against", DATA / "samples_dense_machine_wrong", "--cases", "3"),
])
def test_each_failure_repro_command_fails_again_alone(args):
    # Run from the repository, as the paths in the repro line are the ones given.
    rel = [os.path.relpath(a, SOURCE) if isinstance(a, pathlib.Path) or str(a).startswith(str(SOURCE)) else a
           for a in args]
    r = pmach_cli("check", *rel, "--json", cwd=SOURCE)
    assert r.returncode == 1
    failed = [row for row in json.loads(r.stdout)["results"] if row["status"] == "failed"]
    assert failed
    for row in failed:
        words = shlex.split(row["repro"])
        assert words[:2] == ["pmach", "check"]
        again = subprocess.run([PMACH, *words[1:], "--json"], capture_output=True, text=True, cwd=SOURCE,
                               timeout=120)
        assert again.returncode == 1, (row["repro"], again.stderr)
        (same,) = json.loads(again.stdout)["results"]
        assert (same["law"], same["subject"], same["status"]) == (row["law"], row["subject"], "failed")
        assert same["detail"] == row["detail"] and same["repro"] == row["repro"]


@needs_cli
def test_table_prints_counterexamples_sparsely_in_multi_index_coordinates():
    r = pmach_cli("check", DENSE, "--against", WRONG_SAMPLES)
    lines = r.stdout.splitlines()
    assert r.returncode == 1
    start = lines.index("SAMPLE grad_w on dense 3 -> 2 (failed): element 0 (at (0, 0)): theirs -0.25, "
                        "reference 0.75, error 1 > bound 2.9802329493124369e-07")
    # theirs − reference = −(the missing term of sample 0), g₀ ⊗ x₀ with
    # x₀ = (1, 2, 3) and g₀ = (1, −1) (examples/data/make_samples.py).
    assert lines[start + 1:start + 8] == [
        "  grad_w − reference, shape (2, 3): 6 of 6 entries non-zero",
        "    grad_w − reference[0, 0] = -1",
        "    grad_w − reference[0, 1] = -2",
        "    grad_w − reference[0, 2] = -3",
        "    grad_w − reference[1, 0] = 1",
        "    grad_w − reference[1, 1] = 2",
        "    grad_w − reference[1, 2] = 3",
    ]
    assert lines[start + 8].startswith("  repro: pmach check ")


@needs_cli
def test_long_counterexamples_are_cut_with_a_count():
    r = pmach_cli("check", DATA / "dense_machine.json", "--against", DATA / "samples_dense_machine_wrong",
                  "--law", "SAMPLE grad_w", "--cases", "3")
    assert r.returncode == 1
    lines = r.stdout.splitlines()
    head = next(i for i, l in enumerate(lines) if l.startswith("  grad_w − reference, shape (7, 7): "))
    n = int(lines[head].split(": ")[1].split(" of ")[0])
    assert n > 8 and lines[head + 9] == f"    ... and {n - 8} more"
    assert all(l.startswith("    grad_w − reference[") for l in lines[head + 1:head + 9])


def test_law_counterexample_as_arrays_reproduces_the_failure():
    layer = pmach.layers.dense(3, 2)
    wrong_transpose = lambda w, g: 2 * g @ w.T  # noqa: E731
    report = pmach.check(layer, lambda w, x: x @ w, transpose=wrong_transpose,
                         gradient=lambda x, g: x.T @ g, cases=10)
    row = next(r for r in report.rows if r["law"] == "PSPAN-ADJOINT")
    assert row["status"] == "failed"
    c = row.counterexample
    assert set(c) == {"w", "φ", "g"}
    assert c["w"].shape == layer.parameter_shape and c["φ"].shape == layer.source_shape
    assert c["g"].shape == layer.target_shape
    # The arrays are the shrunk case: the law fails on them again.
    w, x, g = c["w"], c["φ"][None], c["g"][None]
    lhs, rhs = np.sum(g * (x @ w)), np.sum(wrong_transpose(w, g) * x)
    # The wrong transpose doubles the right side: ⟨2 Lᵀg, φ⟩ = 2 ⟨g, L φ⟩ ≠ ⟨g, L φ⟩ unless 0.
    assert lhs != 0 and rhs == pytest.approx(2 * lhs, rel=1e-12)
    s = row.scalars
    assert s["case"] >= 0 and float(s["lhs"]) == pytest.approx(lhs) and float(s["rhs"]) == pytest.approx(rhs)
    # The table shows the same case sparsely.
    assert "  w, shape (3, 2): " in str(report)


def test_reversed_kernel_difference_as_an_array():
    from test_check import CONV, conv2d_reversed_kernel
    report = pmach.check(CONV, conv2d_reversed_kernel, cases=5)
    row = next(r for r in report.rows if r["law"] == "CONF-SPAN-DIFF")
    d = row.counterexample["implemented − intended"]
    assert d.shape == CONV.target_shape + CONV.source_shape + CONV.parameter_shape
    assert row.axes["implemented − intended"] == ("t0", "t1", "t2", "s0", "s1", "s2", "p0", "p1", "p2", "p3")
    assert np.count_nonzero(d) == row.scalars["differences"] == 1320
    # The difference listed first by the detail, read from the array.
    assert d[0, 0, 0, 0, 1, 0, 1, 0, 0, 0] == 1
    # A reversed kernel reads tap p where tap flip(p) is meant, so the
    # difference is odd under the flip of the two kernel axes.
    assert np.array_equal(d, -np.flip(d, axis=(6, 7)))
    # The correct conv has no counterexample.
    from test_check import conv2d
    assert all(r.counterexample == {} for r in pmach.check(CONV, conv2d, cases=5).rows)


@needs_cli
def test_same_as_difference_as_an_array():
    from pmach._report import Row
    report, code = report_of("check", FAULTS / "conv2d.json", "--same-as",
                             FAULTS / "conv2d_reversed_kernel.json", "--cases", "2")
    assert code == 1
    row = Row(next(r for r in report["results"] if r["law"] == "CONF-SPAN-DIFF"))
    d = row.counterexample["implemented − intended"]
    assert row.axes["implemented − intended"] == ("t0", "t1", "t2", "s0", "s1", "s2", "p0", "p1", "p2", "p3")
    assert np.count_nonzero(d) == row.scalars["differences"] == 1120
    # The difference the detail lists first (docs/formats.md, "Reversed kernel").
    assert "target (0, 0, 0) <- source (0, 0, 0) via parameter (0, 1, 0, 0): intended 0, implemented 1" in row["detail"]
    assert d[0, 0, 0, 0, 0, 0, 0, 1, 0, 0] == 1
    # Kernel rows read flipped: the difference is odd under the flip of parameter axis 0.
    assert np.array_equal(d, -np.flip(d, axis=6))


def test_machine_that_skips_cleaning_gives_its_case_and_linear_part_as_arrays():
    from test_check import DIMS, MACHINE, MASK, machine_forward_without_cleaning, np_forward
    import torch
    report = pmach.check(MACHINE, machine_forward_without_cleaning, cases=30)
    row = next(r for r in report.rows if r["law"] == "CONF-MACHINE forward")
    c, n = row.counterexample, sum(DIMS)
    assert row["status"] == "failed" and c["w"].shape == (n, n) and c["y0"].shape == c["z0"].shape == (2, n)
    # The case, run again: their outputs minus the reference (the correct
    # forward pass written here) are the arrays of the report.
    t = [torch.tensor(c[k]) for k in ("w", "y0", "z0")]
    ty, tz = (v.numpy() for v in machine_forward_without_cleaning(*t))
    ry, rz = np_forward(c["w"], c["y0"], c["z0"])
    assert np.any(ty != ry)
    assert np.array_equal(c["y − reference"], ty - ry) and np.array_equal(c["z − reference"], tz - rz)
    # The linear part, on its own row: the difference is where the grading
    # forbids the parameter (MASK = 0), and its entries are those the detail
    # lists.
    diff = next(r for r in report.rows if r["law"] == "CONF-SPAN-DIFF")
    d = diff.counterexample["implemented − intended"]
    assert d.shape == (n, n, n, n) and np.count_nonzero(d) == diff.scalars["differences"] > 0
    assert not np.any(d[:, :, MASK == 1])
    listed = re.findall(r"target \((\d+)\) <- source \((\d+)\) via parameter \((\d+), (\d+)\): "
                        r"intended (\S+), implemented (\S+)", diff["detail"])
    assert len(listed) == 10
    for t, s, i, j, intended, implemented in listed:
        assert d[int(t), int(s), int(i), int(j)] == float(Fraction(implemented) - Fraction(intended))


def test_backward_that_forgets_the_slope_gives_its_case_as_arrays():
    from test_check import MACHINE, np_backward, np_backward_without_slope, np_forward
    report = pmach.check(MACHINE, np_forward, backward=np_backward_without_slope, cases=30)
    row = next(r for r in report.rows if r["law"] == "CONF-MACHINE backward")
    c = row.counterexample
    assert row["status"] == "failed" and {"w", "y0", "z0", "g_y", "g_z"} <= set(c)
    case = [c[k] for k in ("w", "y0", "z0", "g_y", "g_z")]
    theirs, right = np_backward_without_slope(*case), np_backward(*case)
    assert np.any(theirs[0] != right[0])
    for k, name in enumerate(("grad_y0", "grad_z0", "grad_w")):
        assert np.array_equal(c[name + " − reference"], theirs[k] - right[k]), name
    # The table prints the differences of this row, not its inputs (the
    # shrunk cases of the law rows are their inputs, and are printed).
    text = str(report)
    section = text[text.index("CONF-MACHINE backward on "):]
    section = section[:re.search(r"\n\S", section).start()] if re.search(r"\n\S", section) else section
    assert "  grad_y0 − reference, shape (2, 7): " in section and "  g_y, shape" not in section
