"""Bad arguments raise ValueError/TypeError naming the argument."""
import numpy as np
import pytest

from refconv import specs

U8 = np.zeros((4, 4), np.uint8)
F32 = np.zeros((4, 4), np.float32)
W = np.ones((3, 3), np.float32)

CASES = [
    (lambda: specs.filter2d(np.zeros((4,), np.uint8), W), ValueError, "image"),
    (lambda: specs.filter2d(U8.astype(np.int16), W), TypeError, "image"),
    (lambda: specs.filter2d(U8, W.astype(np.int32)), TypeError, "weights"),
    (lambda: specs.filter2d(U8, np.ones((0, 3), np.float32)), ValueError, "weights"),
    (lambda: specs.filter2d(U8, W, boundary="mirror"), ValueError, "boundary"),
    (lambda: specs.filter2d(U8, W, flip=1), TypeError, "flip"),
    (lambda: specs.filter2d(U8, W, accumulator="int64"), ValueError, "accumulator"),
    (lambda: specs.filter2d(F32, W, accumulator="int"), ValueError, "accumulator"),
    (lambda: specs.filter2d(U8, W, shift=-1), ValueError, "shift"),
    (lambda: specs.filter2d(U8, W, shift=1.0), TypeError, "shift"),
    (lambda: specs.filter2d(U8, W, rounding="up"), ValueError, "rounding"),
    (lambda: specs.filter2d(U8, W, cast="clip"), ValueError, "cast"),
    (lambda: specs.filter2d(U8, W, out_dtype=np.int64), TypeError, "out_dtype"),
    (lambda: specs.filter2d(F32, W, shift=2), ValueError, "shift"),
    (lambda: specs.filter2d(F32, W, rounding="nearest-even"), ValueError, "rounding"),
    (lambda: specs.filter2d(F32, W, cast="wrap"), ValueError, "cast"),
    (lambda: specs.filter2d(F32, W, out_dtype=np.uint8), TypeError, "out_dtype"),
    (lambda: specs.filter2d(U8, W, accumulator="int", rounding="nearest-even"), ValueError, "rounding"),
    (lambda: specs.filter2d(U8, W, out_dtype=np.float32, cast="wrap"), ValueError, "cast"),
    (lambda: specs.conv2d(np.zeros((1, 2, 4)), np.zeros((1, 2, 1, 1))), ValueError, "x"),
    (lambda: specs.conv2d(np.zeros((1, 2, 4, 4), np.int32), np.zeros((1, 2, 1, 1))), TypeError, "x"),
    (lambda: specs.conv2d(np.zeros((1, 2, 4, 4)), np.zeros((1, 2, 1, 1), np.float32)), TypeError, "w"),
    (lambda: specs.conv2d(np.zeros((1, 2, 4, 4)), np.zeros((1, 3, 1, 1))), ValueError, "w"),
    (lambda: specs.conv2d(np.zeros((1, 2, 4, 4)), np.zeros((2, 2, 1, 1)), np.zeros(3)), ValueError, "bias"),
    (lambda: specs.conv2d(np.zeros((1, 2, 4, 4)), np.zeros((1, 2, 1, 1)), stride=0), ValueError, "stride"),
    (lambda: specs.conv2d(np.zeros((1, 2, 4, 4)), np.zeros((1, 2, 1, 1)), padding=(1, 2, 3)), ValueError, "padding"),
    (lambda: specs.conv2d(np.zeros((1, 2, 4, 4)), np.zeros((1, 2, 1, 1)), dilation=0), ValueError, "dilation"),
    (lambda: specs.conv2d(np.zeros((1, 2, 4, 4)), np.zeros((1, 1, 1, 1)), groups=2), ValueError, "groups"),
    (lambda: specs.conv2d(np.zeros((1, 2, 2, 2)), np.zeros((1, 2, 3, 3))), ValueError, "output"),
    (lambda: specs.sobel(np.zeros((4, 4, 2), np.uint8)), ValueError, "image"),
    (lambda: specs.sobel(np.zeros((4, 4, 3), np.float32)), TypeError, "image"),
    (lambda: specs.sobel(U8, magnitude="l3"), ValueError, "magnitude"),
    (lambda: specs.sobel(U8, boundary="edge"), ValueError, "boundary"),
    (lambda: specs.sobel(U8, out_dtype="float16"), TypeError, "out_dtype"),
    (lambda: specs.sobel(U8, cast="none"), ValueError, "cast"),
    (lambda: specs.sobel(U8, rounding="floor"), ValueError, "rounding"),
    (lambda: specs.matvec(np.zeros((2, 3)), np.zeros(2)), ValueError, "v"),
    (lambda: specs.matvec(np.zeros((2, 3)), np.zeros(3, np.float32)), TypeError, "v"),
    (lambda: specs.matvec(np.zeros((2, 3), np.int32), np.zeros(3, np.int32)), TypeError, "m"),
    (lambda: specs.kron(np.zeros((2, 2)), np.zeros((2, 2), np.float32)), TypeError, "b"),
    (lambda: specs.kron(np.zeros(2), np.zeros((2, 2))), ValueError, "a"),
    (lambda: specs.kron(np.zeros((2, 2), complex), np.zeros((2, 2), complex)), TypeError, "a"),
    (lambda: specs.kron_blocks(np.zeros((2, 2)), np.zeros((2, 2)), 0), ValueError, "rows"),
    (lambda: specs.kron_blocks(np.zeros((2, 2)), np.zeros((2, 2)), 1, out=np.zeros((4, 3))), ValueError, "out"),
    (lambda: specs.kron_blocks(np.zeros((2, 2)), np.zeros((2, 2)), 1, out=np.zeros((4, 4), np.float32)),
     ValueError, "out"),
]


@pytest.mark.parametrize("call,exc,name", CASES, ids=[f"{i}-{c[2]}" for i, c in enumerate(CASES)])
def test_bad_argument(call, exc, name):
    with pytest.raises(exc) as ei:
        call()
    msg = str(ei.value)
    assert name in msg, msg
    assert "accepted" in msg or "got" in msg or "must" in msg, msg
