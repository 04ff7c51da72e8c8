"""sobel, uint8 gray or colour: the project's own fastest kernels (issue #24),
``sobel/numba_cuda/best_R{R}``.  Not a seed design: the seed kernels stay as the study describes them.

The arithmetic is the spec's, bit for bit: gray ``(0.299f*R + 0.587f*G) + 0.114f*B`` in float32
(each product and sum rounded to nearest, no FMA; a gray uint8 pixel converted exactly), then
``Gx = -p00 + p02 - 2*p10 + 2*p12 - p20 + p22`` and ``Gy = -p00 + p20 - 2*p01 + 2*p21 - p02 + p22``
accumulated in float32 in that order (the products by +-1 and +-2 are exact, so one fused
multiply-add a tap rounds exactly as the spec's product-then-sum), ``|Gx| + |Gy|`` (or
``sqrt(Gx*Gx + Gy*Gy)``), truncated and saturated to uint8; only the interior is written.

Layout: a thread computes 8 consecutive output columns of ``R`` consecutive output rows, streaming
the input rows top to bottom and keeping three rows of 10 gray values in registers (each pixel is
loaded and converted to gray once per thread); the next row's loads are issued before the current
row's arithmetic.  For an RGBA image with ``W % 8 == 0`` a row's 8 pixels are four aligned 64-bit
loads (the two halo pixels 32-bit loads, L1 hits) and the 8 outputs two 32-bit stores packed by byte
permutes; otherwise loads and stores are bytes.  A channel byte becomes ``bits(0x4B000000 | x) =
2**23 + x`` in one byte permute, and its gray product one FMA on it (``fma(C, 2**23 + x, -C*2**23)
= rn(C*x)``); the output ``min(m, 255)`` is truncated by an add rounded toward zero to ``2**23``,
whose low byte it then is.  The kernel body is
generated as straight-line code so the gray values live in registers; every index is a uint64
(numba wraps a negative signed index around: a 64-bit compare and select a subscript).

What a kernel is built from is one frozen :class:`Build`: the variant's design (``rows``, a register
cap) and what the host picks for a problem (channels, magnitude, layout).  The shipped designs are
:data:`BEST_R1`, :data:`BEST_R2`, :data:`BEST_R4` and :data:`BEST_R8`; :func:`make_variant` makes a
variant of any design (the lab's sweeps pass theirs), :func:`source` gives a build's kernel source,
and ``docs/kernels/`` holds that source for the preset's builds (``tests/test_kernel_sources.py``).
"""
from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass

import numpy as np

from refconv import Param, Range, Variant
from refconv import cuda as rc

from .filter2d_best import device_ops, jit_source, row_block_constraint, unrolled_rows

ORIGIN = "refconv (issue #24): register-blocked rows, wide loads; spec of seed 002"
#: threads a block by default (the OpenCL twin's work-group; 256 was faster than 128 on the sobel
#: preset, lab/sweeps/gpu_roofline_sweep.py)
BX = 256
#: output columns a thread computes (8: ten gray pixels a row for eight outputs, and the loop's
#: address and rotation work shared by eight)
COLS = 8

SUPPORTS = {"dtype": ("uint8",), "channels": (0, 3, 4), "h": Range(3), "w": Range(3),
            "magnitude": ("l1", "l2"), "boundary": ("valid",), "out_dtype": ("uint8",),
            "cast": ("saturate",), "rounding": ("trunc",)}


@dataclass(frozen=True)
class Build:
    """One kernel build.  The design: ``rows``, the output rows a thread computes (each R is a kernel
    of its own), and ``max_registers``, a cap on a thread's registers (None: ptxas's choice).  What
    the host picks for a problem (:func:`specialise`): ``ch``, the image's channels (0: gray, 3: RGB,
    4: RGBA); ``l2``, the L2 magnitude (else L1); ``vec``, the word layout (RGBA with ``W % 8 ==
    0``)."""

    rows: int
    ch: int = 0
    l2: bool = False
    vec: bool = False
    max_registers: int | None = None


