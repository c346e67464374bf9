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


def _numpy_update_where(mask, rule, fields, inputs=()):
    """Apply ``rule`` to the games in ``mask`` only: ``rule(*fields, *inputs)`` gets and returns
    (k,) arrays for the k games, and its results are written into ``fields`` in place (so they
    must be arrays the caller owns), which are returned. For a rule that few games need, this
    costs less than computing every game and masking the result."""
    games = np.flatnonzero(mask)
    updated = rule(*(field[games] for field in fields), *(value[games] for value in inputs))
    for field, values in zip(fields, updated):
        field[games] = values
    return fields


def _scalar_update_where(mask, rule, fields, inputs=()):
    return rule(*fields, *inputs) if mask else fields


NUMPY = Backend(
    name="numpy",
    sqrt=np.sqrt,
    minimum=np.minimum,
    maximum=np.maximum,
    where=np.where,
    any=np.count_nonzero,  # truthy exactly when any is; 10x cheaper than np.any on small arrays
    logical_not=np.logical_not,
    update_where=_numpy_update_where,
)

SCALAR = Backend(
    name="scalar",
    sqrt=math.sqrt,
    minimum=min,
    maximum=max,
    where=_scalar_where,
    any=bool,
    logical_not=operator.not_,
    update_where=_scalar_update_where,
)
