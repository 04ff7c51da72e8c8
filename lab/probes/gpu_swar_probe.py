"""Design probe for issue #24 (filter2d-u8-3x3-3072 <= 12.6 us): the spec's ``int`` accumulator on two
outputs at once, as two 16-bit lanes of one 32-bit register (SWAR), prototyped in CUDA C (CuPy/NVRTC),
checked bit for bit against the spec on the preset, then timed like lab/probes/gpu_proto_probe.py (L2
flush, CUDA events, median of 30).  Beside it, in the same process, that probe's kernels as the
baseline: TRUNC 2 (the shipped float arithmetic), 3 (int32 in units of 2^-k), 8 (loads and stores
alone) and 9 (the FMA chain without truncations).  Prints one JSON line per configuration.

The lanes (weights ``m_t * 2^-k``, integers ``m_t``): a lane holds ``2^15 + A`` where ``A`` is the
spec's exact partial sum in units of ``2^-k``.  When ``255 * (sum of the positive m)`` and ``255 * (sum
of the |negative m|)`` are below ``2^15``, every partial sum (truncated or not) lies in ``[-2^15,
2^15)``, so a lane never leaves ``[0, 2^16)`` and one 32-bit multiply-add ``L += m * (x_lo | x_hi <<
16)`` updates both lanes exactly.  Truncation toward zero in units of ``2^-k`` (the spec's
``(int)`` of a float sum) is, per lane, ``L & ~(2^k - 1)`` where bit 15 is set (``A >= 0``) and
``(L + 2^k - 1) & ~(2^k - 1)`` where it is clear; four instructions for the two lanes.  The host
classifies each tap (SPEC=1): no truncation where ``m_t`` is a multiple of ``2^k``, a mask alone
while every weight so far is >= 0, add-and-mask while every weight so far is <= 0.  The output
byte of a lane is bits ``k + shift .. k + shift + 7`` (``k + shift <= 7``, wrap).

Lanes are output columns ``i`` and ``i + 2`` (``i`` in 0, 1, 4, 5, 8, 9, 12, 13 of a thread's 16),
so a row's 16 input pairs are 8 byte permutes of its 4 words, 6 funnel shifts and 2 permutes with
the halo bytes, and four outputs are one permute of two shifted lane pairs.

usage: [SWAR_R=2,4,8] [SWAR_BX=64,128] python lab/probes/gpu_swar_probe.py
"""
from __future__ import annotations

import importlib.util
import itertools
import json
import os
import pathlib

import cupy as cp
import numpy as np

from refconv import specs
from refconv.bench import presets

_spec = importlib.util.spec_from_file_location("gpu_proto_probe", pathlib.Path(__file__).with_name("gpu_proto_probe.py"))
proto = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(proto)

