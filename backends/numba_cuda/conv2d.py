"""conv2d: the cuconv kernels of seed 004 (B.Sc. project on cuconv, §4.3: split
``scalar_prods_kernel`` + ``sum_kernel``, and ``fused_conv_kernel``).

NCHW input, filters converted on the host to depth rows ``[M][R][S][C]`` (the paper's layout).
``cuconv_split``: kernel 1 over (output pixels, M, R*S) computes, for one filter offset
``(fy, fx)``, the C-long dot product of the depth row with the input column under it into a
``(M, R*S, Ho*Wo)`` partial buffer; kernel 2 sums the R*S partials per output (+ bias).  For 1x1
filters the sum kernel is skipped (kernel 1 writes the output, bias included).  ``cuconv_fused``:
one kernel over (output pixels, M); for each filter offset the block stages the C-long depth row
in shared memory, synchronises, accumulates, synchronises.  The paper's fused listing returns
early for threads past the last pixel and then calls ``__syncthreads()``, a barrier not every
thread reaches: here every thread takes part in the staging and the barriers, only in-range
threads accumulate and write.  Both handle N >= 1 (one launch sequence per image), stride,
zero padding and dilation (the paper: stride 1, padding (R-1)/2, dilation 1, groups 1); groups
= 1 only.  Ghost (padding) cells contribute ``w*0`` like the spec (the paper skips them, which
differs only for Inf/NaN weights).
"""
from __future__ import annotations

import functools

import numpy as np

from refconv import Param, Range, Variant

from refconv.backends.conv2d_gemm import blocks_per_sm
from refconv.tooling import cuda as kit
from refconv.tooling.cuda import cdiv, fits, from_device, io_bytes, launch, to_device_poisoned

cuda = None
ORIGIN = "seeds/004_906959956e3859a4.txt"
SUPPORTS = {"dtype": ("float32", "float64"), "n": Range(1), "c": Range(1), "h": Range(1),
            "w": Range(1), "m": Range(1), "r": Range(1), "s": Range(1), "groups": (1,),
            "bias": (0, 1), "stride": Range(1), "padding": Range(0), "dilation": Range(1)}


