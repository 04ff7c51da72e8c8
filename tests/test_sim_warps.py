"""Warp-level operations under the CUDA simulator (tooling/cuda/sim_warps.py on refconv's
block scheduler): each operation against its CUDA definition (the expected values are computed
here from the CUDA programming guide's / PTX's rules, lane = linear threadIdx mod 32), with and
without the sanitizer; the sanitizer's ``warp-mask`` findings for masks naming absent, exited or
never-arriving lanes; and its intra-warp ordering (a warp-synchronous reduction races, its
``syncwarp`` and ``shfl_down_sync`` twins do not).  The kernels are in ``sim_warps_cases.py``."""
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("numba_cuda")
#: simulator subprocesses and ``refconv check`` runs, like test_sim_scheduler: not the fast tier
pytestmark = pytest.mark.slow
CASES = Path(__file__).resolve().parent / "sim_warps_cases.py"
FULL = 0xFFFFFFFF


def _run(mode):
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1", REFCONV_SIM_SCHEDULER="event")
    p = subprocess.run([sys.executable, str(CASES), mode], capture_output=True, text=True, timeout=300, env=env)
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads(p.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module", params=["plain", "sanitize"])
def res(request):
    return _run(request.param)


@pytest.fixture(scope="module")
def san():
    return _run("sanitize")


def i32(m):
    m &= FULL
    return m - (1 << 32) if m & 0x80000000 else m


def lanes_of(n):
    """(warp, lane) of each linear thread index of an n-thread block."""
    return [divmod(t, 32) for t in range(n)]


# -- shuffles --------------------------------------------------------------------------------

SHAPES = [(1, 1, 1), (5, 7, 6), (16, 16, 16), (0, 31, 32)]


def _shfl_expected(x, mode, b):
    """CUDA's __shfl*_sync with width 32 over two full warps: the source lane's value, or the
    caller's own when the source lies outside the warp."""
    out = []
    for t in range(len(x)):
        w, lane = divmod(t, 32)
        bb = b[t] if mode == "idx" else b
        src = {"idx": bb % 32, "up": lane - bb, "down": lane + bb, "xor": lane ^ bb}[mode]
        out.append(x[32 * w + src] if 0 <= src < 32 else x[t])
    return out


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "up%d_down%d_xor%d" % s)
def test_shuffles_move_values_between_lanes_as_cuda_defines_them(res, shape):
    up, down, xor = shape
    sfx = "_%d_%d_%d" % shape
    x = res["x"]
    assert res["shfl_idx" + sfx] == _shfl_expected(x, "idx", res["idx_src"])
    assert res["shfl_up" + sfx] == _shfl_expected(x, "up", up)
    assert res["shfl_down" + sfx] == _shfl_expected(x, "down", down)
    assert res["shfl_xor" + sfx] == _shfl_expected(x, "xor", xor)


def test_shuffles_carry_64_bit_integers_unchanged(res):
    assert res["shfl_l_1_1_1"] == _shfl_expected(res["xl"], "down", 3)
    assert any(abs(v) > 2 ** 31 for v in res["shfl_l_1_1_1"])


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "down%d" % s[1])
def test_shfl_sync_intrinsic_returns_the_value_and_whether_the_source_was_in_the_warp(res, shape):
    sfx = "_%d_%d_%d" % shape
    down = shape[1]
    assert res["shfl_intr" + sfx] == _shfl_expected(res["x"], "down", down)
    assert res["shfl_pred" + sfx] == [int(t % 32 + down < 32) for t in range(64)]


def test_a_shuffle_reduction_over_a_2d_block_sums_each_warp_of_the_x_fastest_linearisation(res):
    x = np.array(res["x64"])
    got = np.array(res["reduce2d"])
    # lane 0 of each warp: rows y = 0..3 (threads 0..31) and y = 4..7 (threads 32..63) of the 8x8 block
    assert got[0] == pytest.approx(x[:32].sum(), rel=1e-12)
    assert got[32] == pytest.approx(x[32:].sum(), rel=1e-12)


# -- votes -----------------------------------------------------------------------------------

