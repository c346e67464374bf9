"""Two ways to run the same rules: over numpy arrays (N games) or over Python floats (one game).

The environments' rules are written once, with arithmetic operators, comparisons, ``&``, ``|``
and the few functions below, taken from a backend. Over numpy arrays of shape (N,) they step
N games at once (the vector env); over Python floats they step one game (the single env)
without paying numpy's per-call overhead, which dominates at N = 1. Only correctly rounded
operations are used (+ - * / sqrt, comparisons), so both backends give bit-identical results.
"""

from __future__ import annotations

import math
import operator
from types import SimpleNamespace

import numpy as np

class Backend(SimpleNamespace):
    """A named set of array functions; pickles by name, so ``xp is NUMPY`` survives pickling."""

    def __reduce__(self):
        return (backend_named, (self.name,))


def backend_named(name: str) -> Backend:
    return {"numpy": NUMPY, "scalar": SCALAR}[name]


def _scalar_where(condition, if_true, if_false):
    return if_true if condition else if_false


NUMPY = Backend(
    name="numpy",
    sqrt=np.sqrt,
    minimum=np.minimum,
    maximum=np.maximum,
    where=np.where,
    any=np.count_nonzero,  # truthy exactly when any is; 10x cheaper than np.any on small arrays
    logical_not=np.logical_not,
)

SCALAR = Backend(
    name="scalar",
    sqrt=math.sqrt,
    minimum=min,
    maximum=max,
    where=_scalar_where,
    any=bool,
    logical_not=operator.not_,
)