@functools.lru_cache(maxsize=None)
def _depth_dot(ahead: bool = False):
    """The device function ``acc + sum_d x[xi + d*step] * w[wi + d]``, d = 0 .. n-1 in order
    (uint64 indices and loops: numba's ``range()`` keeps a signed trip count), eight channels a
    step, their eight loads of ``x`` and of ``w`` issued before their eight multiply-adds (the
    OpenCL twin's ``DEPTH_DOT``).

    ``ahead`` (the split kernel, whose depth row ``w`` is in global memory): each step first adds
    the eight products whose operands the previous step loaded, then loads the next eight pairs,
    so the loads of a step are in flight while the next one's multiply-adds wait for them.
    Written as the twin's loop (loads, then their multiply-adds), NVVM sinks each load next to its
    multiply-add in the PTX, and ptxas (sm_90) issues the sixteen loads in about three waves, each
    behind a multiply-add that waits for the wave before: up to three memory latencies a step
    instead of one.  Here all sixteen loads of a step are issued together after the step's
    multiply-adds, whose operands are already in flight.  The products and their order are the
    same either way; only the loads move.  The fused kernel, whose depth row is in shared memory
    and whose ``n`` is a compile-time constant (the loop is unrolled), keeps the twin's form."""
    from numba import uint64
    U1, U2, U3, U4, U5, U6, U7, U8 = (np.uint64(i) for i in range(1, 9))

    if ahead:
        # the eight loads and the eight multiply-adds are written out twice (before and inside the
        # loop) on purpose: through small device functions returning 8-tuples, NVVM and ptxas build
        # different code (sm_90: 888 instructions and 44 registers against 880 and 40)
        @kit.cuda().jit(device=True)
        def depth_dot_ahead(acc, x, xi, step, w, wi, n):
            we = wi + uint64(n)
            if wi + U8 <= we:
                x0, x1, x2, x3 = x[xi], x[xi + step], x[xi + U2 * step], x[xi + U3 * step]
                x4, x5, x6, x7 = x[xi + U4 * step], x[xi + U5 * step], x[xi + U6 * step], x[xi + U7 * step]
                w0, w1, w2, w3 = w[wi], w[wi + U1], w[wi + U2], w[wi + U3]
                w4, w5, w6, w7 = w[wi + U4], w[wi + U5], w[wi + U6], w[wi + U7]
                wi += U8
                xi += U8 * step
                while wi + U8 <= we:
                    acc += x0 * w0                      # channels d - 8 .. d - 1, loaded last step
                    acc += x1 * w1
                    acc += x2 * w2
                    acc += x3 * w3
                    acc += x4 * w4
                    acc += x5 * w5
                    acc += x6 * w6
                    acc += x7 * w7
                    x0, x1, x2, x3 = x[xi], x[xi + step], x[xi + U2 * step], x[xi + U3 * step]
                    x4, x5, x6, x7 = x[xi + U4 * step], x[xi + U5 * step], x[xi + U6 * step], x[xi + U7 * step]
                    w0, w1, w2, w3 = w[wi], w[wi + U1], w[wi + U2], w[wi + U3]
                    w4, w5, w6, w7 = w[wi + U4], w[wi + U5], w[wi + U6], w[wi + U7]
                    wi += U8
                    xi += U8 * step
                acc += x0 * w0
                acc += x1 * w1
                acc += x2 * w2
                acc += x3 * w3
                acc += x4 * w4
                acc += x5 * w5
                acc += x6 * w6
                acc += x7 * w7
            while wi < we:
                acc += x[xi] * w[wi]
                wi += U1
                xi += step
            return acc
        return depth_dot_ahead

    @kit.cuda().jit(device=True)
    def depth_dot(acc, x, xi, step, w, wi, n):
        we = wi + uint64(n)
        while wi + U8 <= we:
            x0, x1, x2, x3 = x[xi], x[xi + step], x[xi + U2 * step], x[xi + U3 * step]
            x4, x5, x6, x7 = x[xi + U4 * step], x[xi + U5 * step], x[xi + U6 * step], x[xi + U7 * step]
            acc += x0 * w[wi]
            acc += x1 * w[wi + U1]
            acc += x2 * w[wi + U2]
            acc += x3 * w[wi + U3]
            acc += x4 * w[wi + U4]
            acc += x5 * w[wi + U5]
            acc += x6 * w[wi + U6]
            acc += x7 * w[wi + U7]
            wi += U8
            xi += U8 * step
        while wi < we:
            acc += x[xi] * w[wi]
            wi += U1
            xi += step
        return acc
    return depth_dot


#: registers a thread of the sm_90 build of ``scalar_prods`` takes uncapped (ptxas's choice), and the
#: cap :func:`split_register_cap` may set
SPLIT_REGS, SPLIT_CAP_REGS = 40, 32


def split_register_cap(blocks: int, threads: int, sms: int) -> int | None:
    """The register cap for a ``scalar_prods`` grid of ``blocks`` blocks of ``threads`` threads on
    ``sms`` multiprocessors: :data:`SPLIT_CAP_REGS` where the grid fits in one wave at that count
    (``blocks <= sms * blocks_per_sm(threads, regs)``,
    :func:`refconv.backends.conv2d_gemm.blocks_per_sm`) and not at :data:`SPLIT_REGS`, else None.
    The capped build spills (60 bytes on sm_90), which costs about a fifth where the grid is one wave
    either way; where it saves a second wave it is faster (cuconv-T3-1x1-B: 1024 blocks on 132
    SMs).  Grids of many waves keep the uncapped build."""
    def one_wave(regs):
        return blocks <= sms * blocks_per_sm(threads, regs)
    return SPLIT_CAP_REGS if one_wave(SPLIT_CAP_REGS) and not one_wave(SPLIT_REGS) else None


