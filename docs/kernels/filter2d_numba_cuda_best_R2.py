# filter2d/numba_cuda/best_R2 on the filter2d-u8-3x3-3072 preset: refconv.backends.numba_cuda.filter2d_best.source(Build(rows=2, path='swar', vec=True, sat=False, k=2, kinds=(1, 3, 3, 3, 3, 0, 3, 3, 3), off32=True, exact=True, max_registers=None)), as cuda.jit compiles it on a GPU.  Generated: .venv/bin/python tests/test_kernel_sources.py
def kern(img8, img64, out8, out32, out64, wg0, wg1, wg2, wg3, wg4, wg5, wg6, wg7, wg8, H, W, shift, sc):
    gx = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    c0 = gx * 16
    r0 = 1 + cuda.blockIdx.y * 2
    if c0 >= W - 1 or r0 > H - 2:
        return
    Wu = uint64(W)
    c0u = uint64(c0)
    gq = uint64(gx) * U2 + UPAD8
    full = c0 >= 1 and c0 + 15 <= W - 2
    W8 = int32(W >> 3)
    gx2 = int32(gx * 2)
    gi2 = int32(gx2 + IPAD8)
    Hm1 = int32(H - 1)
    n0 = wg0
    n1 = wg1
    n2 = wg2
    n3 = wg3
    n4 = wg4
    n5 = wg5
    n6 = wg6
    n7 = wg7
    n8 = wg8
    w0 = int32(-n0)
    w1 = int32(-n1)
    w2 = int32(-n2)
    w3 = int32(-n3)
    w4 = int32(-n4)
    w5 = int32(-n5)
    w6 = int32(-n6)
    w7 = int32(-n7)
    w8 = int32(-n8)
    ks = int32(K + shift)
    nsc = int32(-(1 << (8 - ks)))
    qa0 = mad(r0 - 1 + 0, W8, gi2)
    qu0 = uint64(qa0)
    d0_0 = img64[qu0 + U0]
    d0_1 = img64[qu0 + U1]
    q0_0 = uint32(d0_0 & M32)
    q0_1 = uint32(d0_0 >> U32)
    q0_2 = uint32(d0_1 & M32)
    q0_3 = uint32(d0_1 >> U32)
    h0_0 = uint32(img64[qu0 - U1] >> U32)
    h0_1 = uint32(img64[qu0 + U2] & M32)
    qa1 = mad(r0 - 1 + 1, W8, gi2)
    qu1 = uint64(qa1)
    d1_0 = img64[qu1 + U0]
    d1_1 = img64[qu1 + U1]
    q1_0 = uint32(d1_0 & M32)
    q1_1 = uint32(d1_0 >> U32)
    q1_2 = uint32(d1_1 & M32)
    q1_3 = uint32(d1_1 >> U32)
    h1_0 = uint32(img64[qu1 - U1] >> U32)
    h1_1 = uint32(img64[qu1 + U2] & M32)
    e0 = byte_perm(int32(q0_0), I0, SWE)
    o0 = byte_perm(int32(q0_0), I0, SWO)
    e1 = byte_perm(int32(q0_1), I0, SWE)
    o1 = byte_perm(int32(q0_1), I0, SWO)
    e2 = byte_perm(int32(q0_2), I0, SWE)
    o2 = byte_perm(int32(q0_2), I0, SWO)
    e3 = byte_perm(int32(q0_3), I0, SWE)
    o3 = byte_perm(int32(q0_3), I0, SWO)
    p0_0 = byte_perm(int32(h0_0), o0, SWL)
    p0_1 = e0
    p0_2 = o0
    p0_3 = byte_perm(e0, e1, SWF)
    p0_4 = byte_perm(o0, o1, SWF)
    p0_5 = e1
    p0_6 = o1
    p0_7 = byte_perm(e1, e2, SWF)
    p0_8 = byte_perm(o1, o2, SWF)
    p0_9 = e2
    p0_10 = o2
    p0_11 = byte_perm(e2, e3, SWF)
    p0_12 = byte_perm(o2, o3, SWF)
    p0_13 = e3
    p0_14 = o3
    p0_15 = byte_perm(e3, int32(h0_1), SWR)
    e0 = byte_perm(int32(q1_0), I0, SWE)
    o0 = byte_perm(int32(q1_0), I0, SWO)
    e1 = byte_perm(int32(q1_1), I0, SWE)
    o1 = byte_perm(int32(q1_1), I0, SWO)
    e2 = byte_perm(int32(q1_2), I0, SWE)
    o2 = byte_perm(int32(q1_2), I0, SWO)
    e3 = byte_perm(int32(q1_3), I0, SWE)
    o3 = byte_perm(int32(q1_3), I0, SWO)
    p1_0 = byte_perm(int32(h1_0), o0, SWL)
    p1_1 = e0
    p1_2 = o0
    p1_3 = byte_perm(e0, e1, SWF)
    p1_4 = byte_perm(o0, o1, SWF)
    p1_5 = e1
    p1_6 = o1
    p1_7 = byte_perm(e1, e2, SWF)
    p1_8 = byte_perm(o1, o2, SWF)
    p1_9 = e2
    p1_10 = o2
    p1_11 = byte_perm(e2, e3, SWF)
    p1_12 = byte_perm(o2, o3, SWF)
    p1_13 = e3
    p1_14 = o3
    p1_15 = byte_perm(e3, int32(h1_1), SWR)
    qa2 = mad(r0 - 1 + 2, W8, gi2)
    qu2 = uint64(qa2)
    d2_0 = img64[qu2 + U0]
    d2_1 = img64[qu2 + U1]
    q2_0 = uint32(d2_0 & M32)
    q2_1 = uint32(d2_0 >> U32)
    q2_2 = uint32(d2_1 & M32)
    q2_3 = uint32(d2_1 >> U32)
    h2_0 = uint32(img64[qu2 - U1] >> U32)
    h2_1 = uint32(img64[qu2 + U2] & M32)
    k = 0
    r = r0 + k + 0
    e0 = byte_perm(int32(q2_0), I0, SWE)
    o0 = byte_perm(int32(q2_0), I0, SWO)
    e1 = byte_perm(int32(q2_1), I0, SWE)
    o1 = byte_perm(int32(q2_1), I0, SWO)
    e2 = byte_perm(int32(q2_2), I0, SWE)
    o2 = byte_perm(int32(q2_2), I0, SWO)
    e3 = byte_perm(int32(q2_3), I0, SWE)
    o3 = byte_perm(int32(q2_3), I0, SWO)
    p2_0 = byte_perm(int32(h2_0), o0, SWL)
    p2_1 = e0
    p2_2 = o0
    p2_3 = byte_perm(e0, e1, SWF)
    p2_4 = byte_perm(o0, o1, SWF)
    p2_5 = e1
    p2_6 = o1
    p2_7 = byte_perm(e1, e2, SWF)
    p2_8 = byte_perm(o1, o2, SWF)
    p2_9 = e2
    p2_10 = o2
    p2_11 = byte_perm(e2, e3, SWF)
    p2_12 = byte_perm(o2, o3, SWF)
    p2_13 = e3
    p2_14 = o3
    p2_15 = byte_perm(e3, int32(h2_1), SWR)
    qa2 = mad(r + 2, W8, gi2)
    qu2 = uint64(qa2)
    d2_0 = img64[qu2 + U0]
    d2_1 = img64[qu2 + U1]
    q2_0 = uint32(d2_0 & M32)
    q2_1 = uint32(d2_0 >> U32)
    q2_2 = uint32(d2_1 & M32)
    q2_3 = uint32(d2_1 >> U32)
    h2_0 = uint32(img64[qu2 - U1] >> U32)
    h2_1 = uint32(img64[qu2 + U2] & M32)
    s = mad(n0, p0_0, BIASC)
    s = int32(s | KM2)
    s = mad(n1, p0_1, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    s = mad(n2, p0_2, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    s = mad(n3, p1_0, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    s = mad(n4, p1_1, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    s = mad(n5, p1_2, s)
    s = mad(n6, p2_0, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    s = mad(n7, p2_1, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    s = mad(n8, p2_2, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    v0 = int32(s * nsc + nsc)
    s = mad(n0, p0_1, BIASC)
    s = int32(s | KM2)
    s = mad(n1, p0_2, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    s = mad(n2, p0_3, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    s = mad(n3, p1_1, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    s = mad(n4, p1_2, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    s = mad(n5, p1_3, s)
    s = mad(n6, p2_1, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    s = mad(n7, p2_2, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    s = mad(n8, p2_3, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    v1 = int32(s * nsc + nsc)
    s = mad(n0, p0_4, BIASC)
    s = int32(s | KM2)
    s = mad(n1, p0_5, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    s = mad(n2, p0_6, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    s = mad(n3, p1_4, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    s = mad(n4, p1_5, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    s = mad(n5, p1_6, s)
    s = mad(n6, p2_4, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    s = mad(n7, p2_5, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    s = mad(n8, p2_6, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    v4 = int32(s * nsc + nsc)
    s = mad(n0, p0_5, BIASC)
    s = int32(s | KM2)
    s = mad(n1, p0_6, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    s = mad(n2, p0_7, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    s = mad(n3, p1_5, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    s = mad(n4, p1_6, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    s = mad(n5, p1_7, s)
    s = mad(n6, p2_5, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    s = mad(n7, p2_6, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    s = mad(n8, p2_7, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    v5 = int32(s * nsc + nsc)
    s = mad(n0, p0_8, BIASC)
    s = int32(s | KM2)
    s = mad(n1, p0_9, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    s = mad(n2, p0_10, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    s = mad(n3, p1_8, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    s = mad(n4, p1_9, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    s = mad(n5, p1_10, s)
    s = mad(n6, p2_8, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    s = mad(n7, p2_9, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    s = mad(n8, p2_10, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    v8 = int32(s * nsc + nsc)
    s = mad(n0, p0_9, BIASC)
    s = int32(s | KM2)
    s = mad(n1, p0_10, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    s = mad(n2, p0_11, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    s = mad(n3, p1_9, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    s = mad(n4, p1_10, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    s = mad(n5, p1_11, s)
    s = mad(n6, p2_9, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    s = mad(n7, p2_10, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    s = mad(n8, p2_11, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    v9 = int32(s * nsc + nsc)
    s = mad(n0, p0_12, BIASC)
    s = int32(s | KM2)
    s = mad(n1, p0_13, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    s = mad(n2, p0_14, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    s = mad(n3, p1_12, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    s = mad(n4, p1_13, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    s = mad(n5, p1_14, s)
    s = mad(n6, p2_12, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    s = mad(n7, p2_13, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    s = mad(n8, p2_14, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    v12 = int32(s * nsc + nsc)
    s = mad(n0, p0_13, BIASC)
    s = int32(s | KM2)
    s = mad(n1, p0_14, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    s = mad(n2, p0_15, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    s = mad(n3, p1_13, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    s = mad(n4, p1_14, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    s = mad(n5, p1_15, s)
    s = mad(n6, p2_13, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    s = mad(n7, p2_14, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    s = mad(n8, p2_15, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    v13 = int32(s * nsc + nsc)
    oq = uint64(mad(int32(r), W8, gx2))
    ob = oq * U8
    if full:
        out64[oq + U0] = uint64(uint32(byte_perm(v0, v1, SWW8))) | (uint64(uint32(byte_perm(v4, v5, SWW8))) << U32)
        out64[oq + U1] = uint64(uint32(byte_perm(v8, v9, SWW8))) | (uint64(uint32(byte_perm(v12, v13, SWW8))) << U32)
    else:
        if c0 + 0 >= 1 and c0 + 3 <= W - 2:
            out32[(ob >> U2) + U0] = byte_perm(v0, v1, SWW8)
        else:
            if c0 + 0 >= 1 and c0 + 0 <= W - 2:
                out8[ob + U0] = uint8(uint32(byte_perm(v0, I0, SELZ1)))
            if c0 + 1 >= 1 and c0 + 1 <= W - 2:
                out8[ob + U1] = uint8(uint32(byte_perm(v1, I0, SELZ1)))
            if c0 + 2 >= 1 and c0 + 2 <= W - 2:
                out8[ob + U2] = uint8(uint32(byte_perm(v0, I0, SELZ3)))
            if c0 + 3 >= 1 and c0 + 3 <= W - 2:
                out8[ob + U3] = uint8(uint32(byte_perm(v1, I0, SELZ3)))
        if c0 + 4 >= 1 and c0 + 7 <= W - 2:
            out32[(ob >> U2) + U1] = byte_perm(v4, v5, SWW8)
        else:
            if c0 + 4 >= 1 and c0 + 4 <= W - 2:
                out8[ob + U4] = uint8(uint32(byte_perm(v4, I0, SELZ1)))
            if c0 + 5 >= 1 and c0 + 5 <= W - 2:
                out8[ob + U5] = uint8(uint32(byte_perm(v5, I0, SELZ1)))
            if c0 + 6 >= 1 and c0 + 6 <= W - 2:
                out8[ob + U6] = uint8(uint32(byte_perm(v4, I0, SELZ3)))
            if c0 + 7 >= 1 and c0 + 7 <= W - 2:
                out8[ob + U7] = uint8(uint32(byte_perm(v5, I0, SELZ3)))
        if c0 + 8 >= 1 and c0 + 11 <= W - 2:
            out32[(ob >> U2) + U2] = byte_perm(v8, v9, SWW8)
        else:
            if c0 + 8 >= 1 and c0 + 8 <= W - 2:
                out8[ob + U8] = uint8(uint32(byte_perm(v8, I0, SELZ1)))
            if c0 + 9 >= 1 and c0 + 9 <= W - 2:
                out8[ob + U9] = uint8(uint32(byte_perm(v9, I0, SELZ1)))
            if c0 + 10 >= 1 and c0 + 10 <= W - 2:
                out8[ob + U10] = uint8(uint32(byte_perm(v8, I0, SELZ3)))
            if c0 + 11 >= 1 and c0 + 11 <= W - 2:
                out8[ob + U11] = uint8(uint32(byte_perm(v9, I0, SELZ3)))
        if c0 + 12 >= 1 and c0 + 15 <= W - 2:
            out32[(ob >> U2) + U3] = byte_perm(v12, v13, SWW8)
        else:
            if c0 + 12 >= 1 and c0 + 12 <= W - 2:
                out8[ob + U12] = uint8(uint32(byte_perm(v12, I0, SELZ1)))
            if c0 + 13 >= 1 and c0 + 13 <= W - 2:
                out8[ob + U13] = uint8(uint32(byte_perm(v13, I0, SELZ1)))
            if c0 + 14 >= 1 and c0 + 14 <= W - 2:
                out8[ob + U14] = uint8(uint32(byte_perm(v12, I0, SELZ3)))
            if c0 + 15 >= 1 and c0 + 15 <= W - 2:
                out8[ob + U15] = uint8(uint32(byte_perm(v13, I0, SELZ3)))
    r = r0 + k + 1
    e0 = byte_perm(int32(q2_0), I0, SWE)
    o0 = byte_perm(int32(q2_0), I0, SWO)
    e1 = byte_perm(int32(q2_1), I0, SWE)
    o1 = byte_perm(int32(q2_1), I0, SWO)
    e2 = byte_perm(int32(q2_2), I0, SWE)
    o2 = byte_perm(int32(q2_2), I0, SWO)
    e3 = byte_perm(int32(q2_3), I0, SWE)
    o3 = byte_perm(int32(q2_3), I0, SWO)
    p0_0 = byte_perm(int32(h2_0), o0, SWL)
    p0_1 = e0
    p0_2 = o0
    p0_3 = byte_perm(e0, e1, SWF)
    p0_4 = byte_perm(o0, o1, SWF)
    p0_5 = e1
    p0_6 = o1
    p0_7 = byte_perm(e1, e2, SWF)
    p0_8 = byte_perm(o1, o2, SWF)
    p0_9 = e2
    p0_10 = o2
    p0_11 = byte_perm(e2, e3, SWF)
    p0_12 = byte_perm(o2, o3, SWF)
    p0_13 = e3
    p0_14 = o3
    p0_15 = byte_perm(e3, int32(h2_1), SWR)
    s = mad(n0, p1_0, BIASC)
    s = int32(s | KM2)
    s = mad(n1, p1_1, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    s = mad(n2, p1_2, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    s = mad(n3, p2_0, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    s = mad(n4, p2_1, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    s = mad(n5, p2_2, s)
    s = mad(n6, p0_0, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    s = mad(n7, p0_1, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    s = mad(n8, p0_2, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    v0 = int32(s * nsc + nsc)
    s = mad(n0, p1_1, BIASC)
    s = int32(s | KM2)
    s = mad(n1, p1_2, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    s = mad(n2, p1_3, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    s = mad(n3, p2_1, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    s = mad(n4, p2_2, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    s = mad(n5, p2_3, s)
    s = mad(n6, p0_1, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    s = mad(n7, p0_2, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    s = mad(n8, p0_3, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    v1 = int32(s * nsc + nsc)
    s = mad(n0, p1_4, BIASC)
    s = int32(s | KM2)
    s = mad(n1, p1_5, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    s = mad(n2, p1_6, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    s = mad(n3, p2_4, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    s = mad(n4, p2_5, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    s = mad(n5, p2_6, s)
    s = mad(n6, p0_4, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    s = mad(n7, p0_5, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    s = mad(n8, p0_6, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    v4 = int32(s * nsc + nsc)
    s = mad(n0, p1_5, BIASC)
    s = int32(s | KM2)
    s = mad(n1, p1_6, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    s = mad(n2, p1_7, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    s = mad(n3, p2_5, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    s = mad(n4, p2_6, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    s = mad(n5, p2_7, s)
    s = mad(n6, p0_5, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    s = mad(n7, p0_6, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    s = mad(n8, p0_7, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    v5 = int32(s * nsc + nsc)
    s = mad(n0, p1_8, BIASC)
    s = int32(s | KM2)
    s = mad(n1, p1_9, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    s = mad(n2, p1_10, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    s = mad(n3, p2_8, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    s = mad(n4, p2_9, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    s = mad(n5, p2_10, s)
    s = mad(n6, p0_8, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    s = mad(n7, p0_9, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    s = mad(n8, p0_10, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    v8 = int32(s * nsc + nsc)
    s = mad(n0, p1_9, BIASC)
    s = int32(s | KM2)
    s = mad(n1, p1_10, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    s = mad(n2, p1_11, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    s = mad(n3, p2_9, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    s = mad(n4, p2_10, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    s = mad(n5, p2_11, s)
    s = mad(n6, p0_9, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    s = mad(n7, p0_10, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    s = mad(n8, p0_11, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    v9 = int32(s * nsc + nsc)
    s = mad(n0, p1_12, BIASC)
    s = int32(s | KM2)
    s = mad(n1, p1_13, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    s = mad(n2, p1_14, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    s = mad(n3, p2_12, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    s = mad(n4, p2_13, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    s = mad(n5, p2_14, s)
    s = mad(n6, p0_12, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    s = mad(n7, p0_13, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    s = mad(n8, p0_14, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    v12 = int32(s * nsc + nsc)
    s = mad(n0, p1_13, BIASC)
    s = int32(s | KM2)
    s = mad(n1, p1_14, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    s = mad(n2, p1_15, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    s = mad(n3, p2_13, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    s = mad(n4, p2_14, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    s = mad(n5, p2_15, s)
    s = mad(n6, p0_13, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    s = mad(n7, p0_14, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    s = mad(n8, p0_15, s)
    s = int32((prmt(s, I0, SGNB) * KINV + s) | KM2)
    v13 = int32(s * nsc + nsc)
    oq = uint64(mad(int32(r), W8, gx2))
    ob = oq * U8
    if full:
        out64[oq + U0] = uint64(uint32(byte_perm(v0, v1, SWW8))) | (uint64(uint32(byte_perm(v4, v5, SWW8))) << U32)
        out64[oq + U1] = uint64(uint32(byte_perm(v8, v9, SWW8))) | (uint64(uint32(byte_perm(v12, v13, SWW8))) << U32)
    else:
        if c0 + 0 >= 1 and c0 + 3 <= W - 2:
            out32[(ob >> U2) + U0] = byte_perm(v0, v1, SWW8)
        else:
            if c0 + 0 >= 1 and c0 + 0 <= W - 2:
                out8[ob + U0] = uint8(uint32(byte_perm(v0, I0, SELZ1)))
            if c0 + 1 >= 1 and c0 + 1 <= W - 2:
                out8[ob + U1] = uint8(uint32(byte_perm(v1, I0, SELZ1)))
            if c0 + 2 >= 1 and c0 + 2 <= W - 2:
                out8[ob + U2] = uint8(uint32(byte_perm(v0, I0, SELZ3)))
            if c0 + 3 >= 1 and c0 + 3 <= W - 2:
                out8[ob + U3] = uint8(uint32(byte_perm(v1, I0, SELZ3)))
        if c0 + 4 >= 1 and c0 + 7 <= W - 2:
            out32[(ob >> U2) + U1] = byte_perm(v4, v5, SWW8)
        else:
            if c0 + 4 >= 1 and c0 + 4 <= W - 2:
                out8[ob + U4] = uint8(uint32(byte_perm(v4, I0, SELZ1)))
            if c0 + 5 >= 1 and c0 + 5 <= W - 2:
                out8[ob + U5] = uint8(uint32(byte_perm(v5, I0, SELZ1)))
            if c0 + 6 >= 1 and c0 + 6 <= W - 2:
                out8[ob + U6] = uint8(uint32(byte_perm(v4, I0, SELZ3)))
            if c0 + 7 >= 1 and c0 + 7 <= W - 2:
                out8[ob + U7] = uint8(uint32(byte_perm(v5, I0, SELZ3)))
        if c0 + 8 >= 1 and c0 + 11 <= W - 2:
            out32[(ob >> U2) + U2] = byte_perm(v8, v9, SWW8)
        else:
            if c0 + 8 >= 1 and c0 + 8 <= W - 2:
                out8[ob + U8] = uint8(uint32(byte_perm(v8, I0, SELZ1)))
            if c0 + 9 >= 1 and c0 + 9 <= W - 2:
                out8[ob + U9] = uint8(uint32(byte_perm(v9, I0, SELZ1)))
            if c0 + 10 >= 1 and c0 + 10 <= W - 2:
                out8[ob + U10] = uint8(uint32(byte_perm(v8, I0, SELZ3)))
            if c0 + 11 >= 1 and c0 + 11 <= W - 2:
                out8[ob + U11] = uint8(uint32(byte_perm(v9, I0, SELZ3)))
        if c0 + 12 >= 1 and c0 + 15 <= W - 2:
            out32[(ob >> U2) + U3] = byte_perm(v12, v13, SWW8)
        else:
            if c0 + 12 >= 1 and c0 + 12 <= W - 2:
                out8[ob + U12] = uint8(uint32(byte_perm(v12, I0, SELZ1)))
            if c0 + 13 >= 1 and c0 + 13 <= W - 2:
                out8[ob + U13] = uint8(uint32(byte_perm(v13, I0, SELZ1)))
            if c0 + 14 >= 1 and c0 + 14 <= W - 2:
                out8[ob + U14] = uint8(uint32(byte_perm(v12, I0, SELZ3)))
            if c0 + 15 >= 1 and c0 + 15 <= W - 2:
                out8[ob + U15] = uint8(uint32(byte_perm(v13, I0, SELZ3)))
