"""conv2d spec vs torch.nn.functional.conv2d (CPU)."""
import importlib

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from refconv import specs
from refconv.tolerance import acceptance


@st.composite
def conv_problem(draw, dtype):
    groups = draw(st.integers(1, 3))
    cg = draw(st.integers(1, 3))
    mg = draw(st.integers(1, 3))
    n = draw(st.integers(1, 2))
    r, s = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    stride = draw(st.one_of(st.integers(1, 3), st.tuples(st.integers(1, 3), st.integers(1, 3))))
    padding = draw(st.one_of(st.integers(0, 2), st.tuples(st.integers(0, 2), st.integers(0, 2))))
    dilation = draw(st.one_of(st.integers(1, 2), st.tuples(st.integers(1, 2), st.integers(1, 2))))
    pair = lambda v: v if isinstance(v, tuple) else (v, v)  # noqa: E731
    (ph, pw), (dh, dw) = pair(padding), pair(dilation)
    h = draw(st.integers(max(1, dh * (r - 1) + 1 - 2 * ph), 9))
    w = draw(st.integers(max(1, dw * (s - 1) + 1 - 2 * pw), 9))
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1)))
    x = rng.standard_normal((n, cg * groups, h, w)).astype(dtype)
    wt = rng.standard_normal((mg * groups, cg, r, s)).astype(dtype)
    bias = rng.standard_normal(mg * groups).astype(dtype) if draw(st.booleans()) else None
    return x, wt, bias, dict(stride=stride, padding=padding, dilation=dilation, groups=groups)


@settings(max_examples=40, deadline=None)
@given(p=conv_problem(np.float64))
def test_torch_float64(p):
    torch = pytest.importorskip("torch")
    x, w, b, opts = p
    theirs = torch.nn.functional.conv2d(torch.from_numpy(x), torch.from_numpy(w),
                                        None if b is None else torch.from_numpy(b), **opts).numpy()
    ours = specs.conv2d(x, w, b, **opts)
    assert ours.shape == theirs.shape
    v = acceptance("conv2d", {"x": x, "w": w, "bias": b}, opts).check(theirs)
    assert v.ok, v.message


@settings(max_examples=25, deadline=None)
@given(p=conv_problem(np.float32))
def test_torch_float32(p):
    torch = pytest.importorskip("torch")
    x, w, b, opts = p
    theirs = torch.nn.functional.conv2d(torch.from_numpy(x), torch.from_numpy(w),
                                        None if b is None else torch.from_numpy(b), **opts).numpy()
    inputs = {"x": x, "w": w} if b is None else {"x": x, "w": w, "bias": b}
    v = acceptance("conv2d", inputs, opts).check(theirs)
    assert v.ok, v.message


def test_exact_integers_bitwise_vs_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    x = rng.integers(-8, 9, (2, 4, 7, 6)).astype(np.float32)
    w = rng.integers(-4, 5, (6, 2, 3, 3)).astype(np.float32)
    opts = dict(stride=(2, 1), padding=1, dilation=(1, 2), groups=2)
    acc = acceptance("conv2d", {"x": x, "w": w}, opts)
    assert acc.exact
    theirs = torch.nn.functional.conv2d(torch.from_numpy(x), torch.from_numpy(w), **opts).numpy()
    np.testing.assert_array_equal(acc.expected, theirs)


