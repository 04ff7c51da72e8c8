"""kron: the Kronecker-product kernels of seed 003 (GPU programlama ile yüksek boyutlu yoğun
matrislerin Kronecker çarpımları, §2.1, Algoritma 1-2).

``C[i*p + k, j*q + l] = A[i, j] * B[k, l]`` (one product per element; integer dtypes wrap).
``block_launches`` (Algoritma 1-2): one kernel launch per element of A, each a grid of
``bx x by`` blocks (the paper: 32x32) covering the p x q block of C it scales, written into a
device row block of p x n*q (the paper's ``C_gpu``) that is copied to the host after each row of
A (the listing's ``adim = j*N`` / ``satirC*N*N`` index assumes square n x n inputs; general
shapes here).
``single_launch``: one launch for all of C (a thread per column and about 16 rows).  ``streamed``: the result is
computed ``rows_per_block`` rows at a time into a device buffer and each row block is handed,
in order, to the checker's :class:`refconv.sink.RowSink` (``output="rows"``), as the paper does to
fit n² x n² results that exceed GPU memory.
"""
from __future__ import annotations

import functools

import numpy as np

from refconv import Param, Range, Variant

from refconv.tooling import cuda as kit
from refconv.tooling.cuda import cdiv, finish, fits, from_device, launch, out_flat, to_device_poisoned

cuda = None
ORIGIN = "seeds/003_589ce5a1556f477e.txt"
SUPPORTS = {"dtype": ("float64", "float32", "int32", "uint8"), "m": Range(1), "n": Range(1),
            "p": Range(1), "q": Range(1)}


@functools.lru_cache(maxsize=None)
def _kernels():
    global cuda
    cuda = kit.cuda()
    from numba import uint64

    @cuda.jit
    def per_element(a, b, c, i, j, N, P, Q):
        # the P x Q block of A[i, j] into c, the row block of A's row i (P rows x N*Q columns)
        k = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
        l = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
        aij = a[i * N + j]
        if k < P and l < Q:
            c[k * (N * Q) + j * Q + l] = aij * b[k * Q + l]

    @cuda.jit
    def whole(a, b, c, row0, nrows, N, P, Q):
        # rows row0 .. row0+nrows-1 of C into c (nrows x N*Q).  A thread owns one column and every
        # (blockDim.y*gridDim.y)-th row: the column's (j, l) and its first row's (i, k) are divided
        # out once (64-bit divisions dominated the one-element-per-thread form); then the three
        # subscripts c[rr*NQ + col], a[i*N + j], b[k*Q + l] are stepped by additions, b's wrapping
        # past the last row of B (k >= P, i.e. bk >= P*Q) into a's next row.  Every subscript is a
        # uint64 built from uint64 operands: numba gives a signed subscript a negative-index
        # wraparound (a 64-bit compare and select each).  With those and a multiplication per
        # subscript the loop is bound by instruction issue rather than by its stores; the OpenCL
        # twin (kron.cl, rows) steps the same offsets
        uN, uP, uQ, un = uint64(N), uint64(P), uint64(Q), uint64(nrows)
        NQ = uN * uQ
        PQ = uP * uQ
        col = uint64(cuda.blockIdx.x) * uint64(cuda.blockDim.x) + uint64(cuda.threadIdx.x)
        rr = uint64(cuda.blockIdx.y) * uint64(cuda.blockDim.y) + uint64(cuda.threadIdx.y)
        if rr >= un or col >= NQ:
            return
        j = col // uQ
        l = col - j * uQ
        row = uint64(row0) + rr
        i = row // uP
        k = row - i * uP
        step = uint64(cuda.blockDim.y) * uint64(cuda.gridDim.y)
        di = step // uP
        dk = step - di * uP
        oc = rr * NQ + col                  # c's subscript, stepped by step rows
        ai = i * uN + j                     # a's, by di rows of A (+1 row when k wraps)
        bk = k * uQ + l                     # b's, by dk rows of B (-P rows when k wraps)
        ostep, astep, bstep = step * NQ, di * uN, dk * uQ
        while rr < un:
            c[oc] = a[ai] * b[bk]
            rr += step
            oc += ostep
            ai += astep
            bk += bstep
            if bk >= PQ:
                bk -= PQ
                ai += uN

    return per_element, whole


def _operands(problem):
    """``(cuda, (M, N, P, Q), d_a, d_b)``: A (M x N) and B (P x Q) flattened on the device."""
    cuda_ = kit.cuda()
    a = np.ascontiguousarray(problem.inputs["a"])
    b = np.ascontiguousarray(problem.inputs["b"])
    return cuda_, a.shape + b.shape, cuda_.to_device(a.reshape(-1)), cuda_.to_device(b.reshape(-1))


def _run_block_launches(problem, out, bx=32, by=32):
    """Algoritma 2: the device holds one row block of C (the paper's ``C_gpu``, P rows x N*Q);
    for each row i of A, N launches fill it and it is copied to the host (the caller's poison
    goes through it first, so an element no launch writes comes back poisoned)."""
    cuda_, (M, N, P, Q), d_a, d_b = _operands(problem)
    per_element, _ = _kernels()
    flat = out_flat(out)
    blk = P * N * Q
    d_rb = cuda_.device_array(max(blk, 1), out.dtype)
    grid = (cdiv(Q, bx), cdiv(P, by))
    for i in range(M):
        rows = flat[i * blk:(i + 1) * blk]
        d_rb[:blk].copy_to_device(rows)
        for j in range(N):
            launch(per_element[grid, (bx, by)], d_a, d_b, d_rb, i, j, N, P, Q)
        d_rb[:blk].copy_to_host(rows)          # synchronous: row block i to the host
    return finish(out, flat)