#: the shipped designs, ``sobel/numba_cuda/best_R1`` .. ``best_R8``
BEST_R1 = Build(rows=1)
BEST_R2 = Build(rows=2)
BEST_R4 = Build(rows=4)
BEST_R8 = Build(rows=8)
SHIPPED = (BEST_R1, BEST_R2, BEST_R4, BEST_R8)


def _cv(x: str) -> str:
    return f"fadd(int_as_float(int32(int32({x}) | MAGI)), NEGM)"


def _prod(c: int, x: str) -> str:
    """``rn(C{c} * x)`` for a byte ``x``, as ``fma(C, X, -C * 2**23)`` with ``X = bits(0x4B000000 | x)
    = 2**23 + x``: the exact value is ``C*x`` (``C * 2**23`` is exact), rounded once; one FMA instead of
    a subtract and a multiply."""
    return f"fma(C{c}, int_as_float(int32(int32({x}) | MAGI)), NC{c}M)"


def _gray_word(u: str) -> str:
    """The gray of an RGBA pixel held in the uint32 ``u`` (R in the low byte); channel ``c`` becomes
    ``bits(0x4B000000 | byte c)`` in one byte permute (``__byte_perm(u, 0x4B000000, 0x7540 | c)``)."""
    r, g, b = (f"fma(C{c}, int_as_float(byte_perm(int32({u}), MAGI, SEL{c})), NC{c}M)" for c in range(3))
    return f"fadd(fadd({r}, {g}), {b})"


