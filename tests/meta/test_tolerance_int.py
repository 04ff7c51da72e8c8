"""The integer accumulator (filter2d uint8, ``accumulator="int"``) gets exact bounds: the int->float
conversion and the float add are deterministic, so only an FMA (``acc + w*x`` with the exact
product) widens the accepted set; int32 saturation and ``cast="wrap"`` stay exact."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from refconv.specs.filter2d import f32_to_int32_rz, pad_image
from refconv.tolerance import acceptance

INT32_MIN = -(2 ** 31)


def _paper_int(img, w, fma_taps=(), conversion="cuda", boundary="valid"):
    """The int accumulator evaluated per tap in float32: a rounded product (the spec) or, for the
    tap indices in ``fma_taps``, a fused ``acc + w*x`` (exact product, one rounding; exact in
    float64 for the weights used here, then rounded once to float32).  ``conversion="x86"`` is
    cvttss2si: out of range and NaN give INT32_MIN instead of saturating."""
    kh, kw = w.shape
    p = pad_image(img.astype(np.float64), kh, kw, boundary)
    oh, ow = p.shape[0] - kh + 1, p.shape[1] - kw + 1
    acc = np.zeros((oh, ow), np.int64)
    with np.errstate(all="ignore"):
        for t, (i, j) in enumerate((i, j) for i in range(kh) for j in range(kw)):
            x = p[i:i + oh, j:j + ow]
            a = acc.astype(np.float32)
            if t in fma_taps:
                v = (a.astype(np.float64) + np.float64(w[i, j]) * x).astype(np.float32)
            else:
                v = a + w[i, j] * x.astype(np.float32)
            if conversion == "x86":
                bad = ~(np.abs(v) < np.float32(2.0 ** 31))
                acc = np.where(bad, INT32_MIN, np.trunc(np.where(bad, 0, v))).astype(np.int64)
            else:
                acc = f32_to_int32_rz(v).astype(np.int64)
    return acc


def _accepted_values(acc, dtype):
    info = np.iinfo(dtype)
    return [x for x in range(info.min, info.max + 1) if acc.check(np.array([[x]], dtype)).ok]


def test_saturated_accumulator_with_wrap_accepts_only_the_one_answer():
    img = np.full((1, 3), 255, np.uint8)
    w = np.array([[1e7, 0, 0]], np.float32)
    acc = acceptance("filter2d", {"image": img, "weights": w},
                     {"boundary": "valid", "accumulator": "int", "cast": "wrap"})
    assert acc.expected[0, 0] == 255
    assert _accepted_values(acc, np.uint8) == [255]


def test_saturated_accumulator_to_int32_accepts_one_value():
    img = np.full((1, 3), 255, np.uint8)
    w = np.array([[1e7, 0, 0]], np.float32)
    acc = acceptance("filter2d", {"image": img, "weights": w},
                     {"boundary": "valid", "accumulator": "int", "out_dtype": "int32"})
    assert acc.exact
    assert acc.check(np.array([[2 ** 31 - 1]], np.int32)).ok
    assert not acc.check(np.array([[2 ** 31 - 2]], np.int32)).ok
    assert not acc.check(np.array([[2 ** 31 - 257]], np.int32)).ok


@pytest.mark.parametrize("cast,out", [("wrap", "uint8"), ("saturate", "int32"), ("wrap", "int16")])
def test_x86_style_int_conversion_is_rejected(cast, out):
    # cvttss2si returns INT32_MIN where CUDA's cvt.rzi saturates: a saturated sum shows it
    rng = np.random.default_rng(7)
    img = rng.integers(0, 256, (6, 7)).astype(np.uint8)
    img[2, 3] = 255
    w = rng.uniform(-2, 2, (3, 3)).astype(np.float32)
    w[1, 1] = np.float32(3e7)
    opts = {"boundary": "valid", "accumulator": "int", "cast": cast, "out_dtype": out}
    acc = acceptance("filter2d", {"image": img, "weights": w}, opts)
    from refconv.specs.filter2d import cast_to_int
    got = cast_to_int(_paper_int(img, w, conversion="x86"), np.dtype(out), cast)
    assert acc.check(cast_to_int(_paper_int(img, w), np.dtype(out), cast)).ok
    v = acc.check(got)
    assert not v.ok and v.n_bad >= 1, v.message


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2 ** 32 - 1), k=st.tuples(st.integers(1, 4), st.integers(1, 4)),
       fma=st.sets(st.integers(0, 15)), big=st.booleans())
def test_every_fma_mix_is_accepted(seed, k, fma, big):
    """Soundness: a kernel that fuses any subset of its taps into FMAs is accepted."""
    rng = np.random.default_rng(seed)
    img = rng.integers(0, 256, (5, 6)).astype(np.uint8)
    # weights with a lowest set bit >= 2**-12, so acc + w*x is exact in float64 (one rounding)
    scale = 2.0 ** 8 if big else 1.0
    w = (rng.integers(-2 ** 20, 2 ** 20, k) * 2.0 ** -12 * scale).astype(np.float32)
    acc = acceptance("filter2d", {"image": img, "weights": w}, {"boundary": "valid", "accumulator": "int",
                                                               "out_dtype": "int32"})
    got = _paper_int(img, w, fma_taps=fma).astype(np.int32)
    v = acc.check(got)
    assert v.ok, v.message


def test_only_the_fma_choice_widens_the_set():
    # acc = -4, then w*x = 3 * 1.6666666f = 4.99999988 exactly, whose rounded product is 5.0:
    # the spec gives trunc(-4 + 5) = 1, an FMA trunc(0.99999988) = 0; nothing else is accepted
    w = np.float32(1.6666666)
    assert np.float32(w * np.float32(3)) == 5.0 and np.float64(w) * 3 < 5.0
    img = np.array([[1, 3]], np.uint8)
    wts = np.array([[-4.0, w]], np.float32)
    acc = acceptance("filter2d", {"image": img, "weights": wts},
                     {"boundary": "valid", "accumulator": "int", "out_dtype": "int32"})
    assert _paper_int(img, wts)[0, 0] == 1 and _paper_int(img, wts, fma_taps={1})[0, 0] == 0
    assert (acc.accepted.L[0, 0], acc.accepted.H[0, 0]) == (0, 1)
