"""Run by tests/test_sim_warps.py in a subprocess (the simulator must be on before numba.cuda is
imported): warp-level kernels under refconv's simulator scheduler.  ``python sim_warps_cases.py
[plain|sanitize]``; prints one JSON line: each scenario's output arrays, and under ``sanitize``
the sanitizer's findings per scenario (class, problem, line).  The expected values are computed
by the test from CUDA's definitions, not here."""
import json
import os
import sys
import warnings

import numpy as np

os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
MODE = sys.argv[1] if len(sys.argv) > 1 else "plain"
from refconv.tooling.cuda import sim_scheduler  # noqa: E402
from numba import cuda, float32, float64, int32, int64  # noqa: E402

installed = sim_scheduler.install()
if MODE == "sanitize":
    from refconv.tooling.cuda import sanitizer
    sanitizer.enable()
    warnings.simplefilter("ignore")
FULL = 0xFFFFFFFF
W = 32


@cuda.jit
def shuffles(x, xl, idx_src, up_d, down_d, xor_m, o_idx, o_up, o_down, o_xor, o_l, o_intr, o_pred):
    t = cuda.threadIdx.x
    v = x[t]
    o_idx[t] = cuda.shfl_sync(FULL, v, idx_src[t])
    o_up[t] = cuda.shfl_up_sync(FULL, v, up_d)
    o_down[t] = cuda.shfl_down_sync(FULL, v, down_d)
    o_xor[t] = cuda.shfl_xor_sync(FULL, v, xor_m)
    o_l[t] = cuda.shfl_down_sync(FULL, xl[t], 3)
    r = cuda.shfl_sync_intrinsic(FULL, 2, v, down_d, 0x1F)
    o_intr[t] = r[0]
    o_pred[t] = 1 if r[1] else 0


@cuda.jit
def reduce2d(x, out):
    # a (8, 8) block: lanes are threadIdx linearised x-fastest, so warp 0 is rows y = 0..3
    t = cuda.threadIdx.y * cuda.blockDim.x + cuda.threadIdx.x
    v = x[t]
    off = 16
    while off > 0:
        v += cuda.shfl_down_sync(FULL, v, off)
        off //= 2
    out[t] = v


@cuda.jit
def votes(p, o_all, o_any, o_eq, o_ballot, o_half, o_popc, o_vi):
    t = cuda.threadIdx.x
    lane = t % 32
    q = p[t]
    o_all[t] = 1 if cuda.all_sync(FULL, q) else 0
    o_any[t] = 1 if cuda.any_sync(FULL, q) else 0
    o_eq[t] = 1 if cuda.eq_sync(FULL, q) else 0
    b = cuda.ballot_sync(FULL, q)
    o_ballot[t] = b
    o_popc[t] = cuda.popc(b)
    if lane < 16:   # two groups with disjoint half-warp masks
        o_half[t] = cuda.ballot_sync(0x0000FFFF, q)
    else:
        o_half[t] = cuda.ballot_sync(0xFFFF0000, q)
    r = cuda.vote_sync_intrinsic(FULL, 1, q)
    o_vi[t] = 1 if r[1] else 0


@cuda.jit
def masks(o_active, o_branch, o_lt, o_match):
    t = cuda.threadIdx.x
    lane = t % 32
    o_active[t] = cuda.activemask()
    if lane < 10:
        o_branch[t] = cuda.activemask()
    else:
        o_branch[t] = 0
    o_lt[t] = cuda.lanemask_lt()
    o_match[t] = cuda.match_any_sync(FULL if t < 32 else 0xFF, lane % 3)   # every lane that exists


