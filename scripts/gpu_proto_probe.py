"""Design probe for issue #24 (filter2d and sobel roofline): CUDA C prototypes of the best_R kernels
compiled with CuPy (NVRTC), each checked bit for bit against the spec on the preset, then timed
with an L2 flush and CUDA events (median of 30).  Prints one JSON line per configuration.

usage: python scripts/gpu_proto_probe.py [filter2d] [sobel]
"""
from __future__ import annotations

import itertools
import json
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
#elif TRUNC == 2
    if (t & 1) return truncf(s);
    return copysignf(__fadd_rz(fabsf(s), MF) - MF, s);
#else
    return copysignf(__fadd_rz(fabsf(s), MF) - MF, s);
#endif
}
extern "C" __global__ void __launch_bounds__(BX) f2d(const unsigned char *__restrict__ img,
        unsigned char *__restrict__ out, int H, int W, int shift, float w0, float w1, float w2, float w3,
        float w4, float w5, float w6, float w7, float w8)
{
    const float wv[9] = {w0, w1, w2, w3, w4, w5, w6, w7, w8};
    const int gx = blockIdx.x * BX + threadIdx.x;
    const int c0 = gx * 16;
    const int r0 = 1 + blockIdx.y * R;
    if (c0 >= W - 1 || r0 > H - 2) return;
    float p[3][18];
#if PF
    uint4 q[R + 2]; unsigned char hl[R + 2], hr[R + 2];
#pragma unroll
    for (int j = 0; j < R + 2; ++j) {
        const int rr = min(r0 - 1 + j, H - 1);
        const unsigned char *row = img + (size_t)rr * W;
        q[j] = __ldg((const uint4 *)(row + c0));
        hl[j] = c0 > 0 ? __ldg(row + c0 - 1) : 0;
        hr[j] = c0 + 16 < W ? __ldg(row + c0 + 16) : 0;
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
        const uint4 qq = __ldg((const uint4 *)(row + c0));
        const unsigned char l = c0 > 0 ? __ldg(row + c0 - 1) : 0, rgt = c0 + 16 < W ? __ldg(row + c0 + 16) : 0;
#else
        const uint4 qq = q[j]; const unsigned char l = hl[j], rgt = hr[j];
#endif
        float *pp = p[j % 3];
        pp[0] = __int_as_float(0x4B000000u | l) - MF;
        const unsigned u[4] = {qq.x, qq.y, qq.z, qq.w};
#pragma unroll
        for (int i = 0; i < 16; ++i) pp[i + 1] = cvb(u[i / 4], i % 4);
        pp[17] = __int_as_float(0x4B000000u | rgt) - MF;
        if (j < 2) continue;
        const int r = r0 + j - 2;
        if (r > H - 2) return;
        const float *a0 = p[(j - 2) % 3], *a1 = p[(j - 1) % 3], *a2 = p[j % 3];
        unsigned o[4] = {0, 0, 0, 0};
#pragma unroll
        for (int i = 0; i < 16; ++i) {
            const float x[9] = {a0[i], a0[i + 1], a0[i + 2], a1[i], a1[i + 1], a1[i + 2], a2[i], a2[i + 1], a2[i + 2]};
            float s = __fmul_rn(wv[0], x[0]);
#pragma unroll
            for (int t = 1; t < 9; ++t) s = __fmaf_rn(wv[t], x[t], tr(s, t));
            const int f = __float_as_int(__fadd_rz(fabsf(s), MF)) - 0x4B000000;
            const int v = ((s < 0.0f ? -f : f) >> shift) & 0xFF;
            o[i / 4] |= (unsigned)v << (8 * (i % 4));
        }
        unsigned char *orow = out + (size_t)r * W;
        if (c0 >= 1 && c0 + 15 <= W - 2) {
            *(uint4 *)(orow + c0) = make_uint4(o[0], o[1], o[2], o[3]);
        } else {
#pragma unroll
            for (int i = 0; i < 16; ++i)
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
    for R, BX, TRUNC, PF in itertools.product((2, 4, 8), (64, 96, 128, 192), (0, 1, 2), (0, 1)):
        if TRUNC and (R != 4 or BX not in (64, 192)):
            continue
        mod = cp.RawModule(code=F2D, options=("-std=c++17", f"-DR={R}", f"-DBX={BX}", f"-DTRUNC={TRUNC}", f"-DPF={PF}"))
        k = mod.get_function("f2d")
        d_out = cp.zeros((H, W), np.uint8)
        grid = (-(-(W // 16) // BX), -(-(H - 2) // R))
        go = lambda: k(grid, (BX,), (d_img, d_out, np.int32(H), np.int32(W), np.int32(4), *w))  # noqa: E731
        go()
        got = d_out.get()[1:-1, 1:-1]
        ok = bool(np.array_equal(got, want))
        med, mn = timed(go, flush) if ok else (None, None)
        regs = k.num_regs
        print(json.dumps(dict(op="filter2d", R=R, BX=BX, TRUNC=TRUNC, PF=PF, ok=ok, regs=regs, us=med, us_min=mn)), flush=True)


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
