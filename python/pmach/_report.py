"""The rows of a pmach.Report, with their counterexamples as NumPy arrays.

A row is the dict of the JSON report (docs/report.schema.json); its
counterexample, kept sparse there (the non-zero entries of each tensor), is
unfolded here into dense arrays. Nothing is computed in Python but the
unfolding.
"""
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
