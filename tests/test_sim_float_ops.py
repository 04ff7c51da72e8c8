"""The simulator's exact float helpers (tooling/cuda/_env.py ``_float_ops("sim")``) and its fast
scalar casts (tooling/cuda/sim_casts.py) give the bits NumPy's float32/float64 arithmetic and
numba's own ``Type.__call__`` give, on random and edge-case bit patterns."""
import warnings

import numpy as np
import pytest

from refconv.tooling.cuda import _env, sim_casts

EDGES32 = np.array([0x00000000, 0x80000000, 0x00000001, 0x807FFFFF, 0x00800000, 0x7F7FFFFF, 0xFF7FFFFF,
                    0x7F800000, 0xFF800000, 0x7FC00000, 0x3F800000, 0x5F800000, 0x5F7FFFFF, 0x1F800000,
                    0x20000000, 0x3F800001, 0x7F000000, 0x7EFFFFFF], np.uint32).view(np.float32)


def _operands32(n=4000, seed=0):
    rng = np.random.default_rng(seed)
    bits = rng.integers(0, 2 ** 32, n, dtype=np.uint64).astype(np.uint32).view(np.float32)
    near = (rng.standard_normal(n) * 2.0 ** rng.integers(-140, 128, n)).astype(np.float32)
    return np.concatenate([EDGES32, bits, near])


def _numpy_op(op, a, b, t):
    with np.errstate(all="ignore"):
        return t(op(t(a), t(b)))


@pytest.mark.parametrize("i,op", [(0, np.multiply), (1, np.add)], ids=["fmul32", "fadd32"])
def test_float32_helpers_give_numpys_bits(i, op):
    f = _env._float_ops("sim")[i]
    xs = _operands32()
    ys = np.roll(_operands32(seed=1), 7)
    with warnings.catch_warnings():
        warnings.simplefilter("error")   # the fast path warns about nothing NumPy's way hides
        got = np.array([f(a, b) for a, b in zip(xs, ys)], np.float32)
    want = np.array([_numpy_op(op, a, b, np.float32) for a, b in zip(xs, ys)], np.float32)
    assert got.view(np.uint32).tolist() == want.view(np.uint32).tolist()


@pytest.mark.parametrize("i,op", [(3, np.multiply), (4, np.add)], ids=["fmul64", "fadd64"])
def test_float64_helpers_give_numpys_bits(i, op):
    f = _env._float_ops("sim")[i]
    rng = np.random.default_rng(2)
    xs = np.concatenate([rng.integers(0, 2 ** 63, 3000, dtype=np.uint64).view(np.float64),
                         np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e308, -1e308, 5e-324])])
    ys = np.roll(xs, 5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = np.array([f(a, b) for a, b in zip(xs, ys)], np.float64)
    want = np.array([_numpy_op(op, a, b, np.float64) for a, b in zip(xs, ys)], np.float64)
    assert got.view(np.uint64).tolist() == want.view(np.uint64).tolist()


def test_fast_casts_return_what_numbas_cast_returns():
    from numba import float32, float64, int32, int64, uint8, uint32
    values = [0, 1, -1, 255, 3.7, -2.5, np.float32(1.5), np.float64(-3.25), np.uint8(200), np.int32(-7),
              True, 2 ** 31 - 1]
    types_ = [float32, float64, int32, int64, uint8, uint32]

    def run():
        out = []
        for t in types_:
            for v in values:
                try:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        r = t(v)
                    out.append((type(r).__name__, np.asarray(r).tobytes()))
                except Exception as e:  # noqa: BLE001 - the same error either way
                    out.append(("error", type(e).__name__))
        out.append(str(float32(int32, int32)))   # a signature, not a cast
        return out

    sim_casts.uninstall()
    plain = run()
    sim_casts.install()
    try:
        fast = run()
    finally:
        sim_casts.uninstall()
    assert fast == plain