@functools.lru_cache(maxsize=None)
def _split_kernels(dtype: str, max_registers: int | None = None):
    """``(scalar_prods, sum_kernel)`` for ``dtype``, ``scalar_prods`` jitted with ``max_registers``
    (None: uncapped; a cap changes no result, and the simulator, whose jit takes none, ignores it)."""
    global cuda
    cuda = kit.cuda()
    from numba import float32, float64, uint64
    DT = float32 if dtype == "float32" else float64
    U0, U1 = np.uint64(0), np.uint64(1)
    depth_dot = _depth_dot(ahead=True)
    jit = cuda.jit(max_registers=max_registers) if max_registers and kit.mode() == "gpu" else cuda.jit

    # every subscript is a uint64 built from uint64 operands (numba gives a signed index a
    # negative-index wraparound: a 64-bit compare and select per subscript); the input index is
    # formed only where the tap is inside the image (iy, ix may be negative outside)
    @jit
    def scalar_prods(x, f, bias, part, out, xoff, ooff, H, W, C, M, R, S, Ho, Wo,
                     sy, sx, py, px, dy, dx, direct, has_bias):
        fyfx = cuda.blockIdx.z
        m = cuda.blockIdx.y
        pix = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
        if fyfx >= R * S or m >= M or pix >= Ho * Wo:
            return
        ufyfx, um, upix = uint64(fyfx), uint64(m), uint64(pix)
        uS, uWo, uW, uHW = uint64(S), uint64(Wo), uint64(W), uint64(H) * uint64(W)
        uHoWo = uint64(Ho) * uWo
        ufy = ufyfx // uS
        ufx = ufyfx - ufy * uS
        uoy = upix // uWo
        uox = upix - uoy * uWo
        iy = int(uoy) * sy - py + int(ufy) * dy
        ix = int(uox) * sx - px + int(ufx) * dx
        inside = iy >= 0 and iy < H and ix >= 0 and ix < W
        fi = ((um * uint64(R) + ufy) * uS + ufx) * uint64(C)
        xi = U0
        if inside:
            xi = uint64(xoff) + uint64(iy) * uW + uint64(ix)
        fe = fi + uint64(C)
        acc = DT(0)
        # the inside test taken once, not per channel: behind it a load is predicated and issued
        # just before its use
        if inside:
            acc = depth_dot(acc, x, xi, uHW, f, fi, C)
        else:
            while fi < fe:                                # ghost cells: w*0, as the spec
                acc += DT(0) * f[fi]
                fi += U1
        if direct:
            if has_bias:
                acc += bias[um]
            out[uint64(ooff) + um * uHoWo + upix] = acc
        else:
            part[(um * uint64(R * S) + ufyfx) * uHoWo + upix] = acc

    @cuda.jit
    def sum_kernel(part, bias, out, ooff, M, K, Ho, Wo, has_bias):
        m = cuda.blockIdx.y
        pix = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
        if m >= M or pix >= Ho * Wo:
            return
        um, upix = uint64(m), uint64(pix)
        uHoWo = uint64(Ho) * uint64(Wo)
        pi = um * uint64(K) * uHoWo + upix
        k = U0
        uK = uint64(K)
        acc = DT(0)
        while k < uK:
            acc += part[pi]
            pi += uHoWo
            k += U1
        if has_bias:
            acc += bias[um]
        out[uint64(ooff) + um * uHoWo + upix] = acc

    return scalar_prods, sum_kernel


