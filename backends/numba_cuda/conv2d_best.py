"""conv2d (NCHW, float32 / float64): the project's own fastest kernel (issue #24),
``conv2d/numba_cuda/best``: an implicit GEMM with register tiling and split-K.  Not a seed
design: the cuconv kernels of seed 004 stay as the study describes them (``conv2d.py``).

    out[n, m, oy, ox] = bias[m] + sum_{k < C*R*S} A[k, m] * B[k, q]
    k = (c*R + r)*S + s,  q = (n*Ho + oy)*Wo + ox,  A[k, m] = w[m, c, r, s]   (host: [Kpad][Mpad])
    B[k, q] = xpad[n, c, oy*sy + r*dy, ox*sx + s*dx]                        (gathered on the fly)

A block of ``(BN/TN, BM/TM)`` threads computes a ``BM x BN`` tile of ``out[m, q]``, a thread a
``TM x TN`` micro-tile held in registers (rows ``ty*TM + i``, columns ``tx*G + col(j)``: groups of
``G`` consecutive columns, :meth:`refconv.backends.conv2d_gemm.Tile.col`); K is
walked in ``BK``-deep slices staged in two shared buffers, the next slice loaded into registers
while the current one is used (one barrier a slice).  ``split > 1``: blockIdx.z takes one of
``split`` ranges of K and writes a partial ``[split][M][N*Ho*Wo]`` buffer that a second kernel
sums in order, adding the bias (deterministic; the output is written once); or, ``reduce=fused``,
the last block of each tile to arrive (an atomic counter per tile) sums the tile's partials in
the same order in the same launch.  ``path``: a 1x1, stride-1, unpadded filter reads
``B[k, q] = x[n*C*H*W + k*H*W + p]`` directly (no table, no bounds test).  The host plan,
the layouts and the ``auto`` heuristic are in :mod:`refconv.backends.conv2d_gemm`; the OpenCL
twin ``conv2d/opencl/best`` runs the same plan.  The kernel body is generated source (constant
tile sizes, unrolled loops, the accumulators plain locals) so the micro-tile lives in registers.
"""
from __future__ import annotations

import functools

import numpy as np

from refconv import Param, Range, Variant
from refconv import cuda as rc
from refconv.backends import conv2d_gemm as G
from refconv.tooling.cuda import sim_work

from .filter2d_best import jit_source

ORIGIN = ("refconv (issue #24): implicit GEMM, register micro-tiles, double-buffered shared K slices, "
          "split-K with a deterministic reduction; spec of seed 004 (not a seed design)")
SUPPORTS = {"dtype": ("float32", "float64"), "n": Range(1), "c": Range(1), "h": Range(1),
            "w": Range(1), "m": Range(1), "r": Range(1), "s": Range(1), "groups": (1,),
            "bias": (0, 1), "stride": Range(1), "padding": Range(0), "dilation": Range(1)}
PARAMS = (Param("tile", ("auto",) + tuple(G.TILES), "auto"), Param("split", ("auto",) + G.SPLITS, "auto"),
          Param("path", G.PATHS, "auto"), Param("reduce", G.REDUCES, "auto"))
REDUCE_THREADS = 256
#: under the simulator, a case costing more work units than this (refconv.cost; about 1 s of CPU)
#: is refused by the constraint: a 256-thread tile over a few hundred pixels is a multi-second
#: example there, and the conformance run's directed geometry cases would otherwise draw several
SIM_MAX_WORK = 250_000

_ARGS = ("a, x, ktab, part, out, bias, cnt, M, NQ, HoWo, Wo, H, W, CHW, sy, sx, py, px, Mpad, Kpad, "
         "kt_per, KT, K, has_bias, direct")


# ----------------------------------------------------------------------------- code generation