@cuda.jit
def syncwarp_exchange(x, out):
    s = cuda.shared.array(64, float32)
    t = cuda.threadIdx.x
    s[t] = x[t]
    cuda.syncwarp()
    out[t] = s[(t // 32) * 32 + (t % 32 + 1) % 32]


# -- misuse: warp-mask findings -------------------------------------------------------------

@cuda.jit
def absent_lanes(x, out):   # launched with 40 threads: the second warp has 8 lanes
    t = cuda.threadIdx.x
    out[t] = cuda.shfl_down_sync(FULL, x[t], 1)


@cuda.jit
def exited_lane(x, out):
    t = cuda.threadIdx.x
    if t == 3:
        return
    out[t] = cuda.shfl_xor_sync(FULL, x[t], 1)


@cuda.jit
def lane_at_barrier(x, out):   # lanes 16..31 wait at syncthreads() while 0..15 shuffle with all 32
    t = cuda.threadIdx.x
    if t < 16:
        out[t] = cuda.shfl_down_sync(FULL, x[t], 1)
    cuda.syncthreads()
    if t >= 16:
        out[t] = x[t]


@cuda.jit
def self_not_in_mask(x, out):
    t = cuda.threadIdx.x
    out[t] = cuda.shfl_down_sync(0x0000FFFF, x[t], 1)   # lanes 16..31 are not in their mask


@cuda.jit
def good_partial_mask(x, out):   # the second warp (lanes 0..7 of 40 threads) names only its lanes
    t = cuda.threadIdx.x
    m = FULL if t < 32 else 0xFF
    out[t] = cuda.shfl_down_sync(m, x[t], 1)


# -- intra-warp ordering of shared memory ---------------------------------------------------

@cuda.jit
def warp_sync_reduce_racy(x, out):
    s = cuda.shared.array(64, float32)
    t = cuda.threadIdx.x
    s[t] = x[t]
    cuda.syncthreads()
    if t < 32:   # "warp-synchronous": no syncwarp
        s[t] += s[t + 32]
        s[t] += s[t + 16] if t < 16 else 0.0
        s[t] += s[t + 8] if t < 8 else 0.0
        s[t] += s[t + 4] if t < 4 else 0.0
        s[t] += s[t + 2] if t < 2 else 0.0
        s[t] += s[t + 1] if t < 1 else 0.0
    if t == 0:
        out[0] = s[0]


@cuda.jit
def warp_sync_reduce_syncwarp(x, out):
    s = cuda.shared.array(64, float32)
    t = cuda.threadIdx.x
    s[t] = x[t]
    cuda.syncthreads()
    if t < 32:
        v = s[t] + s[t + 32]
        s[t] = v
        cuda.syncwarp()
        k = 16
        while k > 0:
            if t < k:
                v += s[t + k]
            cuda.syncwarp()
            if t < k:
                s[t] = v
            cuda.syncwarp()
            k //= 2
    if t == 0:
        out[0] = s[0]


@cuda.jit
def warp_reduce_shfl(x, out):
    s = cuda.shared.array(64, float32)
    t = cuda.threadIdx.x
    s[t] = x[t]
    cuda.syncthreads()
    if t < 32:
        v = s[t] + s[t + 32]
        off = 16
        while off > 0:
            v += cuda.shfl_down_sync(FULL, v, off)
            off //= 2
        if t == 0:
            out[0] = v


res = {"installed": installed, "mode": MODE, "findings": {}}
rng = np.random.default_rng(0)


def findings_of(name, fn):
    if MODE != "sanitize":
        fn()
        return
    n0 = len(sanitizer.history)
    fn()
    res["findings"][name] = [{"class": f["class"], "problem": f.get("problem"), "line": f.get("line"),
                              "lanes": f.get("lanes"), "op": f.get("op")}
                             for f in list(sanitizer.history)[n0:]]


def put(name, arr):
    res[name] = np.asarray(arr).tolist()


x = rng.integers(-1000, 1000, 64).astype(np.float32)
xl = (rng.integers(-2**40, 2**40, 64)).astype(np.int64)
idx_src = rng.integers(0, 40, 64).astype(np.int32)   # some past lane 31: src & 31
res.update(x=x.tolist(), xl=xl.tolist(), idx_src=idx_src.tolist())
for (up_d, down_d, xor_m) in ((1, 1, 1), (5, 7, 6), (16, 16, 16), (0, 31, 32)):
    outs = [np.zeros(64, np.float32) for _ in range(4)] + [np.zeros(64, np.int64), np.zeros(64, np.float32),
                                                         np.zeros(64, np.int32)]

    def go():
        shuffles[1, 64](x, xl, idx_src, up_d, down_d, xor_m, *outs)
    findings_of(f"shuffles_{up_d}_{down_d}_{xor_m}", go)
    for name, o in zip(("idx", "up", "down", "xor", "l", "intr", "pred"), outs):
        put(f"shfl_{name}_{up_d}_{down_d}_{xor_m}", o)

x64 = rng.standard_normal(64)
o = np.zeros(64, np.float64)
findings_of("reduce2d", lambda: reduce2d[1, (8, 8)](x64, o))
put("x64", x64)
put("reduce2d", o)

p = (rng.random(64) < 0.5).astype(np.int32)
p[32:] = 1           # the second warp: all true
p[40:48] = 0
outs = [np.zeros(64, np.int32) for _ in range(7)]
findings_of("votes", lambda: votes[1, 64](p, *outs))
put("p", p)
for name, oo in zip(("all", "any", "eq", "ballot", "half", "popc", "vi"), outs):
    put(f"vote_{name}", oo)
z = np.zeros(64, np.int32)
outs0 = [np.zeros(64, np.int32) for _ in range(7)]
findings_of("votes_zero", lambda: votes[1, 64](z, *outs0))
put("vote_zero_any", outs0[1])
put("vote_zero_eq", outs0[2])

outs = [np.zeros(40, np.int64) for _ in range(4)]
findings_of("masks", lambda: masks[1, 40](*outs))
for name, oo in zip(("active", "branch", "lt", "match"), outs):
    put(f"mask_{name}", oo)

o = np.zeros(64, np.float32)
findings_of("syncwarp_exchange", lambda: syncwarp_exchange[1, 64](x, o))
put("syncwarp_exchange", o)

for name, kern, n in (("absent_lanes", absent_lanes, 40), ("exited_lane", exited_lane, 32),
                      ("lane_at_barrier", lane_at_barrier, 32), ("self_not_in_mask", self_not_in_mask, 32),
                      ("good_partial_mask", good_partial_mask, 40)):
    o = np.full(n, -1, np.float32)
    findings_of(name, lambda: kern[1, n](x[:n], o))
    put(name, o)

for name, kern in (("warp_sync_reduce_racy", warp_sync_reduce_racy),
                   ("warp_sync_reduce_syncwarp", warp_sync_reduce_syncwarp),
                   ("warp_reduce_shfl", warp_reduce_shfl)):
    o = np.zeros(1, np.float32)
    findings_of(name, lambda: kern[1, 64](x, o))
    put(name, o)

print(json.dumps(res))
