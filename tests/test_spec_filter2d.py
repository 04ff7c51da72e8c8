"""filter2d spec vs scipy.ndimage / OpenCV, and the paper-faithful int accumulator vs a scalar C model."""
import time

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

from refconv import specs
from refconv.tolerance import acceptance

SCIPY_MODE = {"zero": dict(mode="constant", cval=0.0), "replicate": dict(mode="nearest"),
              "reflect": dict(mode="mirror"), "wrap": dict(mode="wrap")}
CV2_BORDER = {"zero": "BORDER_CONSTANT", "replicate": "BORDER_REPLICATE", "reflect": "BORDER_REFLECT_101"}

shapes = st.tuples(st.integers(1, 9), st.integers(1, 9))
ksizes = st.tuples(st.integers(1, 5), st.integers(1, 5))


def _weights(draw, kh, kw, dtype=np.float32):
    # scipy.ndimage drops weights with |w| <= DBL_EPSILON from the footprint (they count as 0),
    # so tiny nonzero weights are kept out of the peer comparisons.
    el = st.floats(-2, 2, width=32).filter(lambda v: v == 0 or abs(v) > 1e-6)
    return draw(hnp.arrays(dtype, (kh, kw), elements=el))


@settings(max_examples=40, deadline=None)
@given(data=st.data(), hw=shapes, k=ksizes, boundary=st.sampled_from(list(SCIPY_MODE)), flip=st.booleans())
def test_scipy_float64(data, hw, k, boundary, flip):
    nd = pytest.importorskip("scipy.ndimage")
    img = data.draw(hnp.arrays(np.float64, hw, elements=st.floats(-100, 100)))
    w = _weights(data.draw, *k, dtype=np.float64)
    ours = specs.filter2d(img, w, boundary=boundary, flip=flip)
    if flip:
        # scipy.ndimage.convolve centres an even-sized kernel one cell the other way: origin -1
        # on even axes reproduces the anchor KH//2 of the flipped kernel.
        theirs = nd.convolve(img, w, origin=[kk % 2 - 1 for kk in k], **SCIPY_MODE[boundary])
    else:
        theirs = nd.correlate(img, w, origin=0, **SCIPY_MODE[boundary])  # origin 0 == anchor K//2
    acc = acceptance("filter2d", {"image": img, "weights": w}, {"boundary": boundary, "flip": flip})
    v = acc.check(theirs)
    assert v.ok, v.message
    np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-9)


@settings(max_examples=30, deadline=None)
@given(data=st.data(), hw=shapes, k=ksizes, boundary=st.sampled_from(list(CV2_BORDER)), c=st.integers(0, 2))
def test_cv2_float32(data, hw, k, boundary, c):
    cv2 = pytest.importorskip("cv2")
    shape = hw if c == 0 else (c,) + hw
    img = data.draw(hnp.arrays(np.float32, shape, elements=st.floats(0, 255, width=32)))
    w = _weights(data.draw, *k)
    planes = [img] if c == 0 else list(img)
    theirs = np.stack([cv2.filter2D(p, -1, w, borderType=getattr(cv2, CV2_BORDER[boundary])) for p in planes])
    theirs = theirs.reshape(specs.filter2d(img, w, boundary=boundary).shape)
    v = acceptance("filter2d", {"image": img, "weights": w}, {"boundary": boundary}).check(theirs)
    assert v.ok, v.message


@settings(max_examples=30, deadline=None)
@given(data=st.data(), hw=shapes, k=ksizes, boundary=st.sampled_from(list(CV2_BORDER)))
def test_cv2_uint8_saturation_rounds_to_nearest(data, hw, k, boundary):
    """cv2.filter2D on uint8 saturates and rounds to nearest (cvRound: half to even).  refconv
    reproduces it with accumulator="float32", rounding="nearest-even", cast="saturate" (within
    the bound: OpenCV's summation order differs)."""
    cv2 = pytest.importorskip("cv2")
    img = data.draw(hnp.arrays(np.uint8, hw))
    w = _weights(data.draw, *k)
    theirs = cv2.filter2D(img, -1, w, borderType=getattr(cv2, CV2_BORDER[boundary]))
    opts = dict(boundary=boundary, accumulator="float32", rounding="nearest-even", cast="saturate")
    v = acceptance("filter2d", {"image": img, "weights": w}, opts).check(theirs)
    assert v.ok, v.message


def test_cv2_has_no_wrap_border():
    cv2 = pytest.importorskip("cv2")
    img = np.zeros((5, 5), np.float32)
    with pytest.raises(cv2.error):
        cv2.filter2D(img, -1, np.ones((3, 3), np.float32), borderType=cv2.BORDER_WRAP)


def test_cv2_valid_is_interior_of_any_border():
    cv2 = pytest.importorskip("cv2")
    rng = np.random.default_rng(3)
    img = rng.integers(0, 256, (9, 11)).astype(np.uint8)
    w = np.array([[1, 2, 1], [2, 4, 2], [1, 2, 1]], np.float32) / 16
    full = cv2.filter2D(img, -1, w, borderType=cv2.BORDER_REPLICATE)
    ours = specs.filter2d(img, w, boundary="valid", rounding="nearest-even")
    np.testing.assert_array_equal(ours, full[1:-1, 1:-1])


def _paper_c(img, w, shift, cast):
    """Scalar model of the seed kernels' C: acc = (int)((float)acc + w*(float)x)."""
    kh, kw = w.shape
    h, wd = img.shape
    out = np.zeros((h - kh + 1, wd - kw + 1), np.int64)
    for y in range(out.shape[0]):
        for x in range(out.shape[1]):
            acc = 0
            for i in range(kh):
                for j in range(kw):
                    v = np.float32(np.float32(acc) + np.float32(w[i, j]) * np.float32(img[y + i, x + j]))
                    acc = 0 if np.isnan(v) else int(max(min(float(np.trunc(v)), 2 ** 31 - 1), -2 ** 31))
            out[y, x] = acc >> shift
    return np.clip(out, 0, 255).astype(np.uint8) if cast == "saturate" else out.astype(np.uint8)


