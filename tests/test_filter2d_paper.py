"""The seed-000 kernels of ``backends/numba_cuda/filter2d_paper.py`` (GM / CM / SM, CF, _Vec): judged
by refconv's checker on the CUDA simulator on rows that start off a word boundary (the _Vec
stores' per-output word/byte rule), on small blocks (the SM tile fill's carried row and column)
and with special weights (NaN, Inf); and their PTX: indices without numba's 64-bit negative-index
wraparound, each pixel converted once."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from refconv import Problem
from refconv.checking import check_example

ROOT = Path(__file__).resolve().parent.parent
F2D = ("filter2d:dtype=uint8,c=0,h={h},w={w},kh=3,kw=3:boundary=valid,flip=0,accumulator=int,shift={shift},"
       "rounding=trunc,cast=wrap:image=random.{seed},weights={weights}")
#: (h, w): W % 4 = 1, 2, 3 and 0 (rows start off and on a word boundary), a row narrower than one thread's
SHAPES = ((7, 29), (6, 30), (5, 23), (6, 36), (4, 5))


def _variant(vid):
    from refconv import registry
    return registry.get(vid)


@pytest.mark.parametrize("name", ["GM_CF2_Vec", "CM_CF4_Vec", "SM_CF4_Vec", "GM_CF12_Vec", "SM_CF16_Vec",
                                  "GM", "SM", "CM_CF8", "SM_CF12"])
def test_seed_kernels_match_the_spec_on_unaligned_rows_and_small_blocks(sim, name):
    v = _variant(f"filter2d/numba_cuda/{name}")
    for k, (h, w) in enumerate(SHAPES):
        spec = F2D.format(h=h, w=w, shift=(0, 4, 8, 3, 5)[k], seed=k + 1,
                          weights=("exact.2", "special.1", "random.3", "extreme.1")[k % 4])
        for params in ({"bx": 4, "by": 2}, {"bx": 8, "by": 4}):
            r = check_example(v, Problem.parse(spec), params)
            assert r.status == "pass", f"{v.id} {params} on {spec}: {r.message}"


@pytest.mark.parametrize("name", ["GM_CF8", "CM_CF8"])
def test_seed_kernels_index_in_32_bits_and_convert_each_pixel_once(name):
    """A CF=8 thread: 8 outputs of 9 taps (a float->int conversion each, an int->float one for each
    tap but the first) and 10 window columns of 3 pixels converted once; a handful of 64-bit
    index operations a thread (a row's place), none a pixel, and no wraparound select."""
    env = {k: v for k, v in os.environ.items() if k not in ("REFCONV_CUDA", "NUMBA_ENABLE_CUDASIM")}
    vid = f"filter2d/numba_cuda/{name}"
    prob = F2D.format(h=66, w=80, shift=4, seed=1, weights="exact.2")
    p = subprocess.run([sys.executable, str(ROOT / "lab" / "probes" / "ptx_census.py"), f"{vid}={prob}"],
                       capture_output=True, text=True, timeout=300, env=env)
    assert p.returncode == 0, p.stderr[-3000:]
    line = next(x for x in p.stdout.splitlines() if x.startswith(f"{vid} kernel"))
    counts = dict((k.rsplit(" ", 1)[0], int(k.rsplit(" ", 1)[1])) for k in line.split("instructions: ")[1].split(", "))
    assert counts.get("int64 arith", 0) <= 8, line
    assert "select" not in counts, line
    assert counts["convert"] <= 8 * (9 + 8) + 3 * 10 + 8, line
