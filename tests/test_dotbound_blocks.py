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


def _random_terms(rng, F, shape, k):
    def arr(sh):
        kind = rng.integers(0, 4)
        if kind == 0:
            return rng.standard_normal(sh).astype(F)
        if kind == 1:
            return rng.integers(-300, 300, sh).astype(F)
        if kind == 2:   # any bit pattern: NaN, inf, subnormal
            if F == np.float32:
                return rng.integers(0, 2 ** 32, sh, dtype=np.uint64).astype(np.uint32).view(np.float32)
            return rng.integers(0, 2 ** 63, sh, dtype=np.uint64).view(np.float64)
        with np.errstate(all="ignore"):
            return (rng.standard_normal(sh) * 2.0 ** rng.integers(-150, 130, sh)).astype(F)
    return [(arr(() if rng.random() < 0.5 else shape), arr(shape),
             None if rng.random() < 0.7 else np.abs(arr(shape).astype(np.float64))) for _ in range(k)]


@pytest.mark.parametrize("F", [np.float32, np.float64])
def test_stacked_terms_accumulate_the_same_sums_as_one_term_at_a_time(F):
    """``_Terms.add_many`` (small problems: the terms stacked) gives every running sum, count and
    flag that ``_Terms.add`` gives term by term, and so the same accepted set, bit for bit."""
    rng = np.random.default_rng(7)
    F = np.dtype(F)
    for trial in range(150):
        shape = [(), (1,), (3,), (5, 7), (40, 33)][trial % 5]
        terms = _random_terms(rng, F, shape, int(rng.integers(1, 25)))
        one, many = (D._Terms(shape, F, D.ref_type(F)) for _ in range(2))
        with np.errstate(all="ignore"):
            for t in terms:
                one.add(*t)
            many.add_many(terms)
            for name in ("center", "S", "P", "N", "radsum", "npos", "nneg", "exact", "g", "nan_c", "pinf_c",
                         "ninf_c"):
                assert np.array_equal(getattr(one, name), getattr(many, name), equal_nan=True), (trial, name)
            assert one.n == many.n
            b1, b2 = one.bounds(), many.bounds()
            s1, s2 = one.specials(b1[1], b1[2]), many.specials(b2[1], b2[2])
        for x, y in zip(b1[:3] + s1, b2[:3] + s2):   # values and signs (long double has padding bytes)
            x, y = np.asarray(x), np.asarray(y)
            assert np.array_equal(x, y, equal_nan=True) and np.array_equal(np.signbit(x), np.signbit(y)), trial