def test_output_size_formula():
    x = np.zeros((1, 2, 10, 7))
    w = np.zeros((3, 2, 3, 2))
    out = specs.conv2d(x, w, stride=(3, 2), padding=(1, 0), dilation=(2, 1))
    assert out.shape == (1, 3, (10 + 2 - 2 * 2 - 1) // 3 + 1, (7 - 1 - 1) // 2 + 1)


def test_big_endian_inputs_are_accepted_and_give_the_native_result():
    rng = np.random.default_rng(5)
    x, w, b = rng.random((1, 2, 5, 5)), rng.random((3, 2, 3, 3)), rng.random(3)
    want = specs.conv2d(x, w, b, padding=1)
    got = specs.conv2d(x.astype(">f8"), w.astype(">f8"), b.astype(">f8"), padding=1)
    np.testing.assert_array_equal(got.view(np.uint64), want.view(np.uint64))


def test_a_huge_padding_is_refused_by_name_before_allocating():
    x, w = np.ones((1, 1, 3, 3), np.float32), np.ones((1, 1, 3, 3), np.float32)
    with pytest.raises(ValueError, match=r"padding=\(1000000000, 1000000000\).*accepted: padding"):
        specs.conv2d(x, w, padding=10 ** 9)
    with pytest.raises(ValueError, match=r"padding=\(0, 100000000\)"):
        specs.conv2d(x, w, padding=(0, 10 ** 8))


# ----------------------------------------------------------------------------- the GEMM path of the acceptance

def _both_paths(monkeypatch, x, w, b, opts):
    """The accepted sets of one problem through the per-term engine and through the GEMM path
    (forced by lowering its work threshold)."""
    C = importlib.import_module("refconv.specs.conv2d")
    o = {"stride": 1, "padding": 0, "dilation": 1, "groups": 1, **opts}
    inputs = {"x": x, "w": w, "bias": b}
    monkeypatch.setattr(C, "FAST_MIN_WORK", 1 << 62)
    slow = C.accepted(inputs, o)
    monkeypatch.setattr(C, "FAST_MIN_WORK", 0)
    fast = C.accepted(inputs, o)
    return slow, fast


def _sequential_f32(x, w, b, opts, reverse):
    """conv2d summed in the inputs' type (float32 or float64), one term at a time, in the spec's
    tap order or its reverse (an order a kernel may take): a result the acceptance must take."""
    import itertools
    C = importlib.import_module("refconv.specs.conv2d")
    a = C.resolve(x, w, b, opts.get("stride", 1), opts.get("padding", 0), opts.get("dilation", 1), opts.get("groups", 1))
    m, cg = a["w"].shape[:2]
    mg = m // a["groups"]
    terms = []
    for (i, j, xw), ci in itertools.product(list(C.windows(a)), range(cg)):
        idx = (np.arange(m) // mg) * cg + ci
        with np.errstate(all="ignore"):
            terms.append(a["w"][:, ci, i, j][None, :, None, None] * xw[:, idx])
    if b is not None:
        terms.append(np.broadcast_to(b[None, :, None, None], terms[0].shape))
    dt = x.dtype
    acc = np.zeros(terms[0].shape, dt)
    with np.errstate(all="ignore"):
        for t in (terms[::-1] if reverse else terms):
            acc = (acc + t.astype(dt)).astype(dt)
    return acc


@settings(max_examples=30, deadline=None)
@given(p=conv_problem(np.float32))
def test_the_gemm_path_accepts_every_summation_order_and_is_as_tight_as_the_engine(p):
    import pytest as _pytest
    mp = _pytest.MonkeyPatch()
    try:
        x, w, b, opts = p
        slow, fast = _both_paths(mp, x, w, b, opts)
    finally:
        mp.undo()
    for reverse in (False, True):
        got = _sequential_f32(x, w, b, opts, reverse)
        assert fast.contains(got).all() and slow.contains(got).all()
    exact = np.asarray(specs.conv2d(x, w, b, **opts))          # the exact sum rounded once
    assert fast.contains(exact).all()
    # as tight as the engine's interval where that one is an interval (same sums, other order)
    iv = slow.fin & (slow.lo != slow.hi)
    wid = lambda s: s.hi.astype(np.float64) - s.lo.astype(np.float64)  # noqa: E731
    assert np.all(wid(fast)[iv] <= wid(slow)[iv] * (1 + 1e-6) + 2 * np.spacing(np.abs(slow.hi[iv])))
    assert (fast.pinf == slow.pinf).all() and (fast.ninf == slow.ninf).all() and not fast.nan.any()


@st.composite
def with_specials(draw, dtype):
    """A :func:`conv_problem` with up to three of NaN, +-inf and 0 placed in each of x, w and bias."""
    x, w, b, opts = draw(conv_problem(dtype))
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1)))
    for arr in (x, w) + (() if b is None else (b,)):
        k = draw(st.integers(0, 3))
        arr.flat[rng.integers(0, arr.size, k)] = rng.choice(np.array([np.nan, np.inf, -np.inf, 0.0], dtype), k)
    return x, w, b, opts


def _paths(p):
    import pytest as _pytest
    mp = _pytest.MonkeyPatch()
    try:
        return _both_paths(mp, *p)
    finally:
        mp.undo()


def _same_specials_and_contains(slow, fast):
    for k in ("fin", "pinf", "ninf", "nan"):
        assert np.array_equal(getattr(fast, k), getattr(slow, k)), k
    f = slow.fin
    assert np.all(fast.lo[f] <= slow.lo[f]) and np.all(fast.hi[f] >= slow.hi[f])


@settings(max_examples=40, deadline=None)
@given(p=with_specials(np.float32))
def test_the_gemm_path_flags_nan_and_infinite_terms_as_the_engine_does(p):
    """NaN / infinite terms (an operand NaN, an infinity times a zero or a finite value, the bias)
    give the float32 GEMM path the engine's NaN / +-inf flags, and its finite intervals hold the engine's."""
    slow, fast = _paths(p)
    _same_specials_and_contains(slow, fast)
    assert fast.contains(np.asarray(specs.conv2d(p[0], p[1], p[2], **p[3]))).all()


