"""conv2d spec vs torch.nn.functional.conv2d (CPU)."""
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
