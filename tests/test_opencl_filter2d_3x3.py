"""filter2d_3x3.cl's float-to-int of a tap: ``convert_int_sat_rtz`` (saturate, NaN -> 0, the
spec's ``cvt.rzi.s32.f32``) where the target implements it as OpenCL C says
(``NATIVE_F2I_TARGETS``), the NaN case written out elsewhere.  These tests probe each installed
CPU target's ``convert_int_sat_rtz`` (so a target in the list that stops following the rule
fails here, and a target outside it that follows it shows up), and run the 3x3 variants on
weights whose taps give NaN, +-Inf and sums past the int32 limits on PoCL and on Oclgrind."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("pyopencl")

from refconv import Problem  # noqa: E402
from refconv import opencl as oc  # noqa: E402
from refconv.checking import check_example  # noqa: E402

PROBE = """
__kernel void probe(__global const float *v, __global int *r)
{
    const int i = get_global_id(0);
    r[i] = convert_int_sat_rtz(v[i]);
}
"""
VALUES = np.array([np.nan, np.inf, -np.inf, 2.0 ** 31, -(2.0 ** 31), 3e38, -3e38, 2147483520.0,
                   -2147483904.0, 1.75, -1.75, -0.0], np.float32)
EXPECTED = np.array([0, 2 ** 31 - 1, -2 ** 31, 2 ** 31 - 1, -2 ** 31, 2 ** 31 - 1, -2 ** 31, 2147483520,
                     -2 ** 31, 1, -1, 0], np.int32)

TARGETS = ("pocl", "oclgrind")


def _target(t):
    ctx = oc.using(t)
    ctx.__enter__()
    if oc.available():
        ctx.__exit__(None, None, None)
        pytest.skip(str(oc.available()))
    return ctx


def _convert(values):
    import pyopencl as cl
    e = oc.env()
    out = np.zeros(len(values), np.int32)
    ob = cl.Buffer(e.ctx, cl.mem_flags.WRITE_ONLY, out.nbytes)
    with oc.diagnosed("convert_int_sat_rtz probe"):
        oc.kernel(PROBE, "probe", (), "probe.cl")(e.queue, (len(values),), None, oc.to_device(values), ob)
    cl.enqueue_copy(e.queue, out, ob)
    e.queue.finish()
    return out


@pytest.mark.parametrize("target", TARGETS)
def test_native_f2i_only_where_convert_int_sat_rtz_is_the_spec_conversion(target):
    from refconv.backends.opencl.filter2d import NATIVE_F2I_TARGETS
    ctx = _target(target)
    try:
        got = _convert(VALUES)
    finally:
        ctx.__exit__(None, None, None)
    follows = bool(np.array_equal(got, EXPECTED))
    if target in NATIVE_F2I_TARGETS:
        assert follows, f"{target}: convert_int_sat_rtz{tuple(VALUES)} = {tuple(got)}, expected {tuple(EXPECTED)}"
    elif target == "oclgrind":
        # Oclgrind 21.10: INT_MIN for NaN (the reason the kernel writes the NaN case out there)
        assert not follows or got[0] == 0


def _weights_problem(weights: np.ndarray, w: int = 37, cast: str = "wrap") -> Problem:
    p = Problem.parse(f"filter2d:dtype=uint8,c=0,h=6,w={w},kh=3,kw=3:boundary=valid,flip=0,accumulator=int,"
                      f"shift=4,rounding=trunc,cast={cast}:image=random.3,weights=exact.4")
    img = np.array(p.inputs["image"])
    img[:, ::5] = 0                 # 0 * Inf: NaN sums next to finite ones
    img[2, :] = 255
    return p.with_inputs({"image": img, "weights": weights.astype(np.float32)})


SPECIAL_WEIGHTS = [
    np.array([[np.nan, 0.25, -1], [2, 0.5, 0], [1, -0.75, 3]]),
    np.array([[1, np.inf, -1], [2, 0.5, 0], [1, -0.75, 3]]),
    np.array([[1, 0, -1], [-np.inf, 0.5, 0], [1, -0.75, np.inf]]),
    np.array([[3e38, 1, -1], [2, -3e38, 0], [1, -0.75, 3]]),
    np.array([[1e7, 1e7, 1e7], [1e7, 1e7, 1e7], [-1e7, 1e7, 1e7]]),
]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", ["GM", "CM_CF8", "SM_CF4_Vec", "GM_CF2_Vec", "CM_CF12_Vec"])
def test_3x3_variants_give_the_spec_on_special_taps(target, name):
    from refconv.backends.opencl import filter2d
    v = next(x for x in filter2d.variants() if x.name == name)
    ctx = _target(target)
    try:
        for i, wts in enumerate(SPECIAL_WEIGHTS):
            for cast in ("wrap", "saturate"):
                p = _weights_problem(wts, cast=cast)
                params = {"wg_x": 4, "wg_y": 2} if target == "oclgrind" else v.default_params()
                r = check_example(v, p, params)
                assert r.status == "pass" and not r.findings, f"weights #{i} {cast}: {r.status}: {r.message} {r.findings[:3]}"
    finally:
        ctx.__exit__(None, None, None)


@pytest.mark.parametrize("target", TARGETS)
def test_sm_tile_fill_with_a_one_column_work_group(target):
    """SM_CF2 on a 1 x 16 work-group (tile 4 x 18, 72 cells, 16 items): Oclgrind left the tile
    zero when its fill loop ran on an unsigned index, so the loop's index is a (non-negative) int."""
    from refconv.backends.opencl import filter2d
    v = next(x for x in filter2d.variants() if x.name == "SM_CF2")
    p = Problem.parse("filter2d:dtype=uint8,c=0,h=3,w=3,kh=3,kw=3:boundary=valid,flip=0,accumulator=int,shift=0,"
                      "cast=wrap:image=edge.2,weights=sparse.2")
    ctx = _target(target)
    try:
        r = check_example(v, p, {"wg_x": 1, "wg_y": 16})
    finally:
        ctx.__exit__(None, None, None)
    assert r.status == "pass" and not r.findings, f"{r.status}: {r.message} {r.findings[:3]}"


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", ["GM", "SM_CF2", "GM_CF2_Vec", "CM_CF4_Vec", "GM_CF16_Vec"])
def test_3x3_edge_columns_and_unaligned_rows(target, name):
    """The loads of the columns that may lie outside the image (x0 - 1 and x0 + k, k >= 2) and the
    stores of the outputs that may lie outside the interior are tested against x0 and lim = W - 2 - x0
    only: widths from 3 to past 2 * CF + 2 put the last work-item's columns and outputs at each place
    relative to W, and odd widths leave rows unaligned for the vector stores (Oclgrind reports a
    load or store outside the buffers)."""
    from refconv.backends.opencl import filter2d
    v = next(x for x in filter2d.variants() if x.name == name)
    cf = int(name.split("_CF")[1].split("_")[0]) if "_CF" in name else 1
    ctx = _target(target)
    try:
        for w in sorted({3, 4, 5, 6, 7, cf + 1, cf + 2, cf + 3, 2 * cf + 1, 2 * cf + 2, 2 * cf + 3}):
            if w < 3:
                continue
            p = Problem.parse(f"filter2d:dtype=uint8,c=0,h=5,w={w},kh=3,kw=3:boundary=valid,flip=0,accumulator=int,"
                              f"shift=3,rounding=trunc,cast=wrap:image=random.{w},weights=exact.4")
            r = check_example(v, p, {"wg_x": 2, "wg_y": 2})
            assert r.status == "pass" and not r.findings, f"w={w}: {r.status}: {r.message} {r.findings[:3]}"
    finally:
        ctx.__exit__(None, None, None)
