"""The dot-product engine works on cache-sized blocks of the output (``specs/dotbound.py``,
``blocks``): the blocks cover every element once, and the accepted set is bit for bit the one
computed in one piece."""
from __future__ import annotations

import importlib

import numpy as np
import pytest

D = importlib.import_module("refconv.specs.dotbound")


@pytest.mark.parametrize("shape,block", [((), 4), ((7,), 3), ((5, 11), 12), ((3, 4, 5), 7), ((2, 3, 4, 5), 1),
                                         ((9, 2), 100), ((4, 1000), 64), ((0, 5), 4)])
def test_the_blocks_cover_every_element_once_and_none_is_larger_than_asked(shape, block):
    seen = np.zeros(shape, np.int64)
    for sl in D.blocks(shape, block):
        seen[sl] += 1
        assert seen[sl].size <= block, sl
    assert (seen == 1).all()


def _terms(rng, shape, k):
    """k terms with every kind the engine tells apart: exact small integers, inexact products,
    zeros, +-Inf, NaN, values near the float32 maximum, and an uncertain x with a radius."""
    out = []
    for t in range(k):
        w = np.float32(rng.choice([1.0, -2.5, 0.1, 3e38, 0.0]))
        x = rng.standard_normal(shape).astype(np.float32)
        x[rng.random(shape) < 0.1] = 0
        small = rng.random(shape) < 0.2
        x[small] = np.round(x[small] * 8)                      # exact products with the integer weights
        x.flat[rng.integers(0, x.size, 5)] = [np.inf, -np.inf, np.nan, 2.0, 3e38]
        r = np.abs(x) * 1e-7 if t == k - 1 else None
        out.append((w, x, r))
    return out


def test_the_blocked_engine_gives_the_one_piece_sets_bit_for_bit(monkeypatch):
    rng = np.random.default_rng(5)
    shape = (37, 29)
    terms = _terms(rng, shape, 6)
    monkeypatch.setattr(D, "BLOCK", 1 << 40)
    whole = D.dot(iter(terms), shape, np.float32)
    monkeypatch.setattr(D, "BLOCK", 50)           # 22 pieces, cut inside rows
    pieces = D.dot(iter(terms), shape, np.float32)
    for f in ("lo", "hi", "fin", "pinf", "ninf", "nan"):
        a, b = getattr(whole[0], f), getattr(pieces[0], f)
        assert np.array_equal(a, b, equal_nan=a.dtype.kind == "f"), f
    assert np.array_equal(whole[1], pieces[1], equal_nan=True) and np.array_equal(whole[3], pieces[3])
