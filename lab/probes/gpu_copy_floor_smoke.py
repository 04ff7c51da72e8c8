"""Smoke test of the bench's copy floor (issue 42.1) on a GPU: runs ``refconv bench`` on the
filter2d preset (both twins, the best variants) and on matvec-4096 (input far larger than output),
then checks the report: each problem's ``<op>/copy`` row was timed by device events through every
GPU copy path of the run, its ``bytes`` are the problem's minimum bytes, and every timed device row
carries ``copy_ratio`` = its median over the copy's.  Prints the floor and the ratios.

usage: .venv/bin/python lab/probes/gpu_copy_floor_smoke.py OUTDIR   (on a GPU; about a minute)
  (refconv runs as ``python -m refconv.cli`` of this Python, from the temporary directory, so that a
  checkout's refconv/ does not shadow an installed one: lab/runners/device_env.sh's set-up works too)
exit 0 when every check holds, 1 otherwise (each failed check printed)."""
import json
import subprocess
import sys
import tempfile
from pathlib import Path

PATHS = ("numba_cuda device copy", "opencl device copy")
RUNS = {
    "images": ["--preset", "filter2d-u8-3x3-3072", "--variant", "best_*"],
    "matvec": ["--preset", "matvec-4096", "--variant", "warp_shuffle", "--variant", "block_per_row"],
}


def check(rep: dict) -> list[str]:
    """What does not hold in the bench report ``rep`` (empty: all holds); prints the floors and ratios."""
    bad = []
    for res in rep["problems"]:
        rows = {r["variant"]: r for r in res["rows"]}
        copy = rows.get(f"{res['op']}/copy")
        if copy is None:
            bad.append(f"{res['name']}: no {res['op']}/copy row")
            continue
        print(f"{res['name']}: copy floor {copy.get('median_s')} s via {copy.get('library')}, "
              f"{copy.get('bytes')} bytes (problem: {res['work']['bytes']}); status {copy['status']}; "
              f"paths {copy.get('sources')}")
        if copy.get("timer") != "device events" or not copy.get("median_s"):
            bad.append(f"{res['name']}: the copy row was not timed by device events: {copy['status']}")
            continue
        if copy.get("bytes") != res["work"]["bytes"]:
            bad.append(f"{res['name']}: copy bytes {copy.get('bytes')} != the problem's {res['work']['bytes']}")
        paths = copy.get("sources") or {}
        bad += [f"{res['name']}: path {p!r} not timed: {paths.get(p)!r}" for p in PATHS
                if not isinstance(paths.get(p), float)]
        for rid, r in rows.items():
            if r.get("timer") == "device events" and r.get("median_s"):
                want, got = r["median_s"] / copy["median_s"], r.get("copy_ratio")
                print(f"  {rid:45s} {r['median_s'] * 1e6:9.2f} µs  × copy {got if got is None else round(got, 3)}")
                if got is None or abs(got - want) > 1e-9 * want:
                    bad.append(f"{res['name']}: {rid} copy_ratio {got} != {want}")
    return bad


def main() -> int:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "copy_floor_smoke")
    out.mkdir(parents=True, exist_ok=True)
    out = out.resolve()
    bad = []
    for tag, sel in RUNS.items():
        cmd = [sys.executable, "-m", "refconv.cli", "bench", "--backend", "*[al]", "--cuda", "gpu",
               "--opencl", "nvidia", "--timeout", "90", "--repeat", "20", *sel, "--json", str(out / f"{tag}.json"), "--markdown", str(out / f"{tag}.md")]
        print("$", " ".join(cmd), flush=True)
        p = subprocess.run(cmd, cwd=tempfile.gettempdir())
        if p.returncode != 0:
            bad.append(f"{tag}: refconv bench exited {p.returncode}")
            continue
        bad += check(json.loads((out / f"{tag}.json").read_text()))
    print("\n".join(["FAILED:", *bad]) if bad else "copy floor smoke: every check holds")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