SWAR = r"""
#define MK ((1u << K) - 1u)
#define KM2 (MK | (MK << 16))
#define CLR (~KM2)
#define MF 8388608.0f
#ifndef CW
#define CW 16
#endif
#ifndef MIXF
#define MIXF 0
#endif
#define NW (CW / 4)
#ifndef HI
#define HI 0
#endif
__device__ __forceinline__ unsigned tr2(unsigned L, int kind, int t, unsigned s17) {
    if (kind == 0) return L;                      /* m_t a multiple of 2^k: the sum is already whole */
    if (kind == 1) return L & CLR;                /* every weight so far >= 0: floor */
    if (kind == 2) return (L + KM2) & CLR;        /* every weight so far <= 0: ceil */
    /* L >> 15 by a shift (the integer ALU) or, HI=1 on odd taps / HI=2 on all, as the high word of
       L * 2^17 (IMAD.HI, the FMA pipe; s17 a kernel argument so that ptxas keeps the multiply) */
    const unsigned sh = (HI == 2 || (HI == 1 && (t & 1))) ? __umulhi(L, s17) : (L >> 15);
    const unsigned neg = ~sh & 0x00010001u;
    return (L + neg * MK) & CLR;                  /* ceil where the lane's bit 15 is clear */
}
__device__ __forceinline__ float cvb(unsigned w, unsigned k) {      /* byte k of w, as a float */
    return __int_as_float(__byte_perm(w, 0x4B000000u, 0x7540u | k)) - MF;
}
__device__ __forceinline__ float ftr(float s, int t) {
#if FTR == 1
    return truncf(s);
#else
    if (t & 1) return truncf(s);
    return copysignf(__fadd_rz(fabsf(s), MF) - MF, s);
#endif
}
extern "C" __global__ void __launch_bounds__(BX) f2s(const unsigned char *__restrict__ img,
        unsigned char *__restrict__ out, int H, int W, int m0, int m1, int m2, int m3, int m4, int m5,
        int m6, int m7, int m8, float w0, float w1, float w2, float w3, float w4, float w5, float w6,
        float w7, float w8, unsigned s17)
{
    const int mv[9] = {m0, m1, m2, m3, m4, m5, m6, m7, m8};
    const float wv[9] = {w0, w1, w2, w3, w4, w5, w6, w7, w8};
    const int kd[9] = {KD0, KD1, KD2, KD3, KD4, KD5, KD6, KD7, KD8};
    const int gx = blockIdx.x * BX + threadIdx.x;
    const int c0 = gx * CW;
    const int r0 = 1 + blockIdx.y * R;
    if (c0 >= W - 1 || r0 > H - 2) return;
#if CW == 16
    typedef uint4 VT;
#define UNPACK(qq) {qq.x, qq.y, qq.z, qq.w}
#else
    typedef uint2 VT;
#define UNPACK(qq) {qq.x, qq.y}
#endif
    unsigned P[3][CW];
    float F[3][6];                                /* MIXF: columns 11 .. 16 as floats */
    VT qn; unsigned hln, hrn;
    {
        const unsigned char *row = img + (size_t)(r0 - 1) * W;
        qn = __ldg((const VT *)(row + c0));
        hln = c0 > 0 ? __ldg(row + c0 - 1) : 0u; hrn = c0 + CW < W ? __ldg(row + c0 + CW) : 0u;
    }
#pragma unroll
    for (int j = 0; j < R + 2; ++j) {
        const VT qq = qn; const unsigned hl = hln, hr = hrn;
        if (j + 1 < R + 2) {                      /* the next row's loads before this row's arithmetic */
            const unsigned char *row = img + (size_t)min(r0 + j, H - 1) * W;
            qn = __ldg((const VT *)(row + c0));
            hln = c0 > 0 ? __ldg(row + c0 - 1) : 0u; hrn = c0 + CW < W ? __ldg(row + c0 + CW) : 0u;
        }
        unsigned *pp = P[j % 3];
        const unsigned u[NW] = UNPACK(qq);
        unsigned E[NW], O[NW];
#pragma unroll
        for (int v = 0; v < NW; ++v) { E[v] = __byte_perm(u[v], 0, 0x4240); O[v] = __byte_perm(u[v], 0, 0x4341); }
        pp[0] = __byte_perm(hl, O[0], 0x5410);                 /* columns (-1, 1) */
#pragma unroll
        for (int v = 0; v < NW; ++v) {
            pp[4 * v + 1] = E[v]; pp[4 * v + 2] = O[v];          /* (4v, 4v+2), (4v+1, 4v+3) */
            if (v < NW - 1) {
                pp[4 * v + 3] = __funnelshift_r(E[v], E[v + 1], 16);   /* (4v+2, 4v+4) */
                pp[4 * v + 4] = __funnelshift_r(O[v], O[v + 1], 16);   /* (4v+3, 4v+5) */
            }
        }
        pp[CW - 1] = __byte_perm(E[NW - 1], hr, 0x5432);       /* (CW-2, CW) */
#if MIXF
        float *fp = F[j % 3];
        fp[0] = cvb(u[2], 3);
#pragma unroll
        for (int b = 0; b < 4; ++b) fp[b + 1] = cvb(u[3], b);
        fp[5] = __int_as_float(0x4B000000u | hr) - MF;
#endif
        if (j < 2) continue;
        const int r = r0 + j - 2;
        if (r > H - 2) return;
        const unsigned *a[3] = {P[(j - 2) % 3], P[(j - 1) % 3], P[j % 3]};
        unsigned V[CW];
#pragma unroll
        for (int g = 0; g < NW - (MIXF ? 1 : 0); ++g) {
#pragma unroll
            for (int e = 0; e < 2; ++e) {
                const int i = 4 * g + e;
                unsigned L = 0x80008000u;
#pragma unroll
                for (int t = 0; t < 9; ++t) L = tr2((unsigned)mv[t] * a[t / 3][i + t % 3] + L, kd[t], t, s17);
                V[i] = L >> (K + SHIFT);
            }
        }
        unsigned o[NW];
#pragma unroll
        for (int g = 0; g < NW - (MIXF ? 1 : 0); ++g) o[g] = __byte_perm(V[4 * g], V[4 * g + 1], 0x6240);
#if MIXF
        {
            const float *f[3] = {F[(j - 2) % 3], F[(j - 1) % 3], F[j % 3]};
            o[3] = 0;
#pragma unroll
            for (int i = 0; i < 4; ++i) {
                float s = __fmul_rn(wv[0], f[0][i]);
#pragma unroll
                for (int t = 1; t < 9; ++t) s = __fmaf_rn(wv[t], f[t / 3][i + t % 3], ftr(s, t));
                const int fi = __float_as_int(__fadd_rz(fabsf(s), MF)) - 0x4B000000;
                o[3] |= (unsigned)(((s < 0.0f ? -fi : fi) >> SHIFT) & 0xFF) << (8 * i);
            }
        }
#endif
        unsigned char *orow = out + (size_t)r * W;
        if (c0 >= 1 && c0 + CW - 1 <= W - 2) {
#if CW == 16
            *(uint4 *)(orow + c0) = make_uint4(o[0], o[1], o[2], o[3]);
#else
            *(uint2 *)(orow + c0) = make_uint2(o[0], o[1]);
#endif
        } else {
#pragma unroll
            for (int i = 0; i < CW; ++i)
                if (c0 + i >= 1 && c0 + i <= W - 2) orow[c0 + i] = (o[i / 4] >> (8 * (i % 4))) & 0xFF;
        }
    }
}
"""

