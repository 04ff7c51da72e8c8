"""docs/specs.md's OpenCV mapping, as stated: flip=True equals cv2.filter2D of the flipped kernel
with the *default* anchor, and cv2.filter2D to uint8 gives 0 where the spec saturates to 255."""
import numpy as np
import pytest

from refconv import specs

cv2 = pytest.importorskip("cv2")


def test_flip_equals_opencv_on_the_flipped_kernel_with_the_default_anchor():
    rng = np.random.default_rng(0)
    img = rng.integers(-16, 17, (9, 10)).astype(np.float32)
    k = rng.integers(-4, 5, (4, 2)).astype(np.float32)          # even sizes: the anchors differ
    ref = specs.filter2d(img, k, boundary="reflect", flip=True)
    kf = cv2.flip(k, -1)
    default = cv2.filter2D(img, -1, kf, borderType=cv2.BORDER_REFLECT_101)
    flipped_anchor = cv2.filter2D(img, -1, kf, anchor=(k.shape[1] - 1 - k.shape[1] // 2,
                                                       k.shape[0] - 1 - k.shape[0] // 2),
                                  borderType=cv2.BORDER_REFLECT_101)
    assert np.array_equal(ref, default)
    assert not np.array_equal(ref, flipped_anchor)


@pytest.mark.parametrize("w", [1e7, np.inf])
def test_opencv_uint8_gives_0_where_the_sum_reaches_2_31_or_inf_and_the_spec_saturates(w):
    img = np.full((5, 5), 255, np.uint8)
    k = np.full((3, 3), w, np.float32)
    ref = specs.filter2d(img, k, boundary="reflect", rounding="nearest-even")
    got = cv2.filter2D(img, -1, k, borderType=cv2.BORDER_REFLECT_101)
    assert ref[2, 2] == 255 and got[2, 2] == 0