#: rows of C per thread in ``whole``: the column's division is paid once per this many elements
ROWS_PER_THREAD = 16


def _rows_grid(nrows: int, by: int) -> int:
    return min(cdiv(nrows, by * ROWS_PER_THREAD), 65535)


def _run_single_launch(problem, out, bx=32, by=8):
    cuda_, (M, N, P, Q), d_a, d_b = _operands(problem)
    _, whole = _kernels()
    d_out, n = to_device_poisoned(out)
    launch(whole[(cdiv(N * Q, bx), _rows_grid(M * P, by)), (bx, by)], d_a, d_b, d_out, 0, M * P, N, P, Q)
    cuda_.synchronize()
    return from_device(d_out, n, out)


def _run_streamed(problem, out, rows_per_block=4, bx=32, by=8):
    """``out`` is a :class:`refconv.sink.RowSink`: each block of ``rows_per_block`` rows is computed
    on the device, copied to the host and handed to ``out.write`` in order; the device and the host
    hold one block (plus A and B), whatever the size of C."""
    cuda_, (M, N, P, Q), d_a, d_b = _operands(problem)
    _, whole = _kernels()
    cols = N * Q
    rb = min(rows_per_block, max(M * P, 1))
    d_c = cuda_.to_device(out.poisoned(rb).reshape(-1))   # poisoned staging block
    host = cuda_.pinned_array(rb * cols, out.dtype) if not kit.is_sim() else np.empty(rb * cols, out.dtype)
    stream = cuda_.stream()
    for r0 in range(0, M * P, rb):
        nr = min(rb, M * P - r0)
        launch(whole[(cdiv(cols, bx), _rows_grid(nr, by)), (bx, by), stream], d_a, d_b, d_c, r0, nr, N, P, Q, stream=stream)
        d_c.copy_to_host(host, stream=stream)
        stream.synchronize()
        out.write(r0, host[:nr * cols].reshape(nr, cols))


def _fits(kind):
    """The device limits: bx*by threads; the grid (block_launches: Q/bx x P/by per element of A;
    single_launch: N*Q/bx x M*P/(16 by); streamed: N*Q/bx x rows_per_block/(16 by)); device memory for A, B
    and C (block_launches: one row block of C, P rows; streamed: rows_per_block rows)."""
    def check(problem, params):
        d = problem.dims
        M, N, P, Q = d["m"], d["n"], d["p"], d["q"]
        bx, by = params.get("bx", 32), params.get("by", 8)
        isz = np.dtype(d["dtype"]).itemsize
        ab = (M * N + P * Q) * isz
        if kind == "block_launches":   # one row block of C on the device
            return fits(problem, threads=bx * by, grid=(cdiv(Q, bx), cdiv(P, by)), device_bytes=ab + P * N * Q * isz)
        if kind == "single_launch":
            return fits(problem, threads=bx * by, grid=(cdiv(N * Q, bx), _rows_grid(M * P, by)),
                        device_bytes=ab + M * P * N * Q * isz)
        rb = min(params.get("rows_per_block", 4), M * P)
        return fits(problem, threads=bx * by, grid=(cdiv(N * Q, bx), _rows_grid(rb, by)), device_bytes=ab + rb * N * Q * isz)
    return check


def variants():
    available = kit.reason
    bxy = (Param("bx", (2, 4, 8, 16, 32), 32), Param("by", (2, 4, 8, 16, 32), 32))
    return [
        Variant(op="kron", backend="numba_cuda", name="block_launches", run=_run_block_launches,
                supports=dict(SUPPORTS), params=bxy, available=available, constraint=_fits("block_launches"),
                origin=f"{ORIGIN} §2.1 Algoritma 1-2",
                doc="one launch per A[i,j]; bx x by blocks cover B; C[i*p+k, j*q+l] = A[i,j]*B[k,l]"),
        Variant(op="kron", backend="numba_cuda", name="single_launch", run=_run_single_launch,
                supports=dict(SUPPORTS), params=(Param("bx", (2, 4, 8, 16, 32), 32), Param("by", (2, 4, 8), 8)),
                available=available, constraint=_fits("single_launch"), origin=f"{ORIGIN} §2.1 (one launch for all of C)",
                doc="one launch over C: a thread per column and every (by x grid)-th row, about 16 rows each"),
        Variant(op="kron", backend="numba_cuda", name="streamed", run=_run_streamed,
                supports=dict(SUPPORTS),
                params=(Param("rows_per_block", (1, 2, 3, 4, 8, 16, 256, 1024), 1024), Param("bx", (4, 32), 32),
                        Param("by", (2, 8), 8)),
                available=available, constraint=_fits("streamed"), output="rows",
                origin=f"{ORIGIN} §2.1 (satır blokları CPU belleğine)",
                doc="rows_per_block result rows at a time on the device, each block handed in order to the "
                    "checker's RowSink (neither device nor host holds C: n = 360 float64 is 125 GiB)"),
    ]
