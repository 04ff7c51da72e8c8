"""Design probe for issue #24 (filter2d and sobel roofline): CUDA C prototypes of the best_R kernels
compiled with CuPy (NVRTC), each checked bit for bit against the spec on the preset, then timed
with an L2 flush and CUDA events (median of 30).  Prints one JSON line per configuration.

filter2d's TRUNC modes (how ``(float)(int)s`` is taken a tap): 0 the round-toward-zero add every tap,
1 ``truncf`` every tap, 2 the two alternating (the shipped kernels), 5 ``truncf`` on 2 taps of 8;
3 the exact sums as int32 in units of 2^-K every column, 4 that on the left half of the columns and 2
on the right half; floor probes, timed though they are not the spec: 8 the loads and stores alone (the
centre pixel), 9 the FMA chain without truncations.

CW (PROTO_CW=8,16): output columns a thread.

With PROTO_TRUNC set, PROTO_R (default 2,4) and PROTO_PF (default 1) choose rows and prefetch.

usage: [PROTO_TRUNC=2,3,4,5] [PROTO_CW=8,16] [PROTO_R=2,4,8] [PROTO_PF=0,1] python lab/probes/gpu_proto_probe.py [filter2d] [sobel]
"""
from __future__ import annotations

import itertools
import json
import os
import sys

import cupy as cp
import numpy as np

from refconv import specs
from refconv.bench import presets