@settings(max_examples=40, deadline=None)
@given(p=with_specials(np.float64))
def test_the_float64_gemm_path_holds_the_engines_set_within_about_twice_its_width(p):
    """Float64's GEMM sums round (their products do), so its bound covers the GEMM's own error as
    well as the kernel's: the engine's set inside, about twice as wide, special values flagged
    alike, every summation order of the terms in float64 taken."""
    slow, fast = _paths(p)
    _same_specials_and_contains(slow, fast)
    for reverse in (False, True):
        assert fast.contains(_sequential_f32(*p, reverse)).all()
    iv = slow.fin & (slow.lo != slow.hi)
    wid = lambda s: s.hi[iv] - s.lo[iv]  # noqa: E731
    assert np.all(wid(fast) <= 2.01 * wid(slow) + 4 * np.spacing(np.maximum(np.abs(slow.lo[iv]), np.abs(slow.hi[iv]))))


def test_the_float64_gemm_path_rejects_a_result_a_billionth_off(monkeypatch):
    rng = np.random.default_rng(4)
    x = rng.standard_normal((1, 16, 9, 9))
    w = rng.standard_normal((8, 16, 3, 3))
    _, fast = _both_paths(monkeypatch, x, w, None, {"padding": 1})
    good = np.asarray(specs.conv2d(x, w, None, padding=1))
    assert fast.contains(good).all() and not fast.single().any()
    bad = good.copy()
    bad[0, 5, 2, 7] *= 1 + 1e-9
    ok = fast.contains(bad)
    assert not ok[0, 5, 2, 7] and ok.sum() == ok.size - 1


def test_the_float64_gemm_path_leaves_a_result_that_could_overflow_to_the_engine(monkeypatch):
    """Terms near float64's largest value: the GEMM path declines (its sums could not bound an
    overflow), and the engine's set, flagging +inf as possible, is the answer."""
    b = np.finfo(np.float64).max / 3
    x = np.array([b, b, -b, b]).reshape(1, 4, 1, 1)
    w = np.array([1, 1, -1.5, -1.5]).reshape(1, 4, 1, 1)
    slow, fast = _both_paths(monkeypatch, x, w, None, {})
    assert slow.pinf.all() and fast.pinf.all() and np.array_equal(fast.lo, slow.lo)


def test_the_gemm_path_rejects_a_result_one_part_in_a_thousand_off(monkeypatch):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((1, 16, 9, 9)).astype(np.float32)
    w = rng.standard_normal((8, 16, 3, 3)).astype(np.float32)
    _, fast = _both_paths(monkeypatch, x, w, None, {"padding": 1})
    good = np.asarray(specs.conv2d(x, w, None, padding=1))
    assert fast.contains(good).all()
    bad = good.copy()
    bad[0, 3, 4, 4] *= np.float32(1.001)
    ok = fast.contains(bad)
    assert not ok[0, 3, 4, 4] and ok.sum() == ok.size - 1


def test_the_gemm_path_flags_possible_overflow_as_the_engine_does(monkeypatch):
    """Products +b, +b, +1.5b (negative times negative), -1.5b with b = max/3: the sum is 2b, finite,
    but an order that adds the positive terms first overflows (P = 3.5b > max); with the weights
    negated, the same towards -Inf.  Every sign pairing counts in P and N."""
    b = np.float32(np.finfo(np.float32).max / 3)
    x = np.array([b, b, -b, b], np.float32).reshape(1, 4, 1, 1)
    for sign, flag in ((1, "pinf"), (-1, "ninf")):
        w = (sign * np.array([1, 1, -1.5, -1.5], np.float32)).reshape(1, 4, 1, 1)
        slow, fast = _both_paths(monkeypatch, x, w, None, {})
        assert getattr(fast, flag).all() and getattr(slow, flag).all(), flag
        assert (fast.pinf == slow.pinf).all() and (fast.ninf == slow.ninf).all() and fast.fin.all()


def test_a_paper_size_float32_problem_takes_the_gemm_path_and_others_the_engine():
    C = importlib.import_module("refconv.specs.conv2d")
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, 64, 64, 64)).astype(np.float32)
    w = rng.standard_normal((64, 64, 3, 3)).astype(np.float32)
    o = {"stride": 1, "padding": 1, "dilation": 1, "groups": 1}
    assert not C.accepted({"x": x, "w": w}, o).single().any()               # GEMM path: intervals only
    xi, wi = np.round(x[:, :8, :8, :8] * 4), np.round(w[:8, :8] * 4)       # small, exact integers
    assert C.accepted({"x": xi, "w": wi}, o).single().all()                # the engine finds them exact
    x64, w64 = x[:, :, :32, :32].astype(np.float64), np.concatenate([w, w]).astype(np.float64)
    x64[0, 0, 0, 0] = np.nan                                               # 75 M of work, a NaN term
    got = C.accepted({"x": x64, "w": w64}, o)
    assert got.nan[0, :, 0, 0].all() and not got.single()[got.fin].any()  # the float64 GEMM path