def _loads(t: G.Tile, one: bool) -> list:
    """Lines loading the k-tile starting at row ``k`` into registers ``ra*`` (A) and ``rb*`` (B).
    Every index is unsigned (``U``): numba then emits no negative-index wraparound.  ``one``: the
    1x1 path, ``B[k, q] = x[xb + k*HoWo]`` (``xb = n*C*H*W + p``) for ``k < K``, else 0; otherwise
    the table gather, 0 outside the image."""
    na, nb = t.bk * t.bm // t.threads, t.bk * t.bn // t.threads
    sb = t.threads // t.bn
    L = ["ia = U(k + ka) * Mp + abase"]
    L += [f"ra{i} = a[ia + aS * U({i})]" for i in range(na)]
    L.append("kx0 = U(k + kb)")
    for i in range(nb):
        L.append(f"kx = kx0 + U({i * sb})")
        if one:
            L.append(f"rb{i} = x[xb + kx * HW] if kx < Ku else Z")
            continue
        L += ["iy = iy0 + ktab[kx + Kp]",
              "ix = ix0 + ktab[kx + Kp2]",
              f"rb{i} = x[U(xb + ktab[kx])] if iy >= 0 and iy < H and ix >= 0 and ix < W else Z"]
    return L


def _stores(t: G.Tile, buf: str) -> list:
    """Lines storing the registers into stage buffer ``buf``."""
    na, nb = t.bk * t.bm // t.threads, t.bk * t.bn // t.threads
    sa, sb = t.threads // t.bm, t.threads // t.bn
    L = [f"sa = U({buf} * {t.bk * t.bm} + ka * {t.bm} + ja)", f"sb = U({buf} * {t.bk * t.bn} + kb * {t.bn} + jb)"]
    L += [f"As[sa + U({i * sa * t.bm})] = ra{i}" for i in range(na)]
    L += [f"Bs[sb + U({i * sb * t.bn})] = rb{i}" for i in range(nb)]
    return L


def _compute(t: G.Tile) -> list:
    """Lines of one k-tile's outer products from stage buffer ``cur`` (fully unrolled)."""
    L = [f"sa = U(cur * {t.bk * t.bm} + ty * {t.tm})", f"sb = U(cur * {t.bk * t.bn} + tx * {t.cg})"]
    for kk in range(t.bk):
        L += [f"a{i} = As[sa + U({kk * t.bm + i})]" for i in range(t.tm)]
        L += [f"b{j} = Bs[sb + U({kk * t.bn + t.col(j)})]" for j in range(t.tn)]
        L += [f"c{i}_{j} += a{i} * b{j}" for i in range(t.tm) for j in range(t.tn)]
    return L


def _epilogue(t: G.Tile, fused: bool) -> list:
    """Lines writing the micro-tile: the output (+ bias) when ``direct``, else this slice's partial
    ``part[z, m, q]``; then, in a ``fused`` build, the last block of the tile to arrive sums the
    tile's partials in z order (+ bias) into the output (:func:`_fused`)."""
    L = ["z = cuda.blockIdx.z"]
    for j in range(t.tn):
        L += [f"q = q0 + tx * {t.cg} + {t.col(j)}", "if q < NQ:",
              "    n = q // HoWo", "    o = q + n * (M - 1) * HoWo"]
        for i in range(t.tm):
            L += [f"    m = m0 + ty * {t.tm} + {i}", "    if m < M:",
                  "        if direct:",
                  f"            v = c{i}_{j}", "            if has_bias:", "                v += bias[U(m)]",
                  "            out[U(o + m * HoWo)] = v",
                  "        else:",
                  f"            part[U((z * M + m) * NQ + q)] = c{i}_{j}"]
    return L + (_fused(t) if fused else [])


