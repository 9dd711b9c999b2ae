"""pmach.Report and its rows, with their counterexamples as NumPy arrays.

A row is the dict of the JSON report (docs/report.schema.json); its
counterexample, kept sparse there (the non-zero entries of each tensor), is
unfolded here into dense arrays. Nothing is computed in Python but the
unfolding.
"""
import json
from fractions import Fraction

import numpy as np


def _number(text):
    """A value of the report: an int, an exact Fraction (p/q), or a float."""
    try:
        f = Fraction(text)
    except ValueError:  # inf, nan
        return float(text)
    return f.numerator if f.denominator == 1 else f


def _array(tensor):
    a = np.zeros(int(np.prod(tensor["shape"], dtype=np.int64)), dtype=np.float64)
    a[np.asarray(tensor["indices"], dtype=np.int64)] = [float(_number(v)) for v in tensor["values"]]
    return a.reshape(tuple(tensor["shape"]))


class Row(dict):
    """One row of a report: a dict with the keys law, subject, status, cases,
    exact, max_error, bound, seed, detail, and on failures counterexample and
    repro (the keys of docs/report.schema.json)."""

    @property
    def counterexample(self):
        """The failure's tensors as float64 arrays in their shapes, a dict
        name → ndarray (the shrunk case of a law: w, φ, g, …; of a span
        difference: "implemented − intended" on target × source × parameter
        axes; of a sample: theirs, the reference and their difference). Empty
        when the row has none."""
        c = self.get("counterexample")
        return {} if c is None else {t["name"]: _array(t) for t in c["tensors"]}

    @property
    def axes(self):
        """The axis names of each counterexample tensor (empty tuples when
        unknown), a dict name → tuple."""
        c = self.get("counterexample")
        return {} if c is None else {t["name"]: tuple(t["axes"]) for t in c["tensors"]}

    @property
    def scalars(self):
        """The failure's scalars (the case number, the two sides, …), a dict
        name → int, Fraction (exact values) or float."""
        c = self.get("counterexample")
        return {} if c is None else {k: _number(v) for k, v in c["scalars"].items()}

    @property
    def repro(self):
        """The `pmach check` command that runs the row again (for rows of a
        model file), or None."""
        return self.get("repro")


def rows(results):
    return [Row(r) for r in results]


class Report:
    """The verdicts of pmach.check: one row per law run.

    ``passed`` is True when no row failed or was too weak; ``rows`` lists the rows as dicts (law, subject,
    status, cases, exact, max_error, bound, seed, detail, seconds, and on a
    failure counterexample), whose ``counterexample`` property gives the failure's
    tensors as NumPy arrays (name → ndarray) and ``scalars`` its scalars;
    ``str(report)`` is the table the ``pmach check`` command prints, with the
    counterexamples sparse in multi-index coordinates; ``repr(report)`` its
    summary and failing rows; ``to_json()`` the command's ``--json`` output
    (docs/report.schema.json); ``duration`` the seconds the check took.

    A layer with a bias is checked in two parts, its linear part and its bias,
    each a table of the C++ validator; the report holds both.
    """

    def __init__(self, parts, duration):
        self._parts = list(parts)
        self.duration = duration

    @property
    def passed(self):
        """True when no row failed or was too weak."""
        return all(p.passed for p in self._parts)

    @property
    def rows(self):
        """The rows as a list of dicts (pmach._report.Row); row.counterexample is a
        dict name → ndarray of a failure's tensors, row.scalars its scalars."""
        return [r for p in self._parts for r in p.rows]

    @property
    def failures(self):
        """The rows that failed or were too weak."""
        return [r for r in self.rows if r["status"] in ("failed", "too weak")]

    def to_json(self):
        """The report as JSON text, as printed by `pmach check --json`."""
        report = json.loads(self._parts[0].to_json())
        report["results"] = [r for p in self._parts for r in json.loads(p.to_json())["results"]]
        report["passed"] = self.passed
        report["seconds"] = sum(r["seconds"] for r in report["results"])
        return json.dumps(report, indent=2)

    def summary(self):
        """One line: the counts of rows by status and the duration."""
        counts = {s: sum(r["status"] == s for r in self.rows) for s in _STATUSES}
        return ", ".join(f"{counts[s]} {s}" for s in _STATUSES) + f" in {self.duration:.2f} s"

    def __str__(self):
        return self._text(self._parts)

    def _text(self, parts):
        return "\n".join(str(p) for p in parts)

    def failing_text(self):
        """The tables of the parts that did not pass (str(report) has them all)."""
        return self._text([p for p in self._parts if not p.passed])

    def __repr__(self):
        lines = [f"<pmach.Report {'passed' if self.passed else 'FAILED'}: {self.summary()}"]
        for r in self.failures:
            detail = r["detail"].replace("\n", "\n    ")
            lines.append(f"  {r['law']} on {r['subject']} ({r['status']}): {detail}")
        return "\n".join(lines) + ">"

    def __bool__(self):
        return self.passed


_STATUSES = ("passed", "failed", "too weak", "not applicable")
