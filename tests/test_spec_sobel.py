"""sobel spec vs cv2.Sobel (ksize 3) + convertScaleAbs, the paper's l1 combination."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

from refconv import specs
from refconv.tolerance import acceptance

hw = st.tuples(st.integers(3, 12), st.integers(3, 12))


@settings(max_examples=30, deadline=None)
@given(data=st.data(), shape=hw)
def test_cv2_gray_uint8_l1(data, shape):
    """Paper: Sobel to CV_16S, convertScaleAbs each, saturating add == refconv l1 saturate
    (saturating |Gx| and |Gy| before the add gives the same as saturating the sum).  cv2's
    default border is BORDER_REFLECT_101 == boundary="reflect"; "valid" is its interior."""
    cv2 = pytest.importorskip("cv2")
    img = data.draw(hnp.arrays(np.uint8, shape))
    gx = cv2.Sobel(img, cv2.CV_16S, 1, 0, ksize=3)
    gy = cv2.Sobel(img, cv2.CV_16S, 0, 1, ksize=3)
    theirs = cv2.add(cv2.convertScaleAbs(gx), cv2.convertScaleAbs(gy))
    np.testing.assert_array_equal(specs.sobel(img, boundary="reflect"), theirs)
    np.testing.assert_array_equal(specs.sobel(img), theirs[1:-1, 1:-1])
    assert acceptance("sobel", {"image": img}, {"boundary": "reflect"}).exact


@settings(max_examples=30, deadline=None)
@given(data=st.data(), shape=hw, mag=st.sampled_from(["l1", "l2"]))
def test_cv2_float32(data, shape, mag):
    cv2 = pytest.importorskip("cv2")
    img = data.draw(hnp.arrays(np.float32, shape, elements=st.floats(0, 255, width=32)))
    gx = cv2.Sobel(img, cv2.CV_32F, 1, 0, ksize=3, borderType=cv2.BORDER_REPLICATE)
    gy = cv2.Sobel(img, cv2.CV_32F, 0, 1, ksize=3, borderType=cv2.BORDER_REPLICATE)
    theirs = (np.abs(gx) + np.abs(gy)) if mag == "l1" else cv2.magnitude(gx, gy)
    opts = dict(magnitude=mag, boundary="replicate", out_dtype=np.float32)
    v = acceptance("sobel", {"image": img}, opts).check(theirs.astype(np.float32))
    assert v.ok, v.message


@settings(max_examples=20, deadline=None)
@given(data=st.data(), shape=hw, ch=st.sampled_from([3, 4]), mag=st.sampled_from(["l1", "l2"]),
       rounding=st.sampled_from(["trunc", "nearest-even"]))
def test_colour_float_gray_within_bound(data, shape, ch, mag, rounding):
    """Colour -> float32 gray (not cv2.cvtColor, which rounds the gray to uint8 in fixed point).
    The same pipeline evaluated in other orders (float64 gray, reversed sums) is accepted."""
    img = data.draw(hnp.arrays(np.uint8, shape + (ch,)))
    c = img[..., :3].astype(np.float64)
    gray = (0.114 * c[..., 2] + 0.587 * c[..., 1]) + 0.299 * c[..., 0]
    p = gray
    gx = (p[2:, 2:] + 2 * p[1:-1, 2:] + p[:-2, 2:]) - (p[2:, :-2] + 2 * p[1:-1, :-2] + p[:-2, :-2])
    gy = (p[2:, 2:] + 2 * p[2:, 1:-1] + p[2:, :-2]) - (p[:-2, 2:] + 2 * p[:-2, 1:-1] + p[:-2, :-2])
    m = np.abs(gx) + np.abs(gy) if mag == "l1" else np.hypot(gx, gy)
    m = m.astype(np.float32)
    acc = acceptance("sobel", {"image": img}, dict(magnitude=mag, rounding=rounding))
    got = np.clip(np.trunc(m) if rounding == "trunc" else np.rint(m), 0, 255).astype(np.uint8)
    v = acc.check(got)
    assert v.ok, v.message
    accf = acceptance("sobel", {"image": img}, dict(magnitude=mag, out_dtype="float32"))
    v = accf.check(m)
    assert v.ok, v.message


def test_colour_alpha_ignored_and_gray_not_rounded():
    rng = np.random.default_rng(0)
    img = rng.integers(0, 256, (6, 7, 4)).astype(np.uint8)
    a = specs.sobel(img, out_dtype=np.float32)
    img2 = img.copy()
    img2[..., 3] = 0
    np.testing.assert_array_equal(a, specs.sobel(img2, out_dtype=np.float32))
    np.testing.assert_array_equal(a, specs.sobel(img[..., :3], out_dtype=np.float32))
    assert not np.all(a == np.round(a))   # the gray is fractional


def test_l2_sqrt_is_faithful_not_exact():
    """Gx, Gy and Gx^2+Gy^2 are exact for uint8 gray, but the sqrt is only required to be
    faithful (cv2.magnitude is not correctly rounded): 1 ulp is accepted, 2 ulps are not."""
    img = np.random.default_rng(1).integers(0, 256, (8, 8)).astype(np.uint8)
    acc = acceptance("sobel", {"image": img}, {"magnitude": "l2", "out_dtype": "float32"})
    e = acc.expected
    assert acc.check(np.nextafter(e, np.float32(np.inf))).ok
    nz = e > 0
    two = np.nextafter(np.nextafter(e, np.float32(np.inf)), np.float32(np.inf))
    two = np.where(nz, two * np.float32(1 + 2 ** -22), e)
    assert acc.check(two.astype(np.float32)).n_bad == int(nz.sum())


def test_big_endian_image_is_accepted_and_gives_the_native_result():
    img = (np.random.default_rng(3).random((6, 7)) * 300).astype(np.float32)
    want = specs.sobel(img, out_dtype=np.float32)
    got = specs.sobel(img.astype(">f4"), out_dtype=np.float32)
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))


@pytest.mark.parametrize("dtype", [np.uint8, np.float32, np.float64])
def test_out_dtype_none_means_the_default_uint8_not_float64(dtype):
    img = (np.random.default_rng(4).random((6, 7)) * 300).astype(dtype)
    got = specs.sobel(img, out_dtype=None)
    assert got.dtype == np.uint8
    np.testing.assert_array_equal(got, specs.sobel(img))