def _fused(t: G.Tile) -> list:
    """The fused split-K reduction: fence the partials, count the block in ``cnt[tile]``; the block
    that counted last (``split - 1`` before it) fences and sums ``part[0..split-1, m, q]`` in z
    order, z the outer loop so that the micro-tile's TM*TN loads of one z are in flight together
    (an element outside the output reads element 0 and is not stored).  Thread 0 passes the
    count to the block in ``As[0]``: every read of the stage buffers (the gather's peeled last
    k-tile's too) ended at the barrier before that store, and a count below ``split`` (at most
    32) is exact in either dtype, so the kernel's shared memory stays :meth:`Tile.shared_bytes`
    (a flag array of its own took 4 bytes more: 49,156 for a 48 KiB float64 tile)."""
    L = ["cuda.threadfence()", "cuda.syncthreads()", "if tid == 0:",
         "    As[0] = cuda.atomic.add(cnt, U(cuda.blockIdx.y * cuda.gridDim.x + cuda.blockIdx.x), 1)",
         "cuda.syncthreads()", "if As[0] == cuda.gridDim.z - 1:", "    cuda.threadfence()",
         "    SZ = U(cuda.gridDim.z)", "    MNQ = U(M * NQ)"]
    for j in range(t.tn):
        L += [f"    qf{j} = q0 + tx * {t.cg} + {t.col(j)}"]
        L += [f"    e{i}_{j} = U((m0 + ty * {t.tm} + {i}) * NQ + qf{j}) if qf{j} < NQ and m0 + ty * {t.tm} + {i} < M "
              f"else U(0)" for i in range(t.tm)]
    L += [f"    c{i}_{j} = part[e{i}_{j}]" for i in range(t.tm) for j in range(t.tn)]
    L += ["    zz = U(1)", "    while zz < SZ:", "        off = zz * MNQ"]
    L += [f"        c{i}_{j} += part[e{i}_{j} + off]" for i in range(t.tm) for j in range(t.tn)]
    L += ["        zz += U(1)"]
    for j in range(t.tn):
        L += [f"    q = qf{j}", "    if q < NQ:", "        n = q // HoWo", "        o = q + n * (M - 1) * HoWo"]
        for i in range(t.tm):
            L += [f"        m = m0 + ty * {t.tm} + {i}", "        if m < M:", f"            v = c{i}_{j}",
                  "            if has_bias:", "                v += bias[U(m)]", "            out[U(o + m * HoWo)] = v"]
    return L


def _prologue(t: G.Tile, one: bool) -> list:
    """The thread's indices: its A column, its B column ``qb`` (clamped to a valid pixel, never
    stored) and that column's base address in x (1x1: ``n*CHW + p``; gather: the window's corner)."""
    L = ["tx = cuda.threadIdx.x", "ty = cuda.threadIdx.y", f"tid = ty * {t.thx} + tx",
         f"q0 = cuda.blockIdx.x * {t.bn}", f"m0 = cuda.blockIdx.y * {t.bm}",
         "kt0 = cuda.blockIdx.z * kt_per", "nt = min(kt_per, KT - kt0)",
         f"As = cuda.shared.array({t.stage_a}, DT)", f"Bs = cuda.shared.array({t.stage_b}, DT)",
         f"ja = tid % {t.bm}", f"ka = tid // {t.bm}", "abase = U(m0 + ja)",
         f"jb = tid % {t.bn}", f"kb = tid // {t.bn}", "qb = min(q0 + jb, NQ - 1)",
         "nb = qb // HoWo", "pb = qb - nb * HoWo"]
    if one:
        L += ["xb = U(nb * CHW + pb)", "HW = U(HoWo)", "Ku = U(K)"]
    else:
        L += ["oy = pb // Wo", "ox = pb - oy * Wo", "iy0 = oy * sy - py", "ix0 = ox * sx - px",
              "xb = nb * CHW + iy0 * W + ix0", "Kp = U(Kpad)", "Kp2 = Kp + Kp"]
    return L + ["Mp = U(Mpad)", f"aS = U({t.threads // t.bm}) * Mp", f"k = kt0 * {t.bk}"]


