# sobel/numba_cuda/best_R4 on the sobel-4096x3072 preset: refconv.backends.numba_cuda.sobel_best.source(Build(rows=4, ch=4, l2=False, vec=True, max_registers=None)), as cuda.jit compiles it on a GPU.  Generated: .venv/bin/python tests/test_kernel_sources.py
def kern(img8, img32, img64, out8, out32, H, W):
    c0 = (cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x) * 8
    r0 = 1 + cuda.blockIdx.y * 4
    if c0 >= W - 1 or r0 > H - 2:
        return
    Wu = uint64(W)
    c0u = uint64(c0)
    full = c0 >= 1 and c0 + 7 <= W - 2
    rr = r0 - 1
    pb = uint64(rr) * Wu + c0u
    q0 = img64[(pb >> X1) + X0]
    q1 = img64[(pb >> X1) + X1]
    q2 = img64[(pb >> X1) + X2]
    q3 = img64[(pb >> X1) + X3]
    um = img32[pb - X1] if c0 > 0 else U0
    up = img32[pb + X8] if c0 + 8 < W else U0
    p0_0 = fadd(fadd(fma(C0, int_as_float(byte_perm(int32(um), MAGI, SEL0)), NC0M), fma(C1, int_as_float(byte_perm(int32(um), MAGI, SEL1)), NC1M)), fma(C2, int_as_float(byte_perm(int32(um), MAGI, SEL2)), NC2M))
    p0_1 = fadd(fadd(fma(C0, int_as_float(byte_perm(int32(uint32(q0 & LO)), MAGI, SEL0)), NC0M), fma(C1, int_as_float(byte_perm(int32(uint32(q0 & LO)), MAGI, SEL1)), NC1M)), fma(C2, int_as_float(byte_perm(int32(uint32(q0 & LO)), MAGI, SEL2)), NC2M))
    p0_2 = fadd(fadd(fma(C0, int_as_float(byte_perm(int32(uint32(q0 >> S32)), MAGI, SEL0)), NC0M), fma(C1, int_as_float(byte_perm(int32(uint32(q0 >> S32)), MAGI, SEL1)), NC1M)), fma(C2, int_as_float(byte_perm(int32(uint32(q0 >> S32)), MAGI, SEL2)), NC2M))
    p0_3 = fadd(fadd(fma(C0, int_as_float(byte_perm(int32(uint32(q1 & LO)), MAGI, SEL0)), NC0M), fma(C1, int_as_float(byte_perm(int32(uint32(q1 & LO)), MAGI, SEL1)), NC1M)), fma(C2, int_as_float(byte_perm(int32(uint32(q1 & LO)), MAGI, SEL2)), NC2M))
    p0_4 = fadd(fadd(fma(C0, int_as_float(byte_perm(int32(uint32(q1 >> S32)), MAGI, SEL0)), NC0M), fma(C1, int_as_float(byte_perm(int32(uint32(q1 >> S32)), MAGI, SEL1)), NC1M)), fma(C2, int_as_float(byte_perm(int32(uint32(q1 >> S32)), MAGI, SEL2)), NC2M))
    p0_5 = fadd(fadd(fma(C0, int_as_float(byte_perm(int32(uint32(q2 & LO)), MAGI, SEL0)), NC0M), fma(C1, int_as_float(byte_perm(int32(uint32(q2 & LO)), MAGI, SEL1)), NC1M)), fma(C2, int_as_float(byte_perm(int32(uint32(q2 & LO)), MAGI, SEL2)), NC2M))
    p0_6 = fadd(fadd(fma(C0, int_as_float(byte_perm(int32(uint32(q2 >> S32)), MAGI, SEL0)), NC0M), fma(C1, int_as_float(byte_perm(int32(uint32(q2 >> S32)), MAGI, SEL1)), NC1M)), fma(C2, int_as_float(byte_perm(int32(uint32(q2 >> S32)), MAGI, SEL2)), NC2M))
    p0_7 = fadd(fadd(fma(C0, int_as_float(byte_perm(int32(uint32(q3 & LO)), MAGI, SEL0)), NC0M), fma(C1, int_as_float(byte_perm(int32(uint32(q3 & LO)), MAGI, SEL1)), NC1M)), fma(C2, int_as_float(byte_perm(int32(uint32(q3 & LO)), MAGI, SEL2)), NC2M))
    p0_8 = fadd(fadd(fma(C0, int_as_float(byte_perm(int32(uint32(q3 >> S32)), MAGI, SEL0)), NC0M), fma(C1, int_as_float(byte_perm(int32(uint32(q3 >> S32)), MAGI, SEL1)), NC1M)), fma(C2, int_as_float(byte_perm(int32(uint32(q3 >> S32)), MAGI, SEL2)), NC2M))
    p0_9 = fadd(fadd(fma(C0, int_as_float(byte_perm(int32(up), MAGI, SEL0)), NC0M), fma(C1, int_as_float(byte_perm(int32(up), MAGI, SEL1)), NC1M)), fma(C2, int_as_float(byte_perm(int32(up), MAGI, SEL2)), NC2M))
    rr = r0
    pb = uint64(rr) * Wu + c0u
    q0 = img64[(pb >> X1) + X0]
    q1 = img64[(pb >> X1) + X1]
    q2 = img64[(pb >> X1) + X2]
    q3 = img64[(pb >> X1) + X3]
    um = img32[pb - X1] if c0 > 0 else U0
    up = img32[pb + X8] if c0 + 8 < W else U0
    p1_0 = fadd(fadd(fma(C0, int_as_float(byte_perm(int32(um), MAGI, SEL0)), NC0M), fma(C1, int_as_float(byte_perm(int32(um), MAGI, SEL1)), NC1M)), fma(C2, int_as_float(byte_perm(int32(um), MAGI, SEL2)), NC2M))
    p1_1 = fadd(fadd(fma(C0, int_as_float(byte_perm(int32(uint32(q0 & LO)), MAGI, SEL0)), NC0M), fma(C1, int_as_float(byte_perm(int32(uint32(q0 & LO)), MAGI, SEL1)), NC1M)), fma(C2, int_as_float(byte_perm(int32(uint32(q0 & LO)), MAGI, SEL2)), NC2M))
    p1_2 = fadd(fadd(fma(C0, int_as_float(byte_perm(int32(uint32(q0 >> S32)), MAGI, SEL0)), NC0M), fma(C1, int_as_float(byte_perm(int32(uint32(q0 >> S32)), MAGI, SEL1)), NC1M)), fma(C2, int_as_float(byte_perm(int32(uint32(q0 >> S32)), MAGI, SEL2)), NC2M))
    p1_3 = fadd(fadd(fma(C0, int_as_float(byte_perm(int32(uint32(q1 & LO)), MAGI, SEL0)), NC0M), fma(C1, int_as_float(byte_perm(int32(uint32(q1 & LO)), MAGI, SEL1)), NC1M)), fma(C2, int_as_float(byte_perm(int32(uint32(q1 & LO)), MAGI, SEL2)), NC2M))
    p1_4 = fadd(fadd(fma(C0, int_as_float(byte_perm(int32(uint32(q1 >> S32)), MAGI, SEL0)), NC0M), fma(C1, int_as_float(byte_perm(int32(uint32(q1 >> S32)), MAGI, SEL1)), NC1M)), fma(C2, int_as_float(byte_perm(int32(uint32(q1 >> S32)), MAGI, SEL2)), NC2M))
    p1_5 = fadd(fadd(fma(C0, int_as_float(byte_perm(int32(uint32(q2 & LO)), MAGI, SEL0)), NC0M), fma(C1, int_as_float(byte_perm(int32(uint32(q2 & LO)), MAGI, SEL1)), NC1M)), fma(C2, int_as_float(byte_perm(int32(uint32(q2 & LO)), MAGI, SEL2)), NC2M))
    p1_6 = fadd(fadd(fma(C0, int_as_float(byte_perm(int32(uint32(q2 >> S32)), MAGI, SEL0)), NC0M), fma(C1, int_as_float(byte_perm(int32(uint32(q2 >> S32)), MAGI, SEL1)), NC1M)), fma(C2, int_as_float(byte_perm(int32(uint32(q2 >> S32)), MAGI, SEL2)), NC2M))
    p1_7 = fadd(fadd(fma(C0, int_as_float(byte_perm(int32(uint32(q3 & LO)), MAGI, SEL0)), NC0M), fma(C1, int_as_float(byte_perm(int32(uint32(q3 & LO)), MAGI, SEL1)), NC1M)), fma(C2, int_as_float(byte_perm(int32(uint32(q3 & LO)), MAGI, SEL2)), NC2M))
    p1_8 = fadd(fadd(fma(C0, int_as_float(byte_perm(int32(uint32(q3 >> S32)), MAGI, SEL0)), NC0M), fma(C1, int_as_float(byte_perm(int32(uint32(q3 >> S32)), MAGI, SEL1)), NC1M)), fma(C2, int_as_float(byte_perm(int32(uint32(q3 >> S32)), MAGI, SEL2)), NC2M))
    p1_9 = fadd(fadd(fma(C0, int_as_float(byte_perm(int32(up), MAGI, SEL0)), NC0M), fma(C1, int_as_float(byte_perm(int32(up), MAGI, SEL1)), NC1M)), fma(C2, int_as_float(byte_perm(int32(up), MAGI, SEL2)), NC2M))
    rr = r0 + 1
    pb = uint64(rr) * Wu + c0u
    q0 = img64[(pb >> X1) + X0]
    q1 = img64[(pb >> X1) + X1]
    q2 = img64[(pb >> X1) + X2]
    q3 = img64[(pb >> X1) + X3]
    um = img32[pb - X1] if c0 > 0 else U0
    up = img32[pb + X8] if c0 + 8 < W else U0
    for k in range(0, 4, 3):
        r = r0 + k + 0
        if r > H - 2:
            return
        p2_0 = fadd(fadd(fma(C0, int_as_float(byte_perm(int32(um), MAGI, SEL0)), NC0M), fma(C1, int_as_float(byte_perm(int32(um), MAGI, SEL1)), NC1M)), fma(C2, int_as_float(byte_perm(int32(um), MAGI, SEL2)), NC2M))
        p2_1 = fadd(fadd(fma(C0, int_as_float(byte_perm(int32(uint32(q0 & LO)), MAGI, SEL0)), NC0M), fma(C1, int_as_float(byte_perm(int32(uint32(q0 & LO)), MAGI, SEL1)), NC1M)), fma(C2, int_as_float(byte_perm(int32(uint32(q0 & LO)), MAGI, SEL2)), NC2M))
        p2_2 = fadd(fadd(fma(C0, int_as_float(byte_perm(int32(uint32(q0 >> S32)), MAGI, SEL0)), NC0M), fma(C1, int_as_float(byte_perm(int32(uint32(q0 >> S32)), MAGI, SEL1)), NC1M)), fma(C2, int_as_float(byte_perm(int32(uint32(q0 >> S32)), MAGI, SEL2)), NC2M))
        p2_3 = fadd(fadd(fma(C0, int_as_float(byte_perm(int32(uint32(q1 & LO)), MAGI, SEL0)), NC0M), fma(C1, int_as_float(byte_perm(int32(uint32(q1 & LO)), MAGI, SEL1)), NC1M)), fma(C2, int_as_float(byte_perm(int32(uint32(q1 & LO)), MAGI, SEL2)), NC2M))
        p2_4 = fadd(fadd(fma(C0, int_as_float(byte_perm(int32(uint32(q1 >> S32)), MAGI, SEL0)), NC0M), fma(C1, int_as_float(byte_perm(int32(uint32(q1 >> S32)), MAGI, SEL1)), NC1M)), fma(C2, int_as_float(byte_perm(int32(uint32(q1 >> S32)), MAGI, SEL2)), NC2M))
        p2_5 = fadd(fadd(fma(C0, int_as_float(byte_perm(int32(uint32(q2 & LO)), MAGI, SEL0)), NC0M), fma(C1, int_as_float(byte_perm(int32(uint32(q2 & LO)), MAGI, SEL1)), NC1M)), fma(C2, int_as_float(byte_perm(int32(uint32(q2 & LO)), MAGI, SEL2)), NC2M))
        p2_6 = fadd(fadd(fma(C0, int_as_float(byte_perm(int32(uint32(q2 >> S32)), MAGI, SEL0)), NC0M), fma(C1, int_as_float(byte_perm(int32(uint32(q2 >> S32)), MAGI, SEL1)), NC1M)), fma(C2, int_as_float(byte_perm(int32(uint32(q2 >> S32)), MAGI, SEL2)), NC2M))
        p2_7 = fadd(fadd(fma(C0, int_as_float(byte_perm(int32(uint32(q3 & LO)), MAGI, SEL0)), NC0M), fma(C1, int_as_float(byte_perm(int32(uint32(q3 & LO)), MAGI, SEL1)), NC1M)), fma(C2, int_as_float(byte_perm(int32(uint32(q3 & LO)), MAGI, SEL2)), NC2M))
        p2_8 = fadd(fadd(fma(C0, int_as_float(byte_perm(int32(uint32(q3 >> S32)), MAGI, SEL0)), NC0M), fma(C1, int_as_float(byte_perm(int32(uint32(q3 >> S32)), MAGI, SEL1)), NC1M)), fma(C2, int_as_float(byte_perm(int32(uint32(q3 >> S32)), MAGI, SEL2)), NC2M))
        p2_9 = fadd(fadd(fma(C0, int_as_float(byte_perm(int32(up), MAGI, SEL0)), NC0M), fma(C1, int_as_float(byte_perm(int32(up), MAGI, SEL1)), NC1M)), fma(C2, int_as_float(byte_perm(int32(up), MAGI, SEL2)), NC2M))
        rr = min(r + 2, H - 1)
        pb = uint64(rr) * Wu + c0u
        q0 = img64[(pb >> X1) + X0]
        q1 = img64[(pb >> X1) + X1]
        q2 = img64[(pb >> X1) + X2]
        q3 = img64[(pb >> X1) + X3]
        um = img32[pb - X1] if c0 > 0 else U0
        up = img32[pb + X8] if c0 + 8 < W else U0
        gx = fadd(fadd(fma(P2, p1_2, fma(M2, p1_0, fadd(-p0_0, p0_2))), -p2_0), p2_2)
        gy = fadd(fadd(fma(P2, p2_1, fma(M2, p0_1, fadd(-p0_0, p2_0))), -p0_2), p2_2)
        m = fadd(fabs(gx), fabs(gy))
        v0 = float_as_int(fadd_rz(min(m, F255), M))
        gx = fadd(fadd(fma(P2, p1_3, fma(M2, p1_1, fadd(-p0_1, p0_3))), -p2_1), p2_3)
        gy = fadd(fadd(fma(P2, p2_2, fma(M2, p0_2, fadd(-p0_1, p2_1))), -p0_3), p2_3)
        m = fadd(fabs(gx), fabs(gy))
        v1 = float_as_int(fadd_rz(min(m, F255), M))
        gx = fadd(fadd(fma(P2, p1_4, fma(M2, p1_2, fadd(-p0_2, p0_4))), -p2_2), p2_4)
        gy = fadd(fadd(fma(P2, p2_3, fma(M2, p0_3, fadd(-p0_2, p2_2))), -p0_4), p2_4)
        m = fadd(fabs(gx), fabs(gy))
        v2 = float_as_int(fadd_rz(min(m, F255), M))
        gx = fadd(fadd(fma(P2, p1_5, fma(M2, p1_3, fadd(-p0_3, p0_5))), -p2_3), p2_5)
        gy = fadd(fadd(fma(P2, p2_4, fma(M2, p0_4, fadd(-p0_3, p2_3))), -p0_5), p2_5)
        m = fadd(fabs(gx), fabs(gy))
        v3 = float_as_int(fadd_rz(min(m, F255), M))
        gx = fadd(fadd(fma(P2, p1_6, fma(M2, p1_4, fadd(-p0_4, p0_6))), -p2_4), p2_6)
        gy = fadd(fadd(fma(P2, p2_5, fma(M2, p0_5, fadd(-p0_4, p2_4))), -p0_6), p2_6)
        m = fadd(fabs(gx), fabs(gy))
        v4 = float_as_int(fadd_rz(min(m, F255), M))
        gx = fadd(fadd(fma(P2, p1_7, fma(M2, p1_5, fadd(-p0_5, p0_7))), -p2_5), p2_7)
        gy = fadd(fadd(fma(P2, p2_6, fma(M2, p0_6, fadd(-p0_5, p2_5))), -p0_7), p2_7)
        m = fadd(fabs(gx), fabs(gy))
        v5 = float_as_int(fadd_rz(min(m, F255), M))
        gx = fadd(fadd(fma(P2, p1_8, fma(M2, p1_6, fadd(-p0_6, p0_8))), -p2_6), p2_8)
        gy = fadd(fadd(fma(P2, p2_7, fma(M2, p0_7, fadd(-p0_6, p2_6))), -p0_8), p2_8)
        m = fadd(fabs(gx), fabs(gy))
        v6 = float_as_int(fadd_rz(min(m, F255), M))
        gx = fadd(fadd(fma(P2, p1_9, fma(M2, p1_7, fadd(-p0_7, p0_9))), -p2_7), p2_9)
        gy = fadd(fadd(fma(P2, p2_8, fma(M2, p0_8, fadd(-p0_7, p2_7))), -p0_9), p2_9)
        m = fadd(fabs(gx), fabs(gy))
        v7 = float_as_int(fadd_rz(min(m, F255), M))
        ob = uint64(r) * Wu + c0u
        if full:
            out32[(ob >> X2) + X0] = byte_perm(byte_perm(v0, v1, PK0), byte_perm(v2, v3, PK0), PK1)
            out32[(ob >> X2) + X1] = byte_perm(byte_perm(v4, v5, PK0), byte_perm(v6, v7, PK0), PK1)
        else:
            if c0 + 0 >= 1 and c0 + 0 <= W - 2:
                out8[ob + X0] = uint8(uint32(v0) & UFF)
            if c0 + 1 >= 1 and c0 + 1 <= W - 2:
                out8[ob + X1] = uint8(uint32(v1) & UFF)
            if c0 + 2 >= 1 and c0 + 2 <= W - 2:
                out8[ob + X2] = uint8(uint32(v2) & UFF)
            if c0 + 3 >= 1 and c0 + 3 <= W - 2:
                out8[ob + X3] = uint8(uint32(v3) & UFF)
            if c0 + 4 >= 1 and c0 + 4 <= W - 2:
                out8[ob + X4] = uint8(uint32(v4) & UFF)
            if c0 + 5 >= 1 and c0 + 5 <= W - 2:
                out8[ob + X5] = uint8(uint32(v5) & UFF)
            if c0 + 6 >= 1 and c0 + 6 <= W - 2:
                out8[ob + X6] = uint8(uint32(v6) & UFF)
            if c0 + 7 >= 1 and c0 + 7 <= W - 2:
                out8[ob + X7] = uint8(uint32(v7) & UFF)
        if k + 1 >= 4:
            return
        r = r0 + k + 1
        if r > H - 2:
            return
        p0_0 = fadd(fadd(fma(C0, int_as_float(byte_perm(int32(um), MAGI, SEL0)), NC0M), fma(C1, int_as_float(byte_perm(int32(um), MAGI, SEL1)), NC1M)), fma(C2, int_as_float(byte_perm(int32(um), MAGI, SEL2)), NC2M))
        p0_1 = fadd(fadd(fma(C0, int_as_float(byte_perm(int32(uint32(q0 & LO)), MAGI, SEL0)), NC0M), fma(C1, int_as_float(byte_perm(int32(uint32(q0 & LO)), MAGI, SEL1)), NC1M)), fma(C2, int_as_float(byte_perm(int32(uint32(q0 & LO)), MAGI, SEL2)), NC2M))
        p0_2 = fadd(fadd(fma(C0, int_as_float(byte_perm(int32(uint32(q0 >> S32)), MAGI, SEL0)), NC0M), fma(C1, int_as_float(byte_perm(int32(uint32(q0 >> S32)), MAGI, SEL1)), NC1M)), fma(C2, int_as_float(byte_perm(int32(uint32(q0 >> S32)), MAGI, SEL2)), NC2M))
        p0_3 = fadd(fadd(fma(C0, int_as_float(byte_perm(int32(uint32(q1 & LO)), MAGI, SEL0)), NC0M), fma(C1, int_as_float(byte_perm(int32(uint32(q1 & LO)), MAGI, SEL1)), NC1M)), fma(C2, int_as_float(byte_perm(int32(uint32(q1 & LO)), MAGI, SEL2)), NC2M))
        p0_4 = fadd(fadd(fma(C0, int_as_float(byte_perm(int32(uint32(q1 >> S32)), MAGI, SEL0)), NC0M), fma(C1, int_as_float(byte_perm(int32(uint32(q1 >> S32)), MAGI, SEL1)), NC1M)), fma(C2, int_as_float(byte_perm(int32(uint32(q1 >> S32)), MAGI, SEL2)), NC2M))
        p0_5 = fadd(fadd(fma(C0, int_as_float(byte_perm(int32(uint32(q2 & LO)), MAGI, SEL0)), NC0M), fma(C1, int_as_float(byte_perm(int32(uint32(q2 & LO)), MAGI, SEL1)), NC1M)), fma(C2, int_as_float(byte_perm(int32(uint32(q2 & LO)), MAGI, SEL2)), NC2M))
        p0_6 = fadd(fadd(fma(C0, int_as_float(byte_perm(int32(uint32(q2 >> S32)), MAGI, SEL0)), NC0M), fma(C1, int_as_float(byte_perm(int32(uint32(q2 >> S32)), MAGI, SEL1)), NC1M)), fma(C2, int_as_float(byte_perm(int32(uint32(q2 >> S32)), MAGI, SEL2)), NC2M))
        p0_7 = fadd(fadd(fma(C0, int_as_float(byte_perm(int32(uint32(q3 & LO)), MAGI, SEL0)), NC0M), fma(C1, int_as_float(byte_perm(int32(uint32(q3 & LO)), MAGI, SEL1)), NC1M)), fma(C2, int_as_float(byte_perm(int32(uint32(q3 & LO)), MAGI, SEL2)), NC2M))
        p0_8 = fadd(fadd(fma(C0, int_as_float(byte_perm(int32(uint32(q3 >> S32)), MAGI, SEL0)), NC0M), fma(C1, int_as_float(byte_perm(int32(uint32(q3 >> S32)), MAGI, SEL1)), NC1M)), fma(C2, int_as_float(byte_perm(int32(uint32(q3 >> S32)), MAGI, SEL2)), NC2M))
        p0_9 = fadd(fadd(fma(C0, int_as_float(byte_perm(int32(up), MAGI, SEL0)), NC0M), fma(C1, int_as_float(byte_perm(int32(up), MAGI, SEL1)), NC1M)), fma(C2, int_as_float(byte_perm(int32(up), MAGI, SEL2)), NC2M))
        rr = min(r + 2, H - 1)
        pb = uint64(rr) * Wu + c0u
        q0 = img64[(pb >> X1) + X0]
        q1 = img64[(pb >> X1) + X1]
        q2 = img64[(pb >> X1) + X2]
        q3 = img64[(pb >> X1) + X3]
        um = img32[pb - X1] if c0 > 0 else U0
        up = img32[pb + X8] if c0 + 8 < W else U0
        gx = fadd(fadd(fma(P2, p2_2, fma(M2, p2_0, fadd(-p1_0, p1_2))), -p0_0), p0_2)
        gy = fadd(fadd(fma(P2, p0_1, fma(M2, p1_1, fadd(-p1_0, p0_0))), -p1_2), p0_2)
        m = fadd(fabs(gx), fabs(gy))
        v0 = float_as_int(fadd_rz(min(m, F255), M))
        gx = fadd(fadd(fma(P2, p2_3, fma(M2, p2_1, fadd(-p1_1, p1_3))), -p0_1), p0_3)
        gy = fadd(fadd(fma(P2, p0_2, fma(M2, p1_2, fadd(-p1_1, p0_1))), -p1_3), p0_3)
        m = fadd(fabs(gx), fabs(gy))
        v1 = float_as_int(fadd_rz(min(m, F255), M))
        gx = fadd(fadd(fma(P2, p2_4, fma(M2, p2_2, fadd(-p1_2, p1_4))), -p0_2), p0_4)
        gy = fadd(fadd(fma(P2, p0_3, fma(M2, p1_3, fadd(-p1_2, p0_2))), -p1_4), p0_4)
        m = fadd(fabs(gx), fabs(gy))
        v2 = float_as_int(fadd_rz(min(m, F255), M))
        gx = fadd(fadd(fma(P2, p2_5, fma(M2, p2_3, fadd(-p1_3, p1_5))), -p0_3), p0_5)
        gy = fadd(fadd(fma(P2, p0_4, fma(M2, p1_4, fadd(-p1_3, p0_3))), -p1_5), p0_5)
        m = fadd(fabs(gx), fabs(gy))
        v3 = float_as_int(fadd_rz(min(m, F255), M))
        gx = fadd(fadd(fma(P2, p2_6, fma(M2, p2_4, fadd(-p1_4, p1_6))), -p0_4), p0_6)
        gy = fadd(fadd(fma(P2, p0_5, fma(M2, p1_5, fadd(-p1_4, p0_4))), -p1_6), p0_6)
        m = fadd(fabs(gx), fabs(gy))
        v4 = float_as_int(fadd_rz(min(m, F255), M))
        gx = fadd(fadd(fma(P2, p2_7, fma(M2, p2_5, fadd(-p1_5, p1_7))), -p0_5), p0_7)
        gy = fadd(fadd(fma(P2, p0_6, fma(M2, p1_6, fadd(-p1_5, p0_5))), -p1_7), p0_7)
        m = fadd(fabs(gx), fabs(gy))
        v5 = float_as_int(fadd_rz(min(m, F255), M))
        gx = fadd(fadd(fma(P2, p2_8, fma(M2, p2_6, fadd(-p1_6, p1_8))), -p0_6), p0_8)
        gy = fadd(fadd(fma(P2, p0_7, fma(M2, p1_7, fadd(-p1_6, p0_6))), -p1_8), p0_8)
        m = fadd(fabs(gx), fabs(gy))
        v6 = float_as_int(fadd_rz(min(m, F255), M))
        gx = fadd(fadd(fma(P2, p2_9, fma(M2, p2_7, fadd(-p1_7, p1_9))), -p0_7), p0_9)
        gy = fadd(fadd(fma(P2, p0_8, fma(M2, p1_8, fadd(-p1_7, p0_7))), -p1_9), p0_9)
        m = fadd(fabs(gx), fabs(gy))
        v7 = float_as_int(fadd_rz(min(m, F255), M))
        ob = uint64(r) * Wu + c0u
        if full:
            out32[(ob >> X2) + X0] = byte_perm(byte_perm(v0, v1, PK0), byte_perm(v2, v3, PK0), PK1)
            out32[(ob >> X2) + X1] = byte_perm(byte_perm(v4, v5, PK0), byte_perm(v6, v7, PK0), PK1)
        else:
            if c0 + 0 >= 1 and c0 + 0 <= W - 2:
                out8[ob + X0] = uint8(uint32(v0) & UFF)
            if c0 + 1 >= 1 and c0 + 1 <= W - 2:
                out8[ob + X1] = uint8(uint32(v1) & UFF)
            if c0 + 2 >= 1 and c0 + 2 <= W - 2:
                out8[ob + X2] = uint8(uint32(v2) & UFF)
            if c0 + 3 >= 1 and c0 + 3 <= W - 2:
                out8[ob + X3] = uint8(uint32(v3) & UFF)
            if c0 + 4 >= 1 and c0 + 4 <= W - 2:
                out8[ob + X4] = uint8(uint32(v4) & UFF)
            if c0 + 5 >= 1 and c0 + 5 <= W - 2:
                out8[ob + X5] = uint8(uint32(v5) & UFF)
            if c0 + 6 >= 1 and c0 + 6 <= W - 2:
                out8[ob + X6] = uint8(uint32(v6) & UFF)
            if c0 + 7 >= 1 and c0 + 7 <= W - 2:
                out8[ob + X7] = uint8(uint32(v7) & UFF)
        if k + 2 >= 4:
            return
        r = r0 + k + 2
        if r > H - 2:
            return
        p1_0 = fadd(fadd(fma(C0, int_as_float(byte_perm(int32(um), MAGI, SEL0)), NC0M), fma(C1, int_as_float(byte_perm(int32(um), MAGI, SEL1)), NC1M)), fma(C2, int_as_float(byte_perm(int32(um), MAGI, SEL2)), NC2M))
        p1_1 = fadd(fadd(fma(C0, int_as_float(byte_perm(int32(uint32(q0 & LO)), MAGI, SEL0)), NC0M), fma(C1, int_as_float(byte_perm(int32(uint32(q0 & LO)), MAGI, SEL1)), NC1M)), fma(C2, int_as_float(byte_perm(int32(uint32(q0 & LO)), MAGI, SEL2)), NC2M))
        p1_2 = fadd(fadd(fma(C0, int_as_float(byte_perm(int32(uint32(q0 >> S32)), MAGI, SEL0)), NC0M), fma(C1, int_as_float(byte_perm(int32(uint32(q0 >> S32)), MAGI, SEL1)), NC1M)), fma(C2, int_as_float(byte_perm(int32(uint32(q0 >> S32)), MAGI, SEL2)), NC2M))
        p1_3 = fadd(fadd(fma(C0, int_as_float(byte_perm(int32(uint32(q1 & LO)), MAGI, SEL0)), NC0M), fma(C1, int_as_float(byte_perm(int32(uint32(q1 & LO)), MAGI, SEL1)), NC1M)), fma(C2, int_as_float(byte_perm(int32(uint32(q1 & LO)), MAGI, SEL2)), NC2M))
        p1_4 = fadd(fadd(fma(C0, int_as_float(byte_perm(int32(uint32(q1 >> S32)), MAGI, SEL0)), NC0M), fma(C1, int_as_float(byte_perm(int32(uint32(q1 >> S32)), MAGI, SEL1)), NC1M)), fma(C2, int_as_float(byte_perm(int32(uint32(q1 >> S32)), MAGI, SEL2)), NC2M))
        p1_5 = fadd(fadd(fma(C0, int_as_float(byte_perm(int32(uint32(q2 & LO)), MAGI, SEL0)), NC0M), fma(C1, int_as_float(byte_perm(int32(uint32(q2 & LO)), MAGI, SEL1)), NC1M)), fma(C2, int_as_float(byte_perm(int32(uint32(q2 & LO)), MAGI, SEL2)), NC2M))
        p1_6 = fadd(fadd(fma(C0, int_as_float(byte_perm(int32(uint32(q2 >> S32)), MAGI, SEL0)), NC0M), fma(C1, int_as_float(byte_perm(int32(uint32(q2 >> S32)), MAGI, SEL1)), NC1M)), fma(C2, int_as_float(byte_perm(int32(uint32(q2 >> S32)), MAGI, SEL2)), NC2M))
        p1_7 = fadd(fadd(fma(C0, int_as_float(byte_perm(int32(uint32(q3 & LO)), MAGI, SEL0)), NC0M), fma(C1, int_as_float(byte_perm(int32(uint32(q3 & LO)), MAGI, SEL1)), NC1M)), fma(C2, int_as_float(byte_perm(int32(uint32(q3 & LO)), MAGI, SEL2)), NC2M))
        p1_8 = fadd(fadd(fma(C0, int_as_float(byte_perm(int32(uint32(q3 >> S32)), MAGI, SEL0)), NC0M), fma(C1, int_as_float(byte_perm(int32(uint32(q3 >> S32)), MAGI, SEL1)), NC1M)), fma(C2, int_as_float(byte_perm(int32(uint32(q3 >> S32)), MAGI, SEL2)), NC2M))
        p1_9 = fadd(fadd(fma(C0, int_as_float(byte_perm(int32(up), MAGI, SEL0)), NC0M), fma(C1, int_as_float(byte_perm(int32(up), MAGI, SEL1)), NC1M)), fma(C2, int_as_float(byte_perm(int32(up), MAGI, SEL2)), NC2M))
        rr = min(r + 2, H - 1)
        pb = uint64(rr) * Wu + c0u
        q0 = img64[(pb >> X1) + X0]
        q1 = img64[(pb >> X1) + X1]
        q2 = img64[(pb >> X1) + X2]
        q3 = img64[(pb >> X1) + X3]
        um = img32[pb - X1] if c0 > 0 else U0
        up = img32[pb + X8] if c0 + 8 < W else U0
        gx = fadd(fadd(fma(P2, p0_2, fma(M2, p0_0, fadd(-p2_0, p2_2))), -p1_0), p1_2)
        gy = fadd(fadd(fma(P2, p1_1, fma(M2, p2_1, fadd(-p2_0, p1_0))), -p2_2), p1_2)
        m = fadd(fabs(gx), fabs(gy))
        v0 = float_as_int(fadd_rz(min(m, F255), M))
        gx = fadd(fadd(fma(P2, p0_3, fma(M2, p0_1, fadd(-p2_1, p2_3))), -p1_1), p1_3)
        gy = fadd(fadd(fma(P2, p1_2, fma(M2, p2_2, fadd(-p2_1, p1_1))), -p2_3), p1_3)
        m = fadd(fabs(gx), fabs(gy))
        v1 = float_as_int(fadd_rz(min(m, F255), M))
        gx = fadd(fadd(fma(P2, p0_4, fma(M2, p0_2, fadd(-p2_2, p2_4))), -p1_2), p1_4)
        gy = fadd(fadd(fma(P2, p1_3, fma(M2, p2_3, fadd(-p2_2, p1_2))), -p2_4), p1_4)
        m = fadd(fabs(gx), fabs(gy))
        v2 = float_as_int(fadd_rz(min(m, F255), M))
        gx = fadd(fadd(fma(P2, p0_5, fma(M2, p0_3, fadd(-p2_3, p2_5))), -p1_3), p1_5)
        gy = fadd(fadd(fma(P2, p1_4, fma(M2, p2_4, fadd(-p2_3, p1_3))), -p2_5), p1_5)
        m = fadd(fabs(gx), fabs(gy))
        v3 = float_as_int(fadd_rz(min(m, F255), M))
        gx = fadd(fadd(fma(P2, p0_6, fma(M2, p0_4, fadd(-p2_4, p2_6))), -p1_4), p1_6)
        gy = fadd(fadd(fma(P2, p1_5, fma(M2, p2_5, fadd(-p2_4, p1_4))), -p2_6), p1_6)
        m = fadd(fabs(gx), fabs(gy))
        v4 = float_as_int(fadd_rz(min(m, F255), M))
        gx = fadd(fadd(fma(P2, p0_7, fma(M2, p0_5, fadd(-p2_5, p2_7))), -p1_5), p1_7)
        gy = fadd(fadd(fma(P2, p1_6, fma(M2, p2_6, fadd(-p2_5, p1_5))), -p2_7), p1_7)
        m = fadd(fabs(gx), fabs(gy))
        v5 = float_as_int(fadd_rz(min(m, F255), M))
        gx = fadd(fadd(fma(P2, p0_8, fma(M2, p0_6, fadd(-p2_6, p2_8))), -p1_6), p1_8)
        gy = fadd(fadd(fma(P2, p1_7, fma(M2, p2_7, fadd(-p2_6, p1_6))), -p2_8), p1_8)
        m = fadd(fabs(gx), fabs(gy))
        v6 = float_as_int(fadd_rz(min(m, F255), M))
        gx = fadd(fadd(fma(P2, p0_9, fma(M2, p0_7, fadd(-p2_7, p2_9))), -p1_7), p1_9)
        gy = fadd(fadd(fma(P2, p1_8, fma(M2, p2_8, fadd(-p2_7, p1_7))), -p2_9), p1_9)
        m = fadd(fabs(gx), fabs(gy))
        v7 = float_as_int(fadd_rz(min(m, F255), M))
        ob = uint64(r) * Wu + c0u
        if full:
            out32[(ob >> X2) + X0] = byte_perm(byte_perm(v0, v1, PK0), byte_perm(v2, v3, PK0), PK1)
            out32[(ob >> X2) + X1] = byte_perm(byte_perm(v4, v5, PK0), byte_perm(v6, v7, PK0), PK1)
        else:
            if c0 + 0 >= 1 and c0 + 0 <= W - 2:
                out8[ob + X0] = uint8(uint32(v0) & UFF)
            if c0 + 1 >= 1 and c0 + 1 <= W - 2:
                out8[ob + X1] = uint8(uint32(v1) & UFF)
            if c0 + 2 >= 1 and c0 + 2 <= W - 2:
                out8[ob + X2] = uint8(uint32(v2) & UFF)
            if c0 + 3 >= 1 and c0 + 3 <= W - 2:
                out8[ob + X3] = uint8(uint32(v3) & UFF)
            if c0 + 4 >= 1 and c0 + 4 <= W - 2:
                out8[ob + X4] = uint8(uint32(v4) & UFF)
            if c0 + 5 >= 1 and c0 + 5 <= W - 2:
                out8[ob + X5] = uint8(uint32(v5) & UFF)
            if c0 + 6 >= 1 and c0 + 6 <= W - 2:
                out8[ob + X6] = uint8(uint32(v6) & UFF)
            if c0 + 7 >= 1 and c0 + 7 <= W - 2:
                out8[ob + X7] = uint8(uint32(v7) & UFF)
