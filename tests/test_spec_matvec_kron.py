"""matvec vs numpy matmul (within the bound); kron / kron_blocks vs numpy.kron (exact)."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

from helpers import one_ulp_off
from refconv import specs
from refconv.tolerance import acceptance


@settings(max_examples=40, deadline=None)
@given(r=st.integers(1, 40), c=st.integers(1, 300), dtype=st.sampled_from([np.float32, np.float64]),
       seed=st.integers(0, 2 ** 32 - 1))
def test_matvec_numpy(r, c, dtype, seed):
    rng = np.random.default_rng(seed)
    m = rng.standard_normal((r, c)).astype(dtype)
    v = rng.standard_normal(c).astype(dtype)
    acc = acceptance("matvec", {"m": m, "v": v}, {})
    for got in (m @ v, np.einsum("rc,c->r", m, v), (m[:, ::-1] @ v[::-1])):
        verdict = acc.check(got.astype(dtype))
        assert verdict.ok, verdict.message


def test_matvec_point_value_is_float64_rounded():
    m = np.array([[1.0, 2.0 ** -30, -1.0]], np.float32)
    v = np.ones(3, np.float32)
    assert specs.matvec(m, v)[0] == np.float32(2.0 ** -30)   # plain float32 left-to-right gives 0


kron_dtypes = st.sampled_from([np.float64, np.float32, np.int32, np.uint8, np.int8])


@settings(max_examples=40, deadline=None)
@given(data=st.data(), dtype=kron_dtypes, ash=st.tuples(st.integers(0, 5), st.integers(0, 5)),
       bsh=st.tuples(st.integers(0, 6), st.integers(0, 6)), rows=st.integers(1, 9))
def test_kron_numpy(data, dtype, ash, bsh, rows):
    a = data.draw(hnp.arrays(dtype, ash))
    b = data.draw(hnp.arrays(dtype, bsh))
    with np.errstate(all="ignore"):
        ref = np.kron(a, b)
    ours = specs.kron(a, b)
    assert ours.dtype == np.dtype(dtype) and ours.shape == ref.shape
    np.testing.assert_array_equal(ours, ref)          # NaN == NaN for assert_array_equal
    blocks = list(specs.kron_blocks(a, b, rows))
    assert [r0 for r0, _ in blocks] == list(range(0, ref.shape[0], rows))
    assert all(len(blk) <= rows for _, blk in blocks)
    if blocks:
        np.testing.assert_array_equal(np.concatenate([blk for _, blk in blocks]), ref)
    if ref.size:
        assert acceptance("kron", {"a": a, "b": b}, {}).check(ref).ok


def test_kron_integer_wraps():
    a = np.array([[200]], np.uint8)
    assert specs.kron(a, a)[0, 0] == (200 * 200) % 256


def test_kron_blocks_into_memmap(tmp_path):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 4))
    b = rng.standard_normal((5, 6))
    mm = np.lib.format.open_memmap(tmp_path / "k.npy", mode="w+", dtype=np.float64, shape=(15, 24))
    for r0, blk in specs.kron_blocks(a, b, 4, out=mm):
        assert np.shares_memory(blk, mm)
    mm.flush()
    np.testing.assert_array_equal(np.load(tmp_path / "k.npy"), np.kron(a, b))


def test_kron_exact_rejects_one_ulp():
    a = np.array([[1.5, -2.0]], np.float32)
    b = np.array([[3.0], [0.1]], np.float32)
    acc = acceptance("kron", {"a": a, "b": b}, {})
    assert acc.exact
    v = one_ulp_off(acc, (1, 0))
    assert not v.ok and v.n_bad == 1 and v.first_bad == (1, 0)


def test_big_endian_inputs_are_accepted_and_give_the_native_result():
    rng = np.random.default_rng(6)
    m, v = rng.random((4, 5)).astype(np.float32), rng.random(5).astype(np.float32)
    np.testing.assert_array_equal(specs.matvec(m.astype(">f4"), v), specs.matvec(m, v))
    a, b = rng.random((2, 3)), rng.random((3, 2))
    got = specs.kron(a.astype(">f8"), b)   # mixed byte orders: the same dtype once native
    assert got.dtype.isnative
    np.testing.assert_array_equal(got, specs.kron(a, b))


def test_kron_blocks_checks_out_when_the_generator_is_created():
    a, b = np.ones((2, 2)), np.ones((2, 3))
    ro = np.zeros((4, 6))
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only; accepted: a writable array"):
        specs.kron_blocks(a, b, 2, out=ro)              # no next(): at creation
    with pytest.raises(ValueError, match="float64, big-endian.*accepted: shape"):
        specs.kron_blocks(a, b, 2, out=np.zeros((4, 6), ">f8"))
    with pytest.raises(ValueError, match=r"out has shape \(4, 5\)"):
        specs.kron_blocks(a, b, 2, out=np.zeros((4, 5)))