def source(t: G.Tile, one: bool = False, fused: bool = False) -> str:
    """The Python source of the GEMM kernel ``kern(a, x, ktab, part, out, bias, cnt, ...)`` of tile
    ``t`` (``one``: the 1x1 path's loads, else the table gather; ``fused``: with the fused split-K
    reduction, a build of its own, so that the 8x8 micro-tile's 64 partial addresses do not weigh
    on the registers of the other builds' main loop)."""
    ind = lambda lines, n: ["    " * n + s for s in lines]  # noqa: E731
    body = _prologue(t, one) + _loads(t, one) + _stores(t, "0") + ["cuda.syncthreads()"]
    body += [f"c{i}_{j} = Z" for i in range(t.tm) for j in range(t.tn)]
    if one:
        # the 1x1 path keeps ``if t + 1 < nt`` around its loads and its stores; LLVM merges the two
        # branches, after the multiply-adds.  Its slices are a few deep k-tiles, and on an H200
        # the loads issued before the multiply-adds (the gather's form below) made cuconv
        # T3-1x1-B slower (docs/performance.md, conv2d best)
        loop = ["cur = t & 1", "if t + 1 < nt:", f"    k = (kt0 + t + 1) * {t.bk}"]
        loop += ind(_loads(t, one), 1) + _compute(t) + ["if t + 1 < nt:"] + ind(_stores(t, "(1 - cur)"), 1)
        loop += ["cuda.syncthreads()"]
        body += ["for t in range(nt):"] + ind(loop, 1)
    else:
        # the gather's last k-tile is peeled off the loop, so that every iteration loads the next
        # k-tile without a branch: behind ``if t + 1 < nt`` LLVM merged the loads into the branch
        # around the stores, after the multiply-adds, and every k-tile waited out the table and
        # gather latencies
        loop = ["cur = t & 1", f"k = (kt0 + t + 1) * {t.bk}"] + _loads(t, one) + _compute(t)
        loop += _stores(t, "(1 - cur)") + ["cuda.syncthreads()"]
        body += ["for t in range(nt - 1):"] + ind(loop, 1) + ["cur = (nt - 1) & 1"] + _compute(t)
    body += _epilogue(t, fused)
    return "\n".join([f"def kern({_ARGS}):"] + ind(body, 1)) + "\n"


@functools.lru_cache(maxsize=None)
def _gemm(tile: str, dtype: str, one: bool, fused: bool, mode: str):
    cuda = rc.cuda()
    from numba import float32, float64, uint64
    DT = float32 if dtype == "float32" else float64
    fname = f"<refconv conv2d_best {tile} {dtype}{' 1x1' if one else ''}{' fused' if fused else ''}>"
    t = G.TILES[tile]
    ns = dict(cuda=cuda, DT=DT, Z=np.dtype(dtype).type(0), min=min, U=uint64)
    return jit_source(cuda, source(t, one, fused), fname, ns, None if mode == "sim" else t.regs)


#: the split-K reduction: out[n, m, pixel] = sum_z part[z, m, q] (z in order) + bias[m], q = n*HoWo + pixel
REDUCE_SRC = """def kern(part, bias, out, M, NQ, HoWo, split, has_bias):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if i >= M * NQ:
        return
    m = i // NQ
    q = i - m * NQ
    s = part[U(i)]
    for z in range(1, split):
        s += part[U(z * M * NQ + i)]
    if has_bias:
        s += bias[U(m)]
    n = q // HoWo
    out[U(q + n * (M - 1) * HoWo + m * HoWo)] = s
"""


@functools.lru_cache(maxsize=None)
def _reduce(mode: str):
    cuda = rc.cuda()
    from numba import uint64
    return jit_source(cuda, REDUCE_SRC, "<refconv conv2d_best reduce>", dict(cuda=cuda, U=uint64))


# ----------------------------------------------------------------------------- host

def run(problem, out, tile="auto", split="auto", path="auto", reduce="auto"):
    cuda = rc.cuda()
    g = G.geometry(problem)
    dt = np.dtype(problem.dims["dtype"])
    p = G.plan(g, tile, split, dt.itemsize, path, reduce)
    x, a, ktab, bias, has_bias = G.operands(problem, p)
    d_out, n = rc.to_device_poisoned(out)
    d_part = cuda.device_array(max(G.partial_elements(g, p), 1), dt)
    d_cnt = cuda.to_device(np.zeros(G.counters(p), np.int32))
    d_b = cuda.to_device(bias)
    t = p.tile
    direct = p.split == 1
    k = _gemm(t.name, dt.name, p.one, p.fused, rc.mode())
    rc.launch(k[p.grid, (t.thx, t.thy)], cuda.to_device(a), cuda.to_device(x), cuda.to_device(ktab), d_part,
              d_out, d_b, d_cnt, *G.kernel_ints(g, p), has_bias, direct)
    if not direct and not p.fused:
        rc.launch(_reduce(rc.mode())[rc.cdiv(g.M * g.NQ, REDUCE_THREADS), REDUCE_THREADS],
                  d_part, d_b, d_out, g.M, g.NQ, g.Ho * g.Wo, p.split, has_bias)
    cuda.synchronize()
    return rc.from_device(d_out, n, out)