STRIP = r"""
#define MK ((1u << K) - 1u)
#define KM2 (MK | (MK << 16))
#define CLR (~KM2)
__device__ __forceinline__ unsigned tr2(unsigned L, int kind) {
    if (kind == 0) return L;
    if (kind == 1) return L & CLR;
    if (kind == 2) return (L + KM2) & CLR;
    const unsigned neg = (~L >> 15) & 0x00010001u;
    return (L + neg * MK) & CLR;
}
struct Raw { uint4 q; unsigned hl, hr; };
__device__ __forceinline__ Raw ld(const unsigned char *__restrict__ img, int rr, int c0, int H, int W) {
    const unsigned char *row = img + (size_t)min(rr, H - 1) * W;
    Raw x; x.q = __ldg((const uint4 *)(row + c0));
    x.hl = c0 > 0 ? __ldg(row + c0 - 1) : 0u; x.hr = c0 + 16 < W ? __ldg(row + c0 + 16) : 0u;
    return x;
}
__device__ __forceinline__ void pack(const Raw x, unsigned *pp) {
    const unsigned u[4] = {x.q.x, x.q.y, x.q.z, x.q.w};
    unsigned E[4], O[4];
#pragma unroll
    for (int v = 0; v < 4; ++v) { E[v] = __byte_perm(u[v], 0, 0x4240); O[v] = __byte_perm(u[v], 0, 0x4341); }
    pp[0] = __byte_perm(x.hl, O[0], 0x5410);
#pragma unroll
    for (int v = 0; v < 4; ++v) {
        pp[4 * v + 1] = E[v]; pp[4 * v + 2] = O[v];
        if (v < 3) { pp[4 * v + 3] = __funnelshift_r(E[v], E[v + 1], 16); pp[4 * v + 4] = __funnelshift_r(O[v], O[v + 1], 16); }
    }
    pp[15] = __byte_perm(E[3], x.hr, 0x5432);
}
/* a thread streams a strip of S output rows (S + 2 input rows), three raw rows loaded ahead */
extern "C" __global__ void __launch_bounds__(BX) f2t(const unsigned char *__restrict__ img,
        unsigned char *__restrict__ out, int H, int W, int m0, int m1, int m2, int m3, int m4, int m5,
        int m6, int m7, int m8)
{
    const int mv[9] = {m0, m1, m2, m3, m4, m5, m6, m7, m8};
    const int kd[9] = {KD0, KD1, KD2, KD3, KD4, KD5, KD6, KD7, KD8};
    const int gx = blockIdx.x * BX + threadIdx.x;
    const int c0 = gx * 16;
    const int r0 = 1 + blockIdx.y * S;             /* first output row; input rows r0-1 .. r0+S */
    if (c0 >= W - 1 || r0 > H - 2) return;
    const bool full = c0 >= 1 && c0 + 15 <= W - 2;
    unsigned P[3][16];
    Raw raw[3];
#pragma unroll
    for (int u = 0; u < 3; ++u) raw[u] = ld(img, r0 - 1 + u, c0, H, W);
    for (int jb = 0; jb < S + 2; jb += 3) {
#pragma unroll
        for (int u = 0; u < 3; ++u) {
            const int j = jb + u;
            if (j >= S + 2) return;
            pack(raw[u], P[u]);
            if (j + 3 < S + 2) raw[u] = ld(img, r0 - 1 + j + 3, c0, H, W);
            if (j < 2) continue;
            const int r = r0 + j - 2;
            if (r > H - 2) return;
            const unsigned *a[3] = {P[(u + 1) % 3], P[(u + 2) % 3], P[u]};
            unsigned V[16];
#pragma unroll
            for (int g = 0; g < 4; ++g) {
#pragma unroll
                for (int e = 0; e < 2; ++e) {
                    const int i = 4 * g + e;
                    unsigned L = 0x80008000u;
#pragma unroll
                    for (int t = 0; t < 9; ++t) L = tr2((unsigned)mv[t] * a[t / 3][i + t % 3] + L, kd[t]);
                    V[i] = L >> (K + SHIFT);
                }
            }
            unsigned o[4];
#pragma unroll
            for (int g = 0; g < 4; ++g) o[g] = __byte_perm(V[4 * g], V[4 * g + 1], 0x6240);
            unsigned char *orow = out + (size_t)r * W;
            if (full) {
                *(uint4 *)(orow + c0) = make_uint4(o[0], o[1], o[2], o[3]);
            } else {
#pragma unroll
                for (int i = 0; i < 16; ++i)
                    if (c0 + i >= 1 && c0 + i <= W - 2) orow[c0 + i] = (o[i / 4] >> (8 * (i % 4))) & 0xFF;
            }
        }
    }
}
"""


