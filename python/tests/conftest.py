"""Shared fixtures of the pmach tests. Run by the ctest `python_tests`
(PYTHONPATH = <build>/python, PMACH_SOURCE_DIR = the repository, PMACH_CLI =
the pmach command)."""
import os
import pathlib

import numpy as np
import pytest

SOURCE = pathlib.Path(os.environ.get("PMACH_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))
DATA = SOURCE / "examples" / "data"


@pytest.fixture
def rng():
    return np.random.default_rng(7)


def integers(rng, shape, bound=3):
    """Small integers as float64: sums of their products are exact in float64
    while they stay below 2^53, so results can be compared with ==."""
    return rng.integers(-bound, bound + 1, size=shape).astype(np.float64)
