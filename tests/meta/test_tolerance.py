"""The bounds themselves: they hold for other summation orders / FMA, and are not loose."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from helpers import one_ulp_off
from refconv import specs
from refconv.tolerance import Verdict, acceptance


def _products(img, w, boundary="zero"):
    """Per-tap products (float64, exact for float32 operands) of filter2d, shape (K, H', W')."""
    from refconv.specs.filter2d import pad_image, out_hw
    kh, kw = w.shape
    oh, ow = out_hw(*img.shape, kh, kw, boundary)
    p = pad_image(img.astype(np.float64), kh, kw, boundary)
    return np.stack([np.float64(w[i, j]) * p[i:i + oh, j:j + ow] for i in range(kh) for j in range(kw)])


def _orders(prods, F):
    """Results of other evaluation orders in working type F."""
    out = {}
    acc = np.zeros(prods.shape[1:], F)
    for q in prods[::-1]:                           # reversed, rounded products
        acc = acc + q.astype(F)
    out["reversed"] = acc
    acc = np.zeros(prods.shape[1:], F)
    for q in prods:                                 # simulated FMA: exact product + acc, one rounding
        acc = (q + acc.astype(np.float64)).astype(F)
    out["fma"] = acc
    lst = [q.astype(F) for q in prods]
    while len(lst) > 1:                             # pairwise
        lst = [lst[k] + lst[k + 1] if k + 1 < len(lst) else lst[k] for k in range(0, len(lst), 2)]
    out["pairwise"] = lst[0]
    out["float64"] = prods.sum(0).astype(F)
    return out


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2 ** 32 - 1), k=st.tuples(st.integers(1, 7), st.integers(1, 7)),
       boundary=st.sampled_from(["zero", "reflect", "valid"]))
def test_float32_bound_holds_for_other_orders(seed, k, boundary):
    rng = np.random.default_rng(seed)
    img = (rng.standard_normal((8, 9)) * 10 ** rng.uniform(-3, 3, (8, 9))).astype(np.float32)
    w = rng.uniform(-2, 2, k).astype(np.float32)
    acc = acceptance("filter2d", {"image": img, "weights": w}, {"boundary": boundary})
    for name, got in _orders(_products(img, w, boundary), np.float32).items():
        v = acc.check(got)
        assert v.ok, (name, v.message)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2 ** 32 - 1), shift=st.integers(0, 4),
       rounding=st.sampled_from(["trunc", "nearest-even"]), cast=st.sampled_from(["saturate", "wrap"]))
def test_uint8_bound_holds_for_other_orders(seed, shift, rounding, cast):
    rng = np.random.default_rng(seed)
    img = rng.integers(0, 256, (7, 8)).astype(np.uint8)
    w = rng.uniform(-1, 2, (3, 3)).astype(np.float32)
    opts = dict(shift=shift, rounding=rounding, cast=cast)
    acc = acceptance("filter2d", {"image": img, "weights": w}, opts)
    for name, v32 in _orders(_products(img, w), np.float32).items():
        v32 = v32 * np.float32(2.0 ** -shift)
        r = np.trunc(v32) if rounding == "trunc" else np.rint(v32)
        got = specs.filter2d.__globals__["cast_to_int"](r, np.dtype(np.uint8), cast)
        v = acc.check(got)
        assert v.ok, (name, v.message)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_bound_not_loose(dtype):
    rng = np.random.default_rng(0)
    m = rng.standard_normal((50, 200)).astype(dtype)
    v = rng.standard_normal(200).astype(dtype)
    acc = acceptance("matvec", {"m": m, "v": v}, {})
    assert not acc.exact
    lo, hi = acc.accepted.lo, acc.accepted.hi
    e = acc.expected
    width = hi.astype(np.float64) - lo.astype(np.float64)
    # beyond the bound: expected + 2*bound, rounded outward -> rejected everywhere
    up = np.nextafter((e.astype(np.float64) + width).astype(dtype), dtype(np.inf))
    dn = np.nextafter((e.astype(np.float64) - width).astype(dtype), dtype(-np.inf))
    assert acc.check(up).n_bad == 50 and acc.check(dn).n_bad == 50
    # and the bound is gamma_n-sized: at most ~3 gamma_200 * sum|m v|
    n, u = 200, 2.0 ** -(np.finfo(dtype).nmant + 1)
    s = np.abs(m.astype(np.float64) * v).sum(1)
    assert np.all(width / 2 <= 3 * n * u / (1 - n * u) * s + 1e-300)
    # the end points themselves are accepted
    assert acc.check(lo).ok and acc.check(hi).ok


def test_exact_detection_rejects_one_ulp():
    rng = np.random.default_rng(1)
    img = rng.integers(-16, 17, (6, 6)).astype(np.float32)
    w = (rng.integers(-32, 33, (3, 3)) / 4).astype(np.float32)
    acc = acceptance("filter2d", {"image": img, "weights": w}, {})
    assert acc.exact
    v = one_ulp_off(acc, (2, 3))
    assert not v.ok and v.n_bad == 1 and v.first_bad == (2, 3)
    assert "(2, 3)" in v.message
    # NaN matches NaN of any payload; exact elements also in a mixed problem
    img2 = img.copy()
    img2[0, 0] = np.nan
    acc2 = acceptance("filter2d", {"image": img2, "weights": w}, {})
    got = acc2.expected.copy()
    got[np.isnan(got)] = np.float32(-np.nan)
    assert acc2.check(got).ok


def test_integer_output_accepts_exact_set():
    w = np.full((1, 1), 0.1, np.float32)            # 0.1f*10 = 1.0000000149 -> the sum may round to 1 - ulp
    img = np.full((1, 1), 10, np.uint8)
    acc = acceptance("filter2d", {"image": img, "weights": w}, {})
    chk = lambda x: acc.check(np.array([[x]], np.uint8)).ok  # noqa: E731
    assert acc.expected[0, 0] == 1
    assert chk(1) and chk(0) and not chk(2)          # +-1: only -1 is accepted here
    w = np.full((1, 1), 0.5, np.float32)            # exact: 5 only
    acc = acceptance("filter2d", {"image": img, "weights": w}, {})
    assert acc.exact and acc.expected[0, 0] == 5
    assert [acc.check(np.array([[x]], np.uint8)).ok for x in (4, 5, 6)] == [False, True, False]


def test_wrap_cast_modular_interval():
    w = np.full((1, 1), 25.6, np.float32)           # 25.6f*10 = 256.0000038 -> trunc in {255, 256}
    img = np.full((1, 1), 10, np.uint8)
    acc = acceptance("filter2d", {"image": img, "weights": w}, {"cast": "wrap"})
    ok = {x for x in range(256) if acc.check(np.array([[x]], np.uint8)).ok}
    assert ok == {255, 0}
    acc = acceptance("filter2d", {"image": img, "weights": w}, {"cast": "saturate"})
    ok = {x for x in range(256) if acc.check(np.array([[x]], np.uint8)).ok}
    assert ok == {255}


def test_int_accumulator_exact_and_interval():
    rng = np.random.default_rng(2)
    img = rng.integers(0, 256, (6, 7)).astype(np.uint8)
    w = rng.integers(-4, 5, (3, 3)).astype(np.float32)
    assert acceptance("filter2d", {"image": img, "weights": w}, {"accumulator": "int"}).exact
    w = np.full((3, 3), 0.1, np.float32)
    img = np.full((5, 5), 10, np.uint8)             # each tap: acc + 1.0000000149 -> trunc 1 or 0
    acc = acceptance("filter2d", {"image": img, "weights": w}, {"accumulator": "int", "boundary": "valid"})
    assert acc.expected[0, 0] == 9
    # int->float and the float add are deterministic; rn32(w*x) = 1.0 = rn32(acc + w*x): exact
    L, H = acc.accepted.L[0, 0], acc.accepted.H[0, 0]
    assert L == H == 9


def test_nonfinite_rules():
    img = np.zeros((3, 3), np.float32)
    img[1, 1] = np.inf
    acc = acceptance("filter2d", {"image": img, "weights": np.ones((3, 3), np.float32)}, {})
    assert acc.exact and np.all(np.isinf(acc.expected))
    # near overflow: the sum can be Inf in one order and finite in another
    big = np.float32(np.finfo(np.float32).max)
    m = np.array([[big, big, -big]], np.float32)
    v = np.ones(3, np.float32)
    acc = acceptance("matvec", {"m": m, "v": v}, {})
    assert acc.expected[0] == big
    assert acc.check(np.array([np.inf], np.float32)).ok           # (big + big) - big
    assert acc.check(np.array([big], np.float32)).ok              # big + (big - big)
    assert acc.check(np.array([np.nan], np.float32)).ok is False  # no -Inf possible


def test_shape_and_dtype_mismatch_are_verdicts():
    acc = acceptance("kron", {"a": np.ones((2, 2)), "b": np.ones((1, 1))}, {})
    v = acc.check(np.ones((3, 2)))
    assert isinstance(v, Verdict) and not v.ok and "shape" in v.message
    v = acc.check(np.ones((2, 2), np.float32))
    assert not v.ok and "dtype" in v.message


def test_conv2d_and_sobel_colour_bounds():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((1, 4, 6, 6)).astype(np.float32)
    w = rng.standard_normal((4, 2, 3, 3)).astype(np.float32)
    b = rng.standard_normal(4).astype(np.float32)
    acc = acceptance("conv2d", {"x": x, "w": w, "bias": b}, {"groups": 2, "padding": 1})
    # float32 left-to-right accumulation, bias last
    out = specs.conv2d(x.astype(np.float64), w.astype(np.float64), b.astype(np.float64),
                       groups=2, padding=1)
    assert acc.check(out.astype(np.float32)).ok
    assert acc.check(out.astype(np.float32) * np.float32(1 + 1e-5)).n_bad > 0