@pytest.mark.parametrize("shift,cast", [(0, "saturate"), (4, "wrap"), (2, "saturate")])
def test_int_accumulator_matches_scalar_c(shift, cast):
    rng = np.random.default_rng(shift)
    with np.errstate(all="ignore"):
        img = rng.integers(0, 256, (7, 8)).astype(np.uint8)
        w = rng.uniform(-3, 3, (3, 3)).astype(np.float32)
        ours = specs.filter2d(img, w, boundary="valid", accumulator="int", shift=shift, cast=cast)
        np.testing.assert_array_equal(ours, _paper_c(img, w, shift, cast))


def test_int_accumulator_differs_from_float_accumulator():
    # per-tap truncation: 0.5*1 truncates to 0 at every tap, the float sum does not
    img = np.ones((3, 3), np.uint8)
    w = np.full((3, 3), 0.5, np.float32)
    assert specs.filter2d(img, w, boundary="valid", accumulator="int")[0, 0] == 0
    assert specs.filter2d(img, w, boundary="valid")[0, 0] == 4


def test_negative_shift_floors():
    img = np.full((1, 1), 3, np.uint8)
    w = np.full((1, 1), -1.0, np.float32)
    assert specs.filter2d(img, w, accumulator="int", shift=1, out_dtype=np.int16)[0, 0] == -2
    # the float accumulator path divides then rounds toward zero instead
    assert specs.filter2d(img, w, shift=1, out_dtype=np.int16)[0, 0] == -1


def test_valid_smaller_than_kernel_is_empty():
    out = specs.filter2d(np.zeros((2, 5), np.uint8), np.ones((3, 3), np.float32), boundary="valid")
    assert out.shape == (0, 3) and out.dtype == np.uint8
    out = specs.filter2d(np.zeros((2, 2, 2), np.float32), np.ones((3, 4), np.float32), boundary="valid")
    assert out.shape == (2, 0, 0)


def test_planar_channels_filtered_alike():
    rng = np.random.default_rng(0)
    img = rng.integers(0, 256, (3, 6, 5)).astype(np.uint8)
    w = rng.uniform(-1, 1, (2, 4)).astype(np.float32)
    out = specs.filter2d(img, w, boundary="reflect")
    for c in range(3):
        np.testing.assert_array_equal(out[c], specs.filter2d(img[c], w, boundary="reflect"))


def test_cast_wrap_and_saturate():
    img = np.full((1, 1), 200, np.uint8)
    w = np.full((1, 1), 1.5, np.float32)          # 300
    assert specs.filter2d(img, w)[0, 0] == 255
    assert specs.filter2d(img, w, cast="wrap")[0, 0] == 300 % 256
    w = np.full((1, 1), np.inf, np.float32)
    assert specs.filter2d(img, w, cast="wrap")[0, 0] == 255     # int64 max mod 256
    assert specs.filter2d(img, -w, cast="wrap")[0, 0] == 0
    assert specs.filter2d(img, np.full((1, 1), np.nan, np.float32))[0, 0] == 0   # NaN -> 0


def test_nonfinite_propagation_float():
    img = np.zeros((3, 3), np.float32)
    img[1, 1] = np.inf
    out = specs.filter2d(img, np.ones((3, 3), np.float32))
    assert np.all(np.isinf(out))   # every window sees the Inf (w=1)
    w = np.ones((3, 3), np.float32)
    w[0, 0] = 0
    out = specs.filter2d(img, w)
    assert np.isnan(out[2, 2]) and np.isinf(out[0, 0])   # 0*Inf = NaN on the tap that sees it


def test_speed_large_uint8():
    img = np.random.default_rng(0).integers(0, 256, (3072, 3072)).astype(np.uint8)
    w = np.full((3, 3), 1 / 9, np.float32)
    # ~0.4 s alone; CPU time (not wall) so that a loaded test machine does not fail it.  A
    # per-pixel Python loop would take minutes.
    t = time.process_time()
    specs.filter2d(img, w)
    assert time.process_time() - t < 4.0


@pytest.mark.parametrize("dtype", ["float32", "float64", "uint8"])
def test_big_endian_image_and_weights_are_accepted_and_give_the_native_result(dtype):
    rng = np.random.default_rng(7)
    img = (rng.random((5, 6)) * 200).astype(dtype)
    w = rng.random((3, 3)).astype("float32")
    want = specs.filter2d(img, w)
    got = specs.filter2d(img.astype(np.dtype(dtype).newbyteorder(">")), w.astype(">f4"))
    assert got.dtype == want.dtype and got.dtype.isnative
    np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))


def test_saturating_a_float32_result_beyond_int32_gives_the_int32_limits():
    """float32 cannot hold int32's max (it rounds up to 2**31): saturation compares in float64,
    so values past the limits give exactly INT32_MAX / INT32_MIN, never a wrapped or undefined cast."""
    from refconv.specs.filter2d import cast_to_int
    v = np.array([3e9, -3e9, 2.0 ** 31, np.inf, -np.inf, np.nan, 2147483520.0, -7.0], np.float32)
    got = cast_to_int(v, np.dtype(np.int32), "saturate")
    assert got.dtype == np.int32
    assert got.tolist() == [2147483647, -2147483648, 2147483647, 2147483647, -2147483648, 0, 2147483520, -7]