def _plan_of(problem, params):
    d = problem.dims
    g = G.geometry(problem)
    if g.Ho < 1 or g.Wo < 1:
        return g, None
    return g, G.plan(g, params.get("tile", "auto"), params.get("split", "auto"), np.dtype(d["dtype"]).itemsize,
                     params.get("path", "auto"), params.get("reduce", "auto"))


def constraint(problem, params):
    """The device limits: the tile's block, the grid (q tiles, m tiles, split), both stage
    buffers in static shared memory, x, A, the table, the output and the partials in device
    memory; under the simulator, at most :data:`SIM_MAX_WORK` work units."""
    g, p = _plan_of(problem, params)
    if p is None:                         # the spec refuses it too; a reason keeps the compile check off it
        return f"empty output ({g.Ho}x{g.Wo})"
    isz = np.dtype(problem.dims["dtype"]).itemsize
    mem = (g.N * g.C * g.H * g.W + p.kpad * p.mpad + g.M * g.NQ + G.partial_elements(g, p)) * isz + 12 * p.kpad \
        + 4 * G.counters(p)
    why = G.index_limit(g, p) or rc.fits(problem, threads=p.tile.threads, grid=p.grid,
                                         shared=p.tile.shared_bytes(isz), device_bytes=mem)
    if why is None and p.split > 1 and not p.fused:
        why = rc.fits(problem, threads=REDUCE_THREADS, grid=(rc.cdiv(g.M * g.NQ, REDUCE_THREADS),))
    if why is None and rc.is_sim() and cost(problem, params) > SIM_MAX_WORK:
        why = f"{cost(problem, params):.0f} work units > {SIM_MAX_WORK} under the simulator (SIM_MAX_WORK)"
    return why


def cost(problem, params):
    """The simulated work (refconv.cost): per thread and k-tile its shared reads (BK*(TM+TN)), a
    quarter step per multiply-add, its global loads and one barrier; the reduction's reads."""
    g, p = _plan_of(problem, params)
    if p is None:
        return 1.0
    t = p.tile
    blocks = p.grid[0] * p.grid[1] * p.split
    per_tile = t.bk * (t.tm + t.tn) + t.bk * t.tm * t.tn / 4 + (t.bk * (t.bm + 4 * t.bn)) / t.threads
    w = sim_work(t.threads, blocks, steps=blocks * t.threads * (p.kt_per + 1) * per_tile,
                    barriers=blocks * t.threads * (p.kt_per + 1))
    if p.fused:
        w += sim_work(t.threads, p.grid[0] * p.grid[1], steps=p.grid[0] * p.grid[1] * t.bm * t.bn * p.split)
    elif p.split > 1:
        w += sim_work(REDUCE_THREADS, rc.cdiv(g.M * g.NQ, REDUCE_THREADS), steps=g.M * g.NQ * p.split)
    return w


def variants():
    return [Variant(
        op="conv2d", backend="numba_cuda", name="best", run=run, supports=dict(SUPPORTS), params=PARAMS,
        available=rc.reason, constraint=constraint, cost=cost, origin=ORIGIN,
        doc="implicit GEMM out[m, q] = sum_k A[k, m] B[k, q] (k = (c, r, s), q = output pixel of image n; "
            "filters K-major on the host, the im2col gather B done while staging): BM x BN block tiles, "
            "TM x TN register micro-tiles, BK-deep double-buffered shared slices; split-K into a partial "
            "buffer summed in order (+bias) by a second kernel or, reduce=fused, by the last block of each tile "
            "(atomic arrival counter); path 'auto': 1x1 stride-1 unpadded filters read B[k, q] = x[n, k, p] "
            "with no gather table; tile, split and reduce 'auto' from a cost model of the problem size")]