F2D = r"""
#define MF 8388608.0f
__device__ __forceinline__ float cvb(unsigned w, unsigned k) {      /* byte k of w, as a float */
    return __int_as_float(__byte_perm(w, 0x4B000000u, 0x7540u | k)) - MF;
}
__device__ __forceinline__ float tr(float s, int t) {               /* (float)(int)s, |s| < 2^22 */
#if TRUNC == 1
    return truncf(s);
#elif TRUNC == 2 || TRUNC == 4
    if (t & 1) return truncf(s);
    return copysignf(__fadd_rz(fabsf(s), MF) - MF, s);
#elif TRUNC == 9
    return s;                                                        /* no truncation: not the spec (a floor probe) */
#elif TRUNC == 5
    if (t % 3 == 2) return truncf(s);                                /* 2 of 8 taps on the conversion unit */
    return copysignf(__fadd_rz(fabsf(s), MF) - MF, s);
#else
    return copysignf(__fadd_rz(fabsf(s), MF) - MF, s);
#endif
}
/* TRUNC 3 (every column) and 4 (columns 0-7; 8-15 as TRUNC 2): the exact sums as int32 in units of
   2^-K (weights W = w * 2^K, integers): t = S + (S < 0 ? 2^K - 1 : 0), S = W * x + (t & -2^K) */
__device__ __forceinline__ int col_int(const int *wi, const int *x, int shift) {
    int S = wi[0] * x[0];
#pragma unroll
    for (int t = 1; t < 9; ++t) {
        const int tt = S + (int)((unsigned)S >> (32 - K));
        S = wi[t] * x[t] + (tt & -(1 << K));
    }
    const int tt = S + (int)((unsigned)S >> (32 - K));
    return (tt >> (K + shift)) & 0xFF;
}
#ifndef CW
#define CW 16
#endif
#if CW == 16
typedef uint4 VT;
#define UNPACK(qq) {qq.x, qq.y, qq.z, qq.w}
#else
typedef uint2 VT;
#define UNPACK(qq) {qq.x, qq.y}
#endif
extern "C" __global__ void __launch_bounds__(BX) f2d(const unsigned char *__restrict__ img,
        unsigned char *__restrict__ out, int H, int W, int shift, float w0, float w1, float w2, float w3,
        float w4, float w5, float w6, float w7, float w8, int i0, int i1, int i2, int i3, int i4, int i5,
        int i6, int i7, int i8)
{
    const float wv[9] = {w0, w1, w2, w3, w4, w5, w6, w7, w8};
    const int wi[9] = {i0, i1, i2, i3, i4, i5, i6, i7, i8};
    const int gx = blockIdx.x * BX + threadIdx.x;
    const int c0 = gx * CW;
    const int r0 = 1 + blockIdx.y * R;
    if (c0 >= W - 1 || r0 > H - 2) return;
    float p[3][CW + 2];
    int pi[3][CW + 2];
#if PF
    VT q[R + 2]; unsigned char hl[R + 2], hr[R + 2];
#pragma unroll
    for (int j = 0; j < R + 2; ++j) {
        const int rr = min(r0 - 1 + j, H - 1);
        const unsigned char *row = img + (size_t)rr * W;
        q[j] = __ldg((const VT *)(row + c0));
        hl[j] = c0 > 0 ? __ldg(row + c0 - 1) : 0;
        hr[j] = c0 + CW < W ? __ldg(row + c0 + CW) : 0;
    }
#define ROWQ(j) q[j]
#define ROWL(j) hl[j]
#define ROWR(j) hr[j]
#endif
#pragma unroll
    for (int j = 0; j < R + 2; ++j) {
#if !PF
        const int rr = min(r0 - 1 + j, H - 1);
        const unsigned char *row = img + (size_t)rr * W;
        const VT qq = __ldg((const VT *)(row + c0));
        const unsigned char l = c0 > 0 ? __ldg(row + c0 - 1) : 0, rgt = c0 + CW < W ? __ldg(row + c0 + CW) : 0;
#else
        const VT qq = q[j]; const unsigned char l = hl[j], rgt = hr[j];
#endif
        float *pp = p[j % 3];
        int *pn = pi[j % 3];
        const unsigned u[CW / 4] = UNPACK(qq);
#if TRUNC == 3 || TRUNC == 4 || TRUNC == 8
        pn[0] = l;
#pragma unroll
        for (int i = 0; i < CW; ++i) pn[i + 1] = __byte_perm(u[i / 4], 0, 0x4440u | (i % 4));
        pn[CW + 1] = rgt;
#endif
#if TRUNC != 3 && TRUNC != 8
        pp[0] = __int_as_float(0x4B000000u | l) - MF;
#pragma unroll
        for (int i = (TRUNC == 4 ? CW / 2 - 1 : 0); i < CW; ++i) pp[i + 1] = cvb(u[i / 4], i % 4);
        pp[CW + 1] = __int_as_float(0x4B000000u | rgt) - MF;
#endif
        if (j < 2) continue;
        const int r = r0 + j - 2;
        if (r > H - 2) return;
        const float *a0 = p[(j - 2) % 3], *a1 = p[(j - 1) % 3], *a2 = p[j % 3];
        unsigned o[4] = {0, 0, 0, 0};
        const int *n0 = pi[(j - 2) % 3], *n1 = pi[(j - 1) % 3], *n2 = pi[j % 3];
#pragma unroll
        for (int i = 0; i < CW; ++i) {
            if (TRUNC == 8) {          /* the centre pixel: the loads and stores alone (a floor probe) */
                o[i / 4] |= (unsigned)n1[i + 1] << (8 * (i % 4));
                continue;
            }
            if (TRUNC == 3 || (TRUNC == 4 && i < CW / 2)) {
                const int xi[9] = {n0[i], n0[i + 1], n0[i + 2], n1[i], n1[i + 1], n1[i + 2], n2[i], n2[i + 1], n2[i + 2]};
                o[i / 4] |= (unsigned)col_int(wi, xi, shift) << (8 * (i % 4));
                continue;
            }
            const float x[9] = {a0[i], a0[i + 1], a0[i + 2], a1[i], a1[i + 1], a1[i + 2], a2[i], a2[i + 1], a2[i + 2]};
            float s = __fmul_rn(wv[0], x[0]);
#pragma unroll
            for (int t = 1; t < 9; ++t) s = __fmaf_rn(wv[t], x[t], tr(s, t));
            const int f = __float_as_int(__fadd_rz(fabsf(s), MF)) - 0x4B000000;
            const int v = ((s < 0.0f ? -f : f) >> shift) & 0xFF;
            o[i / 4] |= (unsigned)v << (8 * (i % 4));
        }
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

SOBEL = r"""
__device__ __forceinline__ float cv(unsigned x) { return __int_as_float(0x4B000000u | x) - 8388608.0f; }
__device__ __forceinline__ float gw(unsigned u) {
    return __fadd_rn(__fadd_rn(__fmul_rn(0.299f, cv(u & 0xFF)), __fmul_rn(0.587f, cv((u >> 8) & 0xFF))),
                     __fmul_rn(0.114f, cv((u >> 16) & 0xFF)));
}
extern "C" __global__ void __launch_bounds__(BX) sob(const unsigned *__restrict__ img, unsigned char *__restrict__ out,
                                                      int H, int W)
{
    const int c0 = (blockIdx.x * BX + threadIdx.x) * CW;
    const int r0 = 1 + blockIdx.y * R;
    if (c0 >= W - 1 || r0 > H - 2) return;
    float p[3][CW + 2];
#pragma unroll
    for (int j = 0; j < R + 2; ++j) {
        const int rr = min(r0 - 1 + j, H - 1);
        const unsigned *row = img + (size_t)rr * W;
        float *pp = p[j % 3];
#pragma unroll
        for (int v = 0; v < CW / 4; ++v) {
            const uint4 q = __ldg((const uint4 *)(row + c0) + v);
            pp[4 * v + 1] = gw(q.x); pp[4 * v + 2] = gw(q.y); pp[4 * v + 3] = gw(q.z); pp[4 * v + 4] = gw(q.w);
        }
        pp[0] = c0 > 0 ? gw(__ldg(row + c0 - 1)) : 0.0f;
        pp[CW + 1] = c0 + CW < W ? gw(__ldg(row + c0 + CW)) : 0.0f;
        if (j < 2) continue;
        const int r = r0 + j - 2;
        if (r > H - 2) return;
        const float *a0 = p[(j - 2) % 3], *a1 = p[(j - 1) % 3], *a2 = p[j % 3];
        unsigned o[CW / 4];
#pragma unroll
        for (int i = 0; i < CW; ++i) {
            float gx = __fadd_rn(-a0[i], a0[i + 2]);
            gx = __fmaf_rn(-2.0f, a1[i], gx); gx = __fmaf_rn(2.0f, a1[i + 2], gx);
            gx = __fsub_rn(gx, a2[i]); gx = __fadd_rn(gx, a2[i + 2]);
            float gy = __fadd_rn(-a0[i], a2[i]);
            gy = __fmaf_rn(-2.0f, a0[i + 1], gy); gy = __fmaf_rn(2.0f, a2[i + 1], gy);
            gy = __fsub_rn(gy, a0[i + 2]); gy = __fadd_rn(gy, a2[i + 2]);
            const float m = __fadd_rn(fabsf(gx), fabsf(gy));
            const unsigned b = (unsigned)min(__float2int_rz(m), 255);
            if (i % 4 == 0) o[i / 4] = b; else o[i / 4] |= b << (8 * (i % 4));
        }
        unsigned char *orow = out + (size_t)r * W;
        if (c0 >= 1 && c0 + CW - 1 <= W - 2) {
#pragma unroll
            for (int v = 0; v < CW / 4; ++v) ((unsigned *)(orow + c0))[v] = o[v];
        } else {
#pragma unroll
            for (int i = 0; i < CW; ++i)
                if (c0 + i >= 1 && c0 + i <= W - 2) orow[c0 + i] = (o[i / 4] >> (8 * (i % 4))) & 0xFF;
        }
    }
}
"""


def timed(launch, flush, repeat=30):
    ts = []
    for _ in range(repeat):
        flush.fill(1)
        a, b = cp.cuda.Event(), cp.cuda.Event()
        a.record()
        launch()
        b.record()
        b.synchronize()
        ts.append(cp.cuda.get_elapsed_time(a, b) * 1e3)
    return float(np.median(ts)), float(np.min(ts))


def probe_filter2d(flush):
    prob = presets.PRESETS["filter2d-u8-3x3-3072"].problem()
    img, w = prob.inputs["image"], prob.inputs["weights"].astype(np.float32).reshape(-1)
    want = specs.filter2d(img, prob.inputs["weights"], **prob.options)
    H, W = img.shape
    d_img = cp.asarray(img)
    kexp = next(k for k in range(25) if np.all(w.astype(np.float64) * 2.0 ** k == np.floor(w.astype(np.float64) * 2.0 ** k)))
    kexp = max(kexp, 1)
    wi = (w.astype(np.float64) * 2.0 ** kexp).astype(np.int32)
    configs = [c for c in itertools.product((2, 4, 8), (64, 96, 128, 192), (0, 1, 2), (0, 1))
               if not c[2] or (c[0] == 4 and c[1] in (64, 192))]
    if os.environ.get("PROTO_TRUNC"):      # PROTO_TRUNC=2,3,4,5: only those arithmetic modes, PROTO_R rows, BX 64/128
        ints = lambda name, d: [int(m) for m in os.environ.get(name, d).split(",")]  # noqa: E731
        configs = list(itertools.product(ints("PROTO_R", "2,4"), (64, 128), ints("PROTO_TRUNC", ""), ints("PROTO_PF", "1")))
    cws = [int(c) for c in os.environ.get("PROTO_CW", "16").split(",")]
    for (R, BX, TRUNC, PF), CW in itertools.product(configs, cws):
        mod = cp.RawModule(code=F2D, options=("-std=c++17", f"-DR={R}", f"-DBX={BX}", f"-DTRUNC={TRUNC}", f"-DPF={PF}",
                                              f"-DK={kexp}", f"-DCW={CW}"))
        k = mod.get_function("f2d")
        d_out = cp.zeros((H, W), np.uint8)
        grid = (-(-(W // CW) // BX), -(-(H - 2) // R))
        go = lambda: k(grid, (BX,), (d_img, d_out, np.int32(H), np.int32(W), np.int32(4), *w, *wi))  # noqa: E731
        go()
        got = d_out.get()[1:-1, 1:-1]
        ok = bool(np.array_equal(got, want))
        med, mn = timed(go, flush) if ok or TRUNC in (8, 9) else (None, None)
        regs = k.num_regs
        print(json.dumps(dict(op="filter2d", R=R, BX=BX, TRUNC=TRUNC, PF=PF, CW=CW, ok=ok, regs=regs, us=med, us_min=mn)), flush=True)


def probe_sobel(flush):
    prob = presets.PRESETS["sobel-4096x3072"].problem()
    img = prob.inputs["image"]
    want = specs.sobel(img, **prob.options)
    H, W = img.shape[:2]
    d_img = cp.asarray(img).view(cp.uint32).reshape(H, W)
    for R, BX, CW in itertools.product((4, 8, 16), (64, 128, 256), (4, 8)):
        mod = cp.RawModule(code=SOBEL, options=("-std=c++17", f"-DR={R}", f"-DBX={BX}", f"-DCW={CW}"))
        k = mod.get_function("sob")
        d_out = cp.zeros((H, W), np.uint8)
        grid = (-(-(W // CW) // BX), -(-(H - 2) // R))
        go = lambda: k(grid, (BX,), (d_img, d_out, np.int32(H), np.int32(W)))  # noqa: E731
        go()
        ok = bool(np.array_equal(d_out.get()[1:-1, 1:-1], want))
        med, mn = timed(go, flush) if ok else (None, None)
        print(json.dumps(dict(op="sobel", R=R, BX=BX, CW=CW, ok=ok, regs=k.num_regs, us=med, us_min=mn)), flush=True)


if __name__ == "__main__":
    flush = cp.empty(256 << 20, np.uint8)
    x = cp.empty(1 << 28, np.uint8)
    a, b = cp.cuda.Event(), cp.cuda.Event()
    a.record(); cp.copyto(x[: 1 << 27], x[1 << 27:]); b.record(); b.synchronize()
    print(json.dumps({"copy_GBps": 2 * (1 << 27) / (cp.cuda.get_elapsed_time(a, b) * 1e-3) / 1e9}))
    which = sys.argv[1:] or ["filter2d", "sobel"]
    if "filter2d" in which:
        probe_filter2d(flush)
    if "sobel" in which:
        probe_sobel(flush)