def tap_kinds(m, k: int, specialise: bool) -> list:
    """Per tap: 0 no truncation, 1 floor, 2 ceil, 3 the lane sign test (see the module doc)."""
    if not specialise:
        return [3] * 9
    out = []
    for t in range(9):
        if m[t] % (1 << k) == 0:
            out.append(0)
        elif all(v >= 0 for v in m[: t + 1]):
            out.append(1)
        elif all(v <= 0 for v in m[: t + 1]):
            out.append(2)
        else:
            out.append(3)
    return out


def numba_rows(prob, want, flush):
    """The shipped numba kernels (filter2d/numba_cuda/best_R{R}: the two-lane path and, with
    arith=float, the float path), each built from its design for the preset (``specialise``) and
    launched directly, timed by this probe's method, so that the prototypes and the shipped kernels
    compare under one clock.  (The 4 float columns this probe once added to the two-lane build left
    the product; that build lives in git history at commit 0c317ca.)"""
    from refconv import cuda as rc
    rc.configure("gpu")
    from numba import cuda
    from refconv.backends.numba_cuda import filter2d_best as fb
    img, shift = prob.inputs["image"], prob.options["shift"]
    H, W = img.shape
    d_pad = fb.padded_image(cuda, img)
    d_out = cp.zeros((H, W), np.uint8)
    out8 = cuda.as_cuda_array(d_out.reshape(-1))
    for design, arith in itertools.product(fb.SHIPPED, ("auto", "float")):
        build, wk = fb.specialise(design, prob, arith)
        kern = fb._kernel(build, "gpu")
        grid = fb._grid(H, W, design.rows, 64)
        go = lambda: kern[grid, (64, 1)](d_pad, d_pad.view(np.uint64), out8, out8.view(np.uint32),  # noqa: E731
                                         out8.view(np.uint64), *(wk.dtype.type(v) for v in wk), np.int32(H),
                                         np.int32(W), np.int32(shift), np.float32(2.0 ** -shift))
        d_out.fill(0)
        go(); cuda.synchronize()
        ok = bool(np.array_equal(d_out.get()[1:-1, 1:-1], want))
        med, mn = proto.timed(go, flush) if ok else (None, None)
        print(json.dumps(dict(op="filter2d", mode=f"numba_{build.path}", R=design.rows, BX=64, ok=ok, us=med,
                              us_min=mn)), flush=True)