def _load_raw(vec: bool) -> list:
    """Lines loading input row ``rr`` raw for the word layout: ``COLS // 2`` 64-bit words and two halo pixels."""
    L = ["pb = uint64(rr) * Wu + c0u"]
    L += [f"q{h} = img64[(pb >> X1) + X{h}]" for h in range(COLS // 2)]
    return L + ["um = img32[pb - X1] if c0 > 0 else U0", f"up = img32[pb + X{COLS}] if c0 + {COLS} < W else U0"]


def _gray_raw(p: int) -> list:
    """Lines converting the raw row (``qa qb um up``) to gray values ``p{p}_0 .. p{p}_5``."""
    words = ["um"] + [f"uint32(q{j // 2} {'& LO' if j % 2 == 0 else '>> S32'})" for j in range(COLS)] + ["up"]
    return [f"p{p}_{j} = {_gray_word(u)}" for j, u in enumerate(words)]


def _load_row(p: int, nch: int, vec: bool) -> list:
    """Lines loading input row ``rr`` as gray values ``p{p}_0 .. p{p}_5`` (columns c0-1 .. c0+4)."""
    if vec:
        return _load_raw(vec) + _gray_raw(p)
    L = []
    for j in range(COLS + 2):
        inside = "c0 > 0" if j == 0 else f"c0 + {j - 1} < W"
        idx = f"uint64(rr) * Wu + c0u + X{j} - X1"
        if nch == 0:
            L.append(f"p{p}_{j} = {_cv(f'img8[{idx}]')} if {inside} else F0")
        else:
            L.append(f"b = ({idx}) * X{nch} if {inside} else X0")
            r, g, b = (_prod(k, f"img8[b + X{k}]") for k in range(3))
            L.append(f"p{p}_{j} = fadd(fadd({r}, {g}), {b}) if {inside} else F0")
    return L


def _output(i: int, l2: bool, slots: tuple = (0, 1, 2)) -> list:
    """Lines computing ``v{i}``, the uint32 result of output column c0+i (spec tap order) from the
    register rows ``slots`` = (top, middle, bottom)."""
    p = lambda a, b: f"p{slots[a]}_{i + b}"
    gx = f"fadd(fadd(fma(P2, {p(1, 2)}, fma(M2, {p(1, 0)}, fadd(-{p(0, 0)}, {p(0, 2)}))), -{p(2, 0)}), {p(2, 2)})"
    gy = f"fadd(fadd(fma(P2, {p(2, 1)}, fma(M2, {p(0, 1)}, fadd(-{p(0, 0)}, {p(2, 0)}))), -{p(0, 2)}), {p(2, 2)})"
    L = [f"gx = {gx}", f"gy = {gy}"]
    if l2:
        L.append("m = sqrt(fadd(fmul(gx, gx), fmul(gy, gy)))")
    else:
        L.append("m = fadd(fabs(gx), fabs(gy))")
    # trunc + saturate of m >= 0: rz(min(m, 255) + 2**23) = 2**23 + trunc(min(m, 255)), its low byte
    L.append(f"v{i} = float_as_int(fadd_rz(min(m, F255), M))")
    return L


def _store(vec: bool) -> list:
    """Lines storing row ``r``'s ``COLS`` outputs (the low bytes of ``v0 ..``): words packed by byte
    permutes where all the columns are interior (``full``, computed once before the row loop), else
    bytes each guarded by its column."""
    L = ["ob = uint64(r) * Wu + c0u"]
    guard = lambda i: f"c0 + {i} >= 1 and c0 + {i} <= W - 2"
    byte = lambda i: f"uint8(uint32(v{i}) & UFF)"
    if vec:
        L.append("if full:")
        L += [f"    out32[(ob >> X2) + X{w}] = byte_perm(byte_perm(v{4 * w}, v{4 * w + 1}, PK0), "
              f"byte_perm(v{4 * w + 2}, v{4 * w + 3}, PK0), PK1)" for w in range(COLS // 4)]
        L.append("else:")
        L += [f"    if {guard(i)}:\n        out8[ob + X{i}] = {byte(i)}" for i in range(COLS)]
    else:
        L += [f"if {guard(i)}:\n    out8[ob + X{i}] = {byte(i)}" for i in range(COLS)]
    return L


def source(build: Build) -> str:
    """The Python source of ``build``'s kernel ``kern(img8, img32, img64, out8, out32, H, W)``: two
    rows converted to gray before the loop over the ``rows`` output rows (:func:`unrolled_rows`); in
    the word layout the third row is loaded before the loop too, and each row converts it, then issues
    the next row's loads before its own arithmetic and store (so the loads overlap them)."""
    rows, nch, l2, vec = build.rows, build.ch, build.l2, build.vec
    ind = lambda lines, n: ["    " * n + s for block in lines for s in block.split("\n")]
    body = [f"c0 = (cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x) * {COLS}",
            f"r0 = 1 + cuda.blockIdx.y * {rows}",
            "if c0 >= W - 1 or r0 > H - 2:", "    return", "Wu = uint64(W)", "c0u = uint64(c0)",
            f"full = c0 >= 1 and c0 + {COLS - 1} <= W - 2"]
    for p, rr in ((0, "r0 - 1"), (1, "r0")):
        body.append(f"rr = {rr}")
        body += _load_row(p, nch, vec)
    if vec:
        body += ["rr = r0 + 1"] + _load_raw(vec)

    def step(j: int, slots: tuple) -> list:
        L = [f"r = r0 + k + {j}", "if r > H - 2:", "    return"]
        if vec:
            L += _gray_raw(slots[2]) + ["rr = min(r + 2, H - 1)"] + _load_raw(vec)
        else:
            L += ["rr = r + 1"] + _load_row(slots[2], nch, vec)
        for i in range(COLS):
            L += _output(i, l2, slots)
        return ind(L + _store(vec), 0)

    body += unrolled_rows(rows, step)
    return "\n".join(["def kern(img8, img32, img64, out8, out32, H, W):"] + ind(body, 1)) + "\n"


@functools.lru_cache(maxsize=None)
def _kernel(build: Build, mode: str):
    import math
    cuda = rc.cuda()
    from numba import float32, int32, uint8, uint32, uint64
    src = source(build)
    b = build
    fname = f"<refconv sobel_best R{b.rows} nch{b.ch} {'l2' if b.l2 else 'l1'} {'vec' if b.vec else 'byte'}>"
    f32 = np.float32
    ns = dict(device_ops(), cuda=cuda, float32=float32, int32=int32, uint8=uint8, uint32=uint32, uint64=uint64,
              sqrt=(lambda v: f32(np.sqrt(f32(v)))) if mode == "sim" else math.sqrt,
              C0=f32(0.299), C1=f32(0.587), C2=f32(0.114),
              **{f"NC{i}M": f32(-c) * f32(8388608.0) for i, c in enumerate((f32(0.299), f32(0.587), f32(0.114)))}, P2=f32(2), M2=f32(-2), F0=f32(0), F255=f32(255),
              NEGM=f32(-8388608.0), MAGI=np.int32(0x4B000000), U0=np.uint32(0), U255=np.uint32(255),
              UFF=np.uint32(0xFF), LO=np.uint64(0xFFFFFFFF), S32=np.uint64(32), M=f32(8388608.0),
              PK0=np.int32(0x0040), PK1=np.int32(0x5410), **{f"SEL{c}": np.int32(0x7540 | c) for c in range(3)},
              **{f"S{s}": np.uint32(s) for s in (0, 8, 16, 24)}, **{f"X{n}": np.uint64(n) for n in range(COLS + 2)})
    # a register cap changes no result, and the simulator (whose jit takes no max_registers) has none
    return jit_source(cuda, src, fname, ns, build.max_registers if mode == "gpu" else None)


def _grid(H: int, W: int, rows: int, bx: int) -> tuple:
    return (rc.cdiv(rc.cdiv(W, COLS), bx), rc.cdiv(max(H - 2, 1), rows))


def specialise(design: Build, problem) -> Build:
    """``design`` specialised for ``problem``: its channels, its magnitude and the layout (words for
    RGBA with ``W % 8 == 0``, else bytes)."""
    img = problem.inputs["image"]
    ch = 0 if img.ndim == 2 else img.shape[2]
    return dataclasses.replace(design, ch=ch, l2=problem.option("magnitude") == "l2",
                               vec=ch == 4 and img.shape[1] % COLS == 0)


def _make_run(design: Build):
    def run(problem, out, bx=BX):
        cuda = rc.cuda()
        img = np.ascontiguousarray(problem.inputs["image"])
        H, W = img.shape[:2]
        build = specialise(design, problem)
        k = _kernel(build, rc.mode())
        d_out, n = rc.to_device_poisoned(out, pad_to=4)
        d_img8 = cuda.to_device(img.reshape(-1))
        d_img32 = d_img8.view(np.uint32) if build.vec else d_img8
        d_img64 = d_img8.view(np.uint64) if build.vec else d_img8
        rc.launch(k[_grid(H, W, design.rows, bx), (bx, 1)], d_img8, d_img32, d_img64, d_out, d_out.view(np.uint32),
                  np.int32(H), np.int32(W))
        cuda.synchronize()
        return rc.from_device(d_out, n, out)
    return run


def make_variant(design: Build) -> Variant:
    """The variant ``sobel/numba_cuda/best_R{rows}`` of ``design`` (a :data:`SHIPPED` one, or a lab's
    own, e.g. another row count or a register cap)."""
    rows = design.rows
    return Variant(
        op="sobel", backend="numba_cuda", name=f"best_R{rows}", run=_make_run(design), supports=dict(SUPPORTS),
        params=(Param("bx", (32, 64, 128, 256), BX),), available=rc.reason, writes="interior",
        constraint=row_block_constraint(_grid, rows, BX), origin=ORIGIN,
        doc=(f"Sobel |Gx|+|Gy| (or L2) of the in-kernel float32 gray image, a thread computes {COLS} columns x {rows} "
             "rows from register-held gray rows (four 64-bit loads a row and two 32-bit stores for RGBA with "
             f"W % {COLS} == 0, bytes otherwise); spec arithmetic bit for bit; uint8 out, trunc + saturate, interior only"))


def variants():
    return [make_variant(d) for d in SHIPPED]
