"""conv2d as an implicit GEMM: the host side shared by ``conv2d/numba_cuda/best`` and
``conv2d/opencl/best`` (refconv's own design, issue #24; not a seed).

    out[n, m, oy, ox] = bias[m] + sum_k A[k, m] * B[k, q]

with ``k = (c*R + r)*S + s`` (``K = C*R*S``), ``q = (n*Ho + oy)*Wo + ox`` (``NQ = N*Ho*Wo``: the
images' pixels side by side), ``A[k, m] = w[m, c, r, s]`` (the filters re-laid out on the host
K-major, ``[Kpad][Mpad]``, zero padded, so that a tile row of A is one coalesced load) and
``B[k, q] = xpad[n, c, oy*sy + r*dy, ox*sx + s*dx]`` gathered on the fly (im2col never built).
The gather uses a K-long table (``ktab``: ``c*H*W + r*dy*W + s*dx``, ``r*dy``, ``s*dx`` per k;
rows past K point outside the image) so the kernels divide nothing per element.

A block computes a ``BM x BN`` tile of ``out[m, q]``; its ``(BM/TM) x (BN/TN)`` threads each hold a
``TM x TN`` micro-tile in registers: rows ``ty*TM + i`` (a broadcast read of A, ``TM``
consecutive elements: one 16-byte shared load per four), columns in groups of ``G``
(:attr:`Tile.cg`, 4 where ``TN`` allows) consecutive ones, ``tx*G + (j//G)*(BN/TN)*G + j%G``
(:meth:`Tile.col`): a group is one 16-byte shared load of B (conflict-free: a warp's threads read
consecutive 16-byte pieces).  K is walked in ``BK``-deep
slices staged in two shared buffers (the next slice is loaded into registers while the current
one is used: one barrier a slice).  Split-K: ``split`` slices of the K range, blockIdx.z, each
writing a partial ``[split][M][NQ]`` buffer, then a reduction kernel adds the partials in order,
plus the bias, into the output (deterministic; the output is written once, never accumulated).
With ``split = 1`` the GEMM kernel writes the output (bias included) itself.  Padding cells load
0 and are multiplied like any other (``w*0``: NaN for an infinite weight, as the spec).

Two choices besides the tile and the split (launch parameters of both twins, same meaning):

* ``path``: ``gather`` is the table gather above; ``auto`` takes the **1x1 path** where the filter
  is 1x1 with stride 1 and no padding (any dilation: it has no effect there): then ``Ho = H``,
  ``Wo = W``, ``k = c`` and ``B[k, q] = x[n*C*H*W + k*H*W + p]`` (``q = n*H*W + p``): no table load
  before the pixel load, no bounds test on the pixel, only ``k < K`` (rows of the last k-tile past
  K load 0, never memory past x).  Consecutive q of one image are consecutive addresses.
* ``reduce`` (with ``split > 1``): ``kernel`` sums the partials in a second launch; ``fused``
  does it in the GEMM launch: each block writes its partial, fences, and counts itself in an
  atomic per-tile counter (``cnt[tile]``, zeroed by the host); the block that arrives last fences
  again and sums the tile's ``split`` partials **in z order** (plus the bias) into the output.  The
  same order as the reduction kernel, so both give the same bits; no second launch, and the
  partials are read from L2 right after they are written.  Numba only (``threadfence`` is
  device-scope; OpenCL 1.2's ``mem_fence`` is not, and the OpenCL version failed the GPU check),
  and never chosen by ``auto``.

``plan`` picks the tile and the split for a problem when the launch parameters say ``auto``:
a small cost model of an H100 (132 SMs), see :func:`estimate_us`.  It is a model, not a
measurement: lab/sweeps/gpu_conv_best_sweep.py times the alternatives on a GPU.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Tile:
    name: str
    bm: int
    bn: int
    tm: int
    tn: int
    bk: int
    eff: float            # the model's relative throughput of this tile shape (estimate_us)
    auto: bool = True     # whether ``tile="auto"`` may choose it
    regs: int | None = None   # a cap on the Numba build's registers a thread (None: ptxas's choice)

    @property
    def thx(self) -> int:   # threads along q (columns)
        return self.bn // self.tn

    @property
    def thy(self) -> int:   # threads along m (rows)
        return self.bm // self.tm

    @property
    def cg(self) -> int:
        """The micro-tile's column group: ``G`` consecutive columns a thread holds together (4
        where ``TN`` is a multiple of 4, else ``TN``), read from shared memory in one vector load."""
        return 4 if self.tn % 4 == 0 else self.tn

    def col(self, j: int) -> int:
        """Micro-tile column ``j``'s offset from the thread's first column ``tx * cg``:
        ``(j // cg) * thx * cg + j % cg`` (the groups ``thx * cg`` columns apart)."""
        return (j // self.cg) * self.thx * self.cg + j % self.cg

    @property
    def threads(self) -> int:
        return self.thx * self.thy

    @property
    def stage_a(self) -> int:
        """Elements of A's two stage buffers (``2 x BK x BM``): the kernels' shared array ``As``."""
        return 2 * self.bk * self.bm

    @property
    def stage_b(self) -> int:
        """Elements of B's two stage buffers (``2 x BK x BN``): the kernels' shared array ``Bs``."""
        return 2 * self.bk * self.bn

    def shared_bytes(self, itemsize: int) -> int:
        """The GEMM kernel's whole static shared (``__local``) memory, in both twins: ``As`` and
        ``Bs`` of ``itemsize``-byte elements, nothing else (the Numba twin's fused arrival count
        reuses ``As``).  The kernels declare their arrays from :attr:`stage_a` and
        :attr:`stage_b`, the constraints declare this, and tests/test_kernel_resources.py holds
        the compiler's report to it."""
        return (self.stage_a + self.stage_b) * itemsize


#: the tile shapes (name: BM x BN, then ``k{BK}`` where BK is not 8 and ``r{N}`` for a register
#: cap), largest first (8x8 micro-tiles: 16 shared reads per 64 multiply-adds against 4x4's 8 per
#: 16); "16x16" is the simulator's cheap one (16 threads a block) and suits nothing on a GPU.  The
#: 16-deep K slices halve the barriers and the exposed load latencies per multiply-add of the 8-deep
#: ones (cuconv E3 and E4, docs/performance.md); capped at 128 registers, an SM
#: runs two of their 256-thread blocks
TILES = {t.name: t for t in (
    Tile("128x128k16r128", 128, 128, 8, 8, 16, 1.1, auto=False, regs=128),
    Tile("128x64k16", 128, 64, 8, 4, 16, 1.0, regs=128),
    Tile("128x128", 128, 128, 8, 8, 8, 1.1, auto=False),
    Tile("128x64", 128, 64, 8, 4, 8, 1.0, auto=False),
    Tile("64x64", 64, 64, 4, 4, 16, 0.8),
    Tile("32x32", 32, 32, 4, 4, 8, 0.6),
    Tile("16x16", 16, 16, 4, 4, 8, 0.3, auto=False),
    # deep K slices: a K of 64 (cuconv T3-C) in one or two slices, each slice one global-load
    # latency for the whole block (the small 1x1 GEMMs wait on those, not on the multiply-adds)
    Tile("64x64k32", 64, 64, 4, 4, 32, 0.8, auto=False),
    Tile("32x32k32", 32, 32, 4, 4, 32, 0.6, auto=False),
    Tile("32x32k64", 32, 32, 4, 4, 64, 0.6, auto=False),
    Tile("32x32k64-2x4", 32, 32, 2, 4, 64, 0.6, auto=False),     # 128 threads, 2x4 micro-tiles
    # more threads a block for the 1x1 GEMMs whose grids give an SM one or two 64-thread blocks
    Tile("32x32k64-2x2", 32, 32, 2, 2, 64, 0.6, auto=False),     # 256 threads, 2x2 micro-tiles
    Tile("64x32k32", 64, 32, 4, 4, 32, 0.7, auto=False),         # 128 threads
    Tile("32x64k32", 32, 64, 4, 4, 32, 0.7, auto=False),         # 128 threads
)}
#: the split-K counts (``split`` launch parameter; ``auto`` chooses among them)
SPLITS = (1, 2, 4, 8, 16, 32)
#: ``path`` and ``reduce`` launch parameters (module docstring)
PATHS = ("auto", "gather")
REDUCES = ("auto", "kernel", "fused")
#: the model's GPU: 132 SMs (H100 SXM), its GEMM rate at full occupancy and tile efficiency 1, a
#: K slice's latency floor (a global load in flight), the reduction's launch and memory costs
SMS = 132
RATE_FMA_PER_US = 1.5e7
SLICE_US = 0.4
REDUCE_US = 2.0
BYTES_PER_US = 1.5e6
#: the 1x1 path's k-tile latency floor (one global load, no table load before it); the fused
#: reduction's fixed cost (fence, atomic, an L2 round trip), its latency per partial (one L2 read
#: round a z) and one SM's partial-reading rate
SLICE_1X1_US = 0.25
FUSED_US = 0.8
FUSED_Z_US = 0.15
SM_BYTES_PER_US = 1.0e5
#: warps per SM the model calls full occupancy
FULL_WARPS = 16

for _t in TILES.values():
    assert _t.bm % _t.tm == 0 and _t.bn % _t.tn == 0
    assert _t.threads % _t.bm == 0 and _t.threads % _t.bn == 0, _t
    assert (_t.bk * _t.bm) % _t.threads == 0 and (_t.bk * _t.bn) % _t.threads == 0, _t


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


@dataclass(frozen=True)
class Geometry:
    N: int
    C: int
    H: int
    W: int
    M: int
    R: int
    S: int
    Ho: int
    Wo: int
    sy: int
    sx: int
    py: int
    px: int
    dy: int
    dx: int

    @property
    def K(self) -> int:
        return self.C * self.R * self.S

    @property
    def NQ(self) -> int:
        return self.N * self.Ho * self.Wo

    @property
    def is_1x1(self) -> bool:
        """The 1x1 path applies: a 1x1 filter, stride 1, no padding (B[k, q] = x[n, k, p])."""
        return (self.R, self.S, self.sy, self.sx, self.py, self.px) == (1, 1, 1, 1, 0, 0)


def _pair(v):
    return tuple(int(a) for a in v) if isinstance(v, (tuple, list)) else (int(v), int(v))


def geometry(problem) -> Geometry:
    """The problem's sizes (from its dims and options; no arrays needed)."""
    d = problem.dims
    (sy, sx), (py, px), (dy, dx) = (_pair(problem.option(k)) for k in ("stride", "padding", "dilation"))
    Ho = (d["h"] + 2 * py - dy * (d["r"] - 1) - 1) // sy + 1
    Wo = (d["w"] + 2 * px - dx * (d["s"] - 1) - 1) // sx + 1
    return Geometry(d["n"], d["c"], d["h"], d["w"], d["m"], d["r"], d["s"], Ho, Wo, sy, sx, py, px, dy, dx)


@dataclass(frozen=True)
class Plan:
    tile: Tile
    split: int             # the K slices (blockIdx.z), every one non-empty
    kt: int                # BK-deep k-tiles in all
    kt_per: int            # k-tiles a slice
    grid: tuple            # (q tiles, m tiles, split)
    one: bool = False      # the 1x1 path (no gather table)
    fused: bool = False    # split > 1 summed in the GEMM launch (last block of each tile)

    @property
    def kpad(self) -> int:
        return self.kt * self.tile.bk

    @property
    def mpad(self) -> int:
        return self.grid[1] * self.tile.bm


def _plan(g: Geometry, tile: Tile, split: int, one: bool = False, fused: bool = False) -> Plan:
    kt = cdiv(g.K, tile.bk)
    kt_per = cdiv(kt, max(1, min(split, kt)))
    split = cdiv(kt, kt_per)
    return Plan(tile, split, kt, kt_per, (cdiv(g.NQ, tile.bn), cdiv(g.M, tile.bm), split), one, fused and split > 1)


def blocks_per_sm(threads: int, regs: int) -> int:
    """Blocks of ``threads`` threads, ``regs`` registers a thread, that one multiprocessor holds at
    once: the least of its 32-block, 2048-thread and 65536-register limits (at least 1)."""
    return max(1, min(32, 2048 // threads, 65536 // (threads * regs)))


def estimate_us(g: Geometry, p: Plan, itemsize: int = 4) -> float:
    """The cost model behind ``auto``: the padded multiply-adds at ``RATE * eff * fill`` (``fill``:
    the warps launched over ``SMS * FULL_WARPS``, at most 1), at least ``SLICE_US`` per k-tile per
    wave of blocks (each k-tile waits on a global load; ``SLICE_1X1_US`` on the 1x1 path); with
    split-K, the reduction's launch and its partial-buffer traffic, or (fused) ``FUSED_US`` and one
    block reading its tile's ``split`` partials."""
    t = p.tile
    blocks = p.grid[0] * p.grid[1] * p.split
    warps_per_block = cdiv(t.threads, 32)
    regs = (2 * t.tm * t.tn + 40) * (itemsize // 4 if itemsize > 4 else 1)
    per_sm = blocks_per_sm(t.threads, regs)
    fill = min(1.0, blocks * warps_per_block / (SMS * FULL_WARPS))
    fma = p.grid[0] * p.grid[1] * t.bm * t.bn * p.kpad
    waves = cdiv(blocks, SMS * per_sm)
    main = max(fma / (RATE_FMA_PER_US * t.eff * fill), waves * p.kt_per * (SLICE_1X1_US if p.one else SLICE_US))
    if p.split == 1:
        return main
    if p.fused:
        return main + FUSED_US + p.split * (FUSED_Z_US + t.bm * t.bn * itemsize / SM_BYTES_PER_US)
    return main + REDUCE_US + 2 * p.split * g.M * g.NQ * itemsize / BYTES_PER_US


#: the 1x1 path's measured rule, ahead of the model: where split 1 of this deep-K tile gives at
#: least ``SMS`` blocks, ``auto`` (tile and split) takes it.  On an H100
#: (lab/sweeps/gpu_conv_best_sweep.py --alts deep / --alts shapes; the numbers are in
#: docs/performance.md) the 32x32 tile with 64-deep K slices beat every tile and split the model
#: chose where the GPU is full without split-K, and lost where it is not; its 256-thread form (2x2
#: micro-tiles; the grid gives an SM one or two blocks, so more threads hide more latency) was
#: faster again on Numba; OpenCL's rows did not move beyond their scatter
DEEP_1X1 = "32x32k64-2x2"

#: ``auto`` takes the smallest tile (then split) whose estimate is within this many microseconds or this
#: fraction of the best one: below the model's resolution, less padded work and fewer threads win
#: (and a tiny problem gets a small tile, cheap under the simulator too)
TIE_US, TIE_FRACTION = 1.0, 0.05


def plan(g: Geometry, tile="auto", split="auto", itemsize: int = 4, path="auto", reduce="auto") -> Plan:
    """The launch plan for ``tile`` (a name of :data:`TILES` or ``auto``), ``split`` (one of
    :data:`SPLITS` or ``auto``), ``path`` (:data:`PATHS`) and ``reduce`` (:data:`REDUCES`):
    ``auto`` takes the cheapest by :func:`estimate_us`, up to the tie margins (:data:`TIE_US`,
    :data:`TIE_FRACTION`), preferring the smaller tile, then the smaller split; ``reduce`` ``auto``
    is the reduction kernel (``fused`` only when asked for).  On the 1x1 path with both ``auto``,
    the measured rule :data:`DEEP_1X1` comes first.  The "16x16" tile is never chosen by
    ``auto``.  An explicit split is capped at the k-tiles there are (every slice non-empty).  ``path`` ``auto`` is the 1x1 path wherever it
    applies (:attr:`Geometry.is_1x1`)."""
    one = path == "auto" and g.is_1x1
    if one and tile == "auto" and split == "auto":
        deep = _plan(g, TILES[DEEP_1X1], 1, True)
        if deep.grid[0] * deep.grid[1] >= SMS:
            return deep
    tiles = [TILES[tile]] if tile != "auto" else [t for t in reversed(TILES.values()) if t.auto]
    splits = [int(split)] if split != "auto" else list(SPLITS)
    # auto never fuses: on an H100 (lab/sweeps/gpu_conv_best_sweep.py) the fused reduction
    # was no faster than the kernel where the model chose it, and OpenCL's failed the check on NVIDIA
    fuses = {"auto": (False,), "kernel": (False,), "fused": (True,)}[reduce]
    cands = [(estimate_us(g, p, itemsize), p)
             for t in tiles for p in {_plan(g, t, s, one, f) for s in splits for f in fuses}]
    best = min(e for e, _ in cands)
    ok = [(tiles.index(p.tile), p.split, p.fused, p) for e, p in cands
          if e <= best + max(TIE_US, TIE_FRACTION * best)]
    return min(ok, key=lambda c: c[:3])[3]


# ----------------------------------------------------------------------------- host arrays

def operands(problem, p: Plan):
    """``(x, a, ktab, bias, has_bias)``: x flat (NCHW), A = the filters K-major ``[Kpad][Mpad]``
    zero padded, the gather table ``ktab`` (int32 ``[3][Kpad]``: offset ``c*H*W + r*dy*W + s*dx``,
    ``r*dy``, ``s*dx``; rows past K: an offset of 0 and a row far below the image, so they load
    0), the bias (a one-element zero when there is none)."""
    g = geometry(problem)
    x = np.ascontiguousarray(problem.inputs["x"]).reshape(-1)
    w = problem.inputs["w"]
    a = np.zeros((p.kpad, p.mpad), w.dtype)
    a[:g.K, :g.M] = w.reshape(g.M, g.K).T
    k = np.arange(g.K)
    c, rs = np.divmod(k, g.R * g.S)
    r, s = np.divmod(rs, g.S)
    ktab = np.zeros((3, p.kpad), np.int32)
    ktab[0, :g.K] = c * g.H * g.W + r * g.dy * g.W + s * g.dx
    ktab[1, :g.K] = r * g.dy
    ktab[1, g.K:] = -(1 << 30)
    ktab[2, :g.K] = s * g.dx
    b = problem.inputs.get("bias")
    has_bias = b is not None
    bias = np.ascontiguousarray(b) if has_bias else np.zeros(1, x.dtype)
    return x, a.reshape(-1), ktab.reshape(-1), bias, has_bias


def kernel_ints(g: Geometry, p: Plan) -> tuple:
    """The GEMM kernel's integer arguments, in order (both backends):
    M, NQ, HoWo, Wo, H, W, CHW, sy, sx, py, px, Mpad, Kpad, kt_per, kt, K."""
    return (g.M, g.NQ, g.Ho * g.Wo, g.Wo, g.H, g.W, g.C * g.H * g.W, g.sy, g.sx, g.py, g.px,
            p.mpad, p.kpad, p.kt_per, p.kt, g.K)


def counters(p: Plan) -> int:
    """The fused reduction's per-tile arrival counters (int32, zeroed by the host): one per
    (q tile, m tile); at least one element (an unused argument otherwise)."""
    return p.grid[0] * p.grid[1] if p.fused else 1


def index_limit(g: Geometry, p: Plan) -> str | None:
    """Why the 32-bit table offsets and kernel integers cannot index this problem (None if they
    can): one image's C*H*W, A's Kpad*Mpad, M*N*Ho*Wo and the padded coordinates below 2**31."""
    big = max(g.C * g.H * g.W, p.kpad * p.mpad, g.M * g.NQ * max(p.split, 1), g.H + g.py + g.dy * g.R,
              g.W + g.px + g.dx * g.S)
    return None if big < 2 ** 31 else f"{big} elements: past the 32-bit indices of the kernels"


def partial_elements(g: Geometry, p: Plan) -> int:
    return p.split * g.M * g.NQ if p.split > 1 else 0


def describe(p: Plan) -> str:
    how = ("1x1 " if p.one else "gather ") + ("fused" if p.fused else "")
    return f"tile={p.tile.name} split={p.split} (k-tiles {p.kt}, {p.kt_per} a slice) grid={p.grid} {how.strip()}"