@functools.lru_cache(maxsize=None)
def _fused_kernel(C: int, dtype: str):
    global cuda
    cuda = kit.cuda()
    from numba import float32, float64, uint64
    DT = float32 if dtype == "float32" else float64
    CC = C
    U0, U1, UC = np.uint64(0), np.uint64(1), np.uint64(C)
    depth_dot = _depth_dot()

    # uint64 subscripts, as in _split_kernels
    @cuda.jit
    def fused(x, f, bias, out, xoff, ooff, H, W, M, R, S, Ho, Wo, sy, sx, py, px, dy, dx, has_bias):
        m = cuda.blockIdx.y
        pix = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
        active = pix < Ho * Wo
        um, upix, uWo = uint64(m), uint64(pix), uint64(Wo)
        uW, uHW = uint64(W), uint64(H) * uint64(W)
        uoy = upix // uWo
        uox = upix - uoy * uWo
        oy = int(uoy)
        ox = int(uox)
        utx = uint64(cuda.threadIdx.x)
        ubd = uint64(cuda.blockDim.x)
        sf = cuda.shared.array(CC, DT)
        acc = DT(0)
        frow = um * uint64(R) * uint64(S) * UC           # depth row (m, 0, 0)
        fy = 0
        while fy < R:                                    # while, not range(): no trip-count selects
            fx = 0
            while fx < S:
                d = utx
                while d < UC:
                    sf[d] = f[frow + d]
                    d += ubd
                cuda.syncthreads()
                if active:
                    iy = oy * sy - py + fy * dy
                    ix = ox * sx - px + fx * dx
                    inside = iy >= 0 and iy < H and ix >= 0 and ix < W
                    d2 = U0
                    if inside:      # the test once a tap, as in the split kernel
                        xi = uint64(xoff) + uint64(iy) * uW + uint64(ix)
                        acc = depth_dot(acc, x, xi, uHW, sf, U0, CC)
                    else:
                        while d2 < UC:                   # ghost cells: w*0, as the spec
                            acc += DT(0) * sf[d2]
                            d2 += U1
                cuda.syncthreads()
                frow += UC
                fx += 1
            fy += 1
        if active:
            if has_bias:
                acc += bias[um]
            out[uint64(ooff) + um * uint64(Ho) * uWo + upix] = acc

    return fused


def _prep(problem):
    x = np.ascontiguousarray(problem.inputs["x"])
    w = problem.inputs["w"]
    b = problem.inputs.get("bias")
    N, C, H, W = x.shape
    M, _, R, S = w.shape
    st, pd, dl = problem.option("stride"), problem.option("padding"), problem.option("dilation")
    pair = lambda v: (v, v) if isinstance(v, int) else tuple(v)  # noqa: E731
    (sy, sx), (py, px), (dy, dx) = pair(st), pair(pd), pair(dl)
    Ho = (H + 2 * py - dy * (R - 1) - 1) // sy + 1
    Wo = (W + 2 * px - dx * (S - 1) - 1) // sx + 1
    f = np.ascontiguousarray(w.transpose(0, 2, 3, 1)).reshape(-1)     # [M][R][S][C]
    has_bias = b is not None
    bias = np.ascontiguousarray(b) if has_bias else np.zeros(1, x.dtype)
    return x, f, bias, has_bias, (N, C, H, W, M, R, S, Ho, Wo, sy, sx, py, px, dy, dx)


def _run_split(problem, out, threads=256):
    cuda_ = kit.cuda()
    x, f, bias, has_bias, (N, C, H, W, M, R, S, Ho, Wo, sy, sx, py, px, dy, dx) = _prep(problem)
    K = R * S
    gx = cdiv(Ho * Wo, threads)
    cap = split_register_cap(gx * M * K, threads, kit.sm_count())
    scalar_prods, sum_kernel = _split_kernels(x.dtype.name, cap)
    d_out, n = to_device_poisoned(out)
    d_x, d_f, d_b = cuda_.to_device(x.reshape(-1)), cuda_.to_device(f), cuda_.to_device(bias)
    direct = K == 1
    d_part = cuda_.device_array(max(M * K * Ho * Wo, 1), x.dtype)
    for i in range(N):
        xoff, ooff = i * C * H * W, i * M * Ho * Wo
        launch(scalar_prods[(gx, M, K), threads], d_x, d_f, d_b, d_part, d_out, xoff, ooff, H, W, C, M, R, S,
                                          Ho, Wo, sy, sx, py, px, dy, dx, direct, has_bias)
        if not direct:
            launch(sum_kernel[(gx, M), threads], d_part, d_b, d_out, ooff, M, K, Ho, Wo, has_bias)
    cuda_.synchronize()
    return from_device(d_out, n, out)