def test_votes_see_the_predicates_of_the_lanes_of_the_mask(res):
    p = res["p"]
    for t, (w, lane) in enumerate(lanes_of(64)):
        warp = p[32 * w: 32 * w + 32]
        ballot = sum(1 << j for j in range(32) if warp[j])
        assert res["vote_all"][t] == int(all(warp))
        assert res["vote_any"][t] == int(any(warp))
        assert res["vote_eq"][t] == int(len(set(warp)) == 1)
        assert res["vote_ballot"][t] == i32(ballot)          # numba types ballot_sync as int32
        assert res["vote_popc"][t] == bin(ballot).count("1")
        half = 0x0000FFFF if lane < 16 else 0xFFFF0000
        assert res["vote_half"][t] == i32(ballot & half)
        assert res["vote_vi"][t] == int(any(warp))


def test_votes_on_all_false_predicates(res):
    assert res["vote_zero_any"] == [0] * 64
    assert res["vote_zero_eq"] == [1] * 64


# -- masks -----------------------------------------------------------------------------------

def test_activemask_names_the_lanes_that_reach_the_call(res):
    # 40 threads: warp 0 has 32 lanes, warp 1 has 8
    assert res["mask_active"] == [FULL] * 32 + [0xFF] * 8
    # inside `if lane < 10`: lanes 0..9 of each warp (warp 1: its 8 lanes)
    assert res["mask_branch"] == [0x3FF] * 10 + [0] * 22 + [0xFF] * 8


def test_lanemask_lt_and_match_any_sync(res):
    assert res["mask_lt"] == [(1 << lane) - 1 for _, lane in lanes_of(40)]
    exp = []
    for t, (w, lane) in enumerate(lanes_of(40)):
        n = 32 if w == 0 else 8
        exp.append(i32(sum(1 << j for j in range(n) if j % 3 == lane % 3)))
    assert res["mask_match"] == exp