def main():
    flush = cp.empty(256 << 20, np.uint8)
    prob = presets.PRESETS["filter2d-u8-3x3-3072"].problem()
    img, w = prob.inputs["image"], prob.inputs["weights"].astype(np.float32).reshape(-1)
    shift = prob.options["shift"]
    want = specs.filter2d(img, prob.inputs["weights"], **prob.options)
    H, W = img.shape
    d_img = cp.asarray(img)
    k = next(k for k in range(25) if np.all(w.astype(np.float64) * 2.0 ** k == np.floor(w.astype(np.float64) * 2.0 ** k)))
    m = [int(v) for v in (w.astype(np.float64) * 2.0 ** k)]
    assert 255 * sum(v for v in m if v > 0) < 2 ** 15 and 255 * sum(-v for v in m if v < 0) <= 2 ** 15 and k + shift <= 7
    ints = lambda name, d: [int(v) for v in os.environ.get(name, d).split(",")]  # noqa: E731
    cfgs = [(R, BX, SPEC, CW, MIXF, FTR, HI) for R, BX, SPEC, CW, MIXF, FTR, HI in itertools.product(
        ints("SWAR_R", "1,2,4"), ints("SWAR_BX", "64,128"), ints("SWAR_SPEC", "0,1"), ints("SWAR_CW", "8,16"),
        ints("SWAR_MIXF", "0,4"), ints("SWAR_FTR", "1,2"), ints("SWAR_HI", "0"))
        if not (MIXF and CW == 8) and not (FTR == 2 and not MIXF)]
    for R, BX, SPEC, CW, MIXF, FTR, HI in cfgs:
        kd = tap_kinds(m, k, bool(SPEC))
        opts = ("-std=c++17", f"-DR={R}", f"-DBX={BX}", f"-DK={k}", f"-DSHIFT={shift}", f"-DCW={CW}",
                f"-DMIXF={MIXF}", f"-DFTR={FTR}", f"-DHI={HI}", *(f"-DKD{t}={kd[t]}" for t in range(9)))
        f = cp.RawModule(code=SWAR, options=opts).get_function("f2s")
        d_out = cp.zeros((H, W), np.uint8)
        grid = (-(-(W // CW) // BX), -(-(H - 2) // R))
        go = lambda: f(grid, (BX,), (d_img, d_out, np.int32(H), np.int32(W), *(np.int32(v) for v in m), *w,  # noqa: E731
                                     np.uint32(1 << 17)))
        go()
        ok = bool(np.array_equal(d_out.get()[1:-1, 1:-1], want))
        med, mn = proto.timed(go, flush) if ok else (None, None)
        print(json.dumps(dict(op="filter2d", mode="swar", R=R, BX=BX, SPEC=SPEC, CW=CW, MIXF=MIXF, FTR=FTR, HI=HI, ok=ok,
                              regs=f.num_regs, us=med, us_min=mn)), flush=True)
    for S, BX in itertools.product(ints("STRIP_S", "") if os.environ.get("STRIP_S") else [], ints("STRIP_BX", "32,64,128")):
        kd = tap_kinds(m, k, True)
        opts = ("-std=c++17", f"-DS={S}", f"-DBX={BX}", f"-DK={k}", f"-DSHIFT={shift}",
                *(f"-DKD{t}={kd[t]}" for t in range(9)))
        f = cp.RawModule(code=STRIP, options=opts).get_function("f2t")
        d_out = cp.zeros((H, W), np.uint8)
        grid = (-(-(W // 16) // BX), -(-(H - 2) // S))
        go = lambda: f(grid, (BX,), (d_img, d_out, np.int32(H), np.int32(W), *(np.int32(v) for v in m)))  # noqa: E731
        go()
        ok = bool(np.array_equal(d_out.get()[1:-1, 1:-1], want))
        med, mn = proto.timed(go, flush) if ok else (None, None)
        print(json.dumps(dict(op="filter2d", mode="strip", S=S, BX=BX, ok=ok, regs=f.num_regs, us=med, us_min=mn)),
              flush=True)
    if os.environ.get("SWAR_NUMBA", "1") == "1":
        numba_rows(prob, want, flush)
    if os.environ.get("SWAR_BASELINE", "1") == "0":
        return
    # the baseline of the same process: gpu_proto_probe's kernels
    wi = [int(v) for v in (w.astype(np.float64) * 2.0 ** max(k, 1))]
    for R, BX, TRUNC in itertools.product((2, 4), (64,), (2, 3, 8, 9)):
        mod = cp.RawModule(code=proto.F2D, options=("-std=c++17", f"-DR={R}", f"-DBX={BX}", f"-DTRUNC={TRUNC}",
                                                    "-DPF=1", f"-DK={max(k, 1)}", "-DCW=16"))
        f = mod.get_function("f2d")
        d_out = cp.zeros((H, W), np.uint8)
        grid = (-(-(W // 16) // BX), -(-(H - 2) // R))
        go = lambda: f(grid, (BX,), (d_img, d_out, np.int32(H), np.int32(W), np.int32(shift), *w, *wi))  # noqa: E731
        go()
        ok = bool(np.array_equal(d_out.get()[1:-1, 1:-1], want))
        med, mn = proto.timed(go, flush) if ok or TRUNC in (8, 9) else (None, None)
        print(json.dumps(dict(op="filter2d", mode=f"proto{TRUNC}", R=R, BX=BX, ok=ok, regs=f.num_regs, us=med,
                              us_min=mn)), flush=True)


if __name__ == "__main__":
    main()