def _run_fused(problem, out, threads=256):
    cuda_ = kit.cuda()
    x, f, bias, has_bias, (N, C, H, W, M, R, S, Ho, Wo, sy, sx, py, px, dy, dx) = _prep(problem)
    k = _fused_kernel(C, x.dtype.name)
    d_out, n = to_device_poisoned(out)
    d_x, d_f, d_b = cuda_.to_device(x.reshape(-1)), cuda_.to_device(f), cuda_.to_device(bias)
    for i in range(N):
        launch(k[(cdiv(Ho * Wo, threads), M), threads], d_x, d_f, d_b, d_out, i * C * H * W, i * M * Ho * Wo,
                                                H, W, M, R, S, Ho, Wo, sy, sx, py, px, dy, dx, has_bias)
    cuda_.synchronize()
    return from_device(d_out, n, out)


def _out_hw(problem):
    """(Ho, Wo) of the spec's formula (H + 2*pad - dil*(R-1) - 1) // stride + 1; ValueError if empty."""
    d = problem.dims
    pair = lambda v: v if isinstance(v, tuple) else (v, v)  # noqa: E731
    (sy, sx), (py, px), (dy, dx) = (pair(problem.option(k)) for k in ("stride", "padding", "dilation"))
    ho = (d["h"] + 2 * py - dy * (d["r"] - 1) - 1) // sy + 1
    wo = (d["w"] + 2 * px - dx * (d["s"] - 1) - 1) // sx + 1
    if ho < 1 or wo < 1:
        raise ValueError("empty output")
    return ho, wo


def _fits(kind):
    """The device limits: grid (Ho*Wo/threads, M[, R*S]), fused's C-long shared depth row,
    x, filters, output (+ split's M x R*S x Ho*Wo partial buffer) in device memory."""
    def check(problem, params):
        d = problem.dims
        t = params.get("threads", 256)
        try:
            Ho, Wo = _out_hw(problem)
        except ValueError:
            return None                      # the spec rejects it; the checker says so
        isz = np.dtype(d["dtype"]).itemsize
        mem = io_bytes(problem, d["n"] * d["m"] * Ho * Wo, isz)
        if kind == "split":
            return fits(problem, threads=t, grid=(cdiv(Ho * Wo, t), d["m"], d["r"] * d["s"]),
                        device_bytes=mem + d["m"] * d["r"] * d["s"] * Ho * Wo * isz)
        return fits(problem, threads=t, grid=(cdiv(Ho * Wo, t), d["m"]), shared=d["c"] * isz, device_bytes=mem)
    return check


def variants():
    available = kit.reason
    p = (Param("threads", (4, 8, 32, 64, 256), 256),)
    return [
        Variant(op="conv2d", backend="numba_cuda", name="cuconv_split", run=_run_split, supports=dict(SUPPORTS),
                params=p, available=available, constraint=_fits("split"), origin=f"{ORIGIN} §4.3.2 scalar_prods_kernel + §4.3.3 sum_kernel",
                doc="per (pixel, filter, offset) C-long dot products into an (M, R*S, Ho*Wo) partial buffer, "
                    "then a sum kernel (+bias); 1x1 filters write directly"),
        Variant(op="conv2d", backend="numba_cuda", name="cuconv_fused", run=_run_fused, supports=dict(SUPPORTS),
                params=p, available=available, constraint=_fits("fused"), origin=f"{ORIGIN} fused_conv_kernel",
                doc="one kernel per (pixel, filter); per filter offset the block stages the C-long depth row "
                    "[M][R][S][C] in shared memory (all threads reach every barrier)"),
    ]