def test_syncwarp_lets_lanes_read_what_their_warp_wrote(res):
    x = res["x"]
    assert res["syncwarp_exchange"] == [x[(t // 32) * 32 + (t % 32 + 1) % 32] for t in range(64)]


def test_the_warp_reductions_with_syncwarp_or_shfl_down_sync_are_right(res):
    s = float(np.float32(np.sum(np.array(res["x"], np.float64))))
    assert res["warp_sync_reduce_syncwarp"] == [pytest.approx(s)]
    assert res["warp_reduce_shfl"] == [pytest.approx(s)]


# -- bad masks -------------------------------------------------------------------------------

def _problems(san, name):
    return {(f["class"], f["problem"]) for f in san["findings"][name]}


def test_a_mask_naming_lanes_beyond_blockdim_is_a_warp_mask_finding(san):
    fs = [f for f in san["findings"]["absent_lanes"] if f["class"] == "warp-mask"]
    assert [f["problem"] for f in fs] == ["absent"]
    assert fs[0]["lanes"][:8] == list(range(8, 16)) and fs[0]["op"] == "shfl_down_sync"
    # the run goes on: lanes whose source is absent get their own value
    x = san["x"]
    assert san["absent_lanes"] == [x[t + 1] for t in range(31)] + [x[31]] + [x[t + 1] for t in range(32, 39)] + [x[39]]


def test_a_mask_naming_an_exited_lane_is_a_warp_mask_finding(san):
    fs = [f for f in san["findings"]["exited_lane"] if f["class"] == "warp-mask"]
    assert [(f["problem"], f["lanes"]) for f in fs] == [("exited", [3])]
    x = san["x"]
    assert san["exited_lane"][2] == x[2]   # its partner exited: its own value
    assert san["exited_lane"][4] == x[5]


def test_a_mask_naming_lanes_waiting_at_syncthreads_is_a_finding_not_a_hang(san):
    fs = [f for f in san["findings"]["lane_at_barrier"] if f["class"] == "warp-mask"]
    assert [f["problem"] for f in fs] == ["elsewhere"]
    assert fs[0]["lanes"][0] == 16
    x = san["x"]
    assert san["lane_at_barrier"] == [x[t + 1] for t in range(15)] + [x[15]] + x[16:32]


def test_a_lane_missing_from_its_own_mask_is_a_finding(san):
    assert ("warp-mask", "self") in _problems(san, "self_not_in_mask")


def test_well_formed_masks_give_no_findings(san):
    for name in ("shuffles_1_1_1", "shuffles_0_31_32", "reduce2d", "votes", "masks", "syncwarp_exchange",
                 "good_partial_mask", "warp_sync_reduce_syncwarp", "warp_reduce_shfl"):
        assert san["findings"][name] == [], name


def test_without_the_sanitizer_bad_masks_still_run(res):
    assert len(res["absent_lanes"]) == 40 and -1 not in res["absent_lanes"][:31]


# -- intra-warp ordering -----------------------------------------------------------------------

def test_a_warp_synchronous_reduction_without_syncwarp_is_a_shared_race(san):
    fs = san["findings"]["warp_sync_reduce_racy"]
    assert fs and {f["class"] for f in fs} == {"shared-race"}


def test_syncwarp_orders_the_lanes_of_a_warp_for_the_race_detector(san):
    assert san["findings"]["warp_sync_reduce_syncwarp"] == []
    assert san["findings"]["syncwarp_exchange"] == []


# -- refconv check: warp_shuffle under the simulator, the warp-synchronous reduction hazard ---

HAZARD_PLUGIN = '''
import sys
sys.path.insert(0, {meta!r})
from hazard_impls_warp import backend
'''


def _check(tmp_path, env, backend, *args):
    from helpers import refconv_cli
    p = refconv_cli("check", "--backend", backend, "--quiet", "--no-save", "--seed", "0", "--json", "r.json",
                    *args, env=env, cwd=tmp_path, timeout=900)
    from refconv.variant_id import VariantId
    rows = {}
    if (tmp_path / "r.json").exists():
        rows = {VariantId.parse(r["variant"]).name: r for r in json.loads((tmp_path / "r.json").read_text())["results"]}
    return p, rows


def _sim_env():
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_ENABLE_CUDASIM", "REFCONV_CUDA",
                                                            "REFCONV_SANITIZE", "REFCONV_SIM_SCHEDULER")}
    env["REFCONV_DATABASE"] = "none"
    return env


def _sanitizer_flags():
    """The flags a *plain* simulated run needs to sanitize: none, the sanitizer is on by default
    under the simulator (issue 23 point 2)."""
    return ()


def test_refconv_list_under_the_simulator_shows_every_numba_cuda_variant_available(tmp_path):
    from helpers import refconv_cli
    env = dict(_sim_env(), COLUMNS="250")
    p = refconv_cli("list", "--backend", "numba_cuda", "--cuda", "sim", env=env, cwd=tmp_path, timeout=600)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    rows = [[c.strip() for c in ln.split("\u2502")[1:-1]] for ln in p.stdout.splitlines() if "numba_cuda" in ln]
    rows = [r for r in rows if len(r) > 3 and r[1] == "numba_cuda"]
    assert len(rows) >= 49 and ["matvec", "warp_shuffle"] in [[r[0], r[2]] for r in rows], p.stdout[-3000:]
    assert [r for r in rows if r[3] != "yes"] == [], p.stdout[-3000:]


def test_matvec_warp_shuffle_passes_under_the_simulator(tmp_path):
    p, rows = _check(tmp_path, _sim_env(), "numba_cuda", "--cuda", "sim", "--op", "matvec",
                     "--variant", "warp_shuffle", "--profile", "ci", *_sanitizer_flags())
    assert rows["warp_shuffle"]["status"] == "pass", rows["warp_shuffle"]
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]


def test_ci_run_fails_the_warp_synchronous_reduction_and_passes_its_twins(tmp_path):
    meta = str(Path(__file__).resolve().parent / "meta")
    from helpers import plugin_env
    env = plugin_env(tmp_path / "site", {"hazard_warp": HAZARD_PLUGIN.format(meta=meta)}, base_env=_sim_env())
    p, rows = _check(tmp_path, env, "hazard_warp", "--cuda", "sim", "--profile", "ci", *_sanitizer_flags())
    out = p.stdout[-3000:] + p.stderr[-3000:]
    assert set(rows) == {"warp_sync_reduction", "warp_sync_reduction_syncwarp", "warp_sync_reduction_shfl"}, out
    bug = rows["warp_sync_reduction"]
    assert bug["status"] == "fail", bug
    races = [f for f in bug.get("findings") or [] if f["class"] == "shared-race"]
    assert races and races[0]["kernel"].endswith("warp_sync") and races[0]["array"] == "s", bug
    for twin in ("warp_sync_reduction_syncwarp", "warp_sync_reduction_shfl"):
        assert rows[twin]["status"] == "pass", rows[twin]
    assert p.returncode == 1, out
