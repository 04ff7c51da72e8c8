"""Every opencl variant on PoCL through refconv's checker (:func:`refconv.checking.check_example`)
on a couple of fixed problems per op: the poisoned buffer is handed in, the border of
``writes="interior"`` variants must keep it, and the result is judged by the op's acceptance
engine, not by a tolerance of this file's own."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("pyopencl")

from refconv import Problem  # noqa: E402
from refconv import opencl as oc  # noqa: E402
from refconv.backends.opencl import backend  # noqa: E402
from refconv.checking import check_example  # noqa: E402
from refconv.sink import RowSink  # noqa: E402
from refconv.strategies import outside_support  # noqa: E402

PROBLEMS = {
    "filter2d": [
        ("filter2d:dtype=uint8,c=0,h=9,w=23,kh=3,kw=3:boundary=valid,flip=0,accumulator=int,shift=4,"
         "rounding=trunc,cast=wrap:image=random.3,weights=exact.4"),
        ("filter2d:dtype=uint8,c=0,h=5,w=4,kh=3,kw=3:boundary=valid,flip=0,accumulator=int,shift=0,"
         "rounding=trunc,cast=saturate:image=ramp.1,weights=random.2"),
        ("filter2d:dtype=float32,c=2,h=11,w=13,kh=4,kw=5:boundary=zero,flip=0,accumulator=float32:"
         "image=exact.5,weights=exact.6"),
        ("filter2d:dtype=float32,c=0,h=3,w=17,kh=3,kw=1:boundary=zero,flip=0,accumulator=float32:"
         "image=random.7,weights=random.8"),
    ],
    "sobel": [
        "sobel:dtype=uint8,channels=0,h=10,w=19:magnitude=l1,boundary=valid,out_dtype=uint8,cast=saturate,rounding=trunc:image=random.1",
        "sobel:dtype=uint8,channels=4,h=7,w=6:magnitude=l1,boundary=valid,out_dtype=uint8,cast=saturate,rounding=trunc:image=random.2",
    ],
    "matvec": ["matvec:dtype=float32,rows=37,cols=19::m=random.1,v=random.2",
               "matvec:dtype=float64,rows=3,cols=130::m=exact.3,v=exact.4"],
    "kron": ["kron:dtype=float64,m=3,n=2,p=5,q=4::a=random.1,b=random.2",
             "kron:dtype=uint8,m=2,n=3,p=4,q=7::a=random.3,b=random.4"],
    "conv2d": ["conv2d:dtype=float32,n=2,c=3,h=7,w=6,m=4,r=3,s=2,groups=1,bias=1:stride=1,padding=1,dilation=1:x=exact.1,w=exact.2,bias=exact.3",
               "conv2d:dtype=float32,n=1,c=5,h=4,w=4,m=2,r=1,s=1,groups=1,bias=0:stride=2,padding=0,dilation=1:x=random.1,w=random.2"],
}


CASES = [(v, d) for v in backend.variants() for d in PROBLEMS[v.op]] if not oc.available() else []


@pytest.mark.parametrize("variant,desc", CASES, ids=[f"{v.id}-{i}" for i, (v, d) in enumerate(CASES)])
def test_variant_passes_the_checker(pocl, variant, desc):
    """The checker itself (:func:`refconv.checking.check_example`: poisoned output buffer, border
    of ``writes="interior"`` variants kept, the op's acceptance engine, findings) on a fixed
    problem, with the variant's default launch params (its first values when the constraint
    refuses the defaults)."""
    if variant.available():
        pytest.skip(variant.available())
    p = Problem.parse(desc)
    params = variant.default_params()
    if outside_support(variant, p, params) is not None:
        params = {q.name: q.values[0] for q in variant.params}
    why = outside_support(variant, p, params)
    if why is not None:
        pytest.skip(f"outside the variant's declared support: {why}")
    r = check_example(variant, p, params)
    assert r.status == "pass" and not r.findings, f"{r.status}: {r.message} {r.findings[:3]}"


def test_kron_streamed_rows_can_land_in_a_memmap(pocl, tmp_path):
    from refconv.backends.opencl import kron
    v = next(x for x in kron.variants() if x.name == "streamed")
    p = Problem.parse("kron:dtype=float32,m=4,n=3,p=5,q=2::a=random.1,b=random.2")
    mm = np.memmap(tmp_path / "out.bin", dtype=np.float32, mode="w+", shape=(20, 6))
    mm[...] = np.nan
    sink = RowSink((20, 6), np.float32, lambda r0, block: mm.__setitem__(slice(r0, r0 + len(block)), block))
    v.run(p, sink, wg_x=4, wg_y=4)
    mm.flush()
    assert sink.rows_written == 20
    np.testing.assert_array_equal(np.asarray(np.memmap(tmp_path / "out.bin", dtype=np.float32, mode="r", shape=(20, 6))),
                                  np.kron(p.inputs["a"], p.inputs["b"]))


def test_missing_target_names_installed_ones():
    with oc.using("nvidia"):
        if "nvidia" in oc.platforms():
            pytest.skip("NVIDIA OpenCL is installed here")
        r = oc.available()
        assert r and "nvidia" in r and "installed" in r
