"""The GPU-less compile check: a kernel the simulator accepts but the real compiler rejects is a
compile-error; a clean kernel compiles, with resource info; a crash is never a pass."""
from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("numba_cuda")
HERE = Path(__file__).resolve().parent

cc = importlib.import_module("refconv.tooling.cuda.compile_check")  # the package (refconv.cuda.compile_check is a function)
from refconv.variant import Param, Variant  # noqa: E402


def _nvvm_available():
    import subprocess
    code = ("import os; os.environ['NUMBA_ENABLE_CUDASIM']='0'\n"
            "from numba import cuda, float32\n"
            "def k(a):\n    a[0] = 1\n"
            "cuda.compile_ptx(k, (float32[:],), cc=(9, 0)); print('OK')")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                       env=dict(os.environ, NUMBA_ENABLE_CUDASIM="0"))
    return "OK" in p.stdout


pytestmark = pytest.mark.skipif(not _nvvm_available(), reason="no NVVM (pip install 'numba-cuda[cu13]')")


# module-level runs: the worker imports them by module + qualname
def run_global_shape(problem, out, tpb=16):
    from sanitizer_corpus import cuda_kernels as ck
    return ck.run_global_shape()


def run_clean(problem, out, tpb=16):
    from sanitizer_corpus import cuda_kernels as ck
    ck.run_clean_tile()
    return ck.run_clean_reduce()


def run_corpus_except_compile_bug(problem, out, tpb=16):
    from sanitizer_corpus import cuda_kernels as ck
    for name, (run, *_) in ck.CASES.items():
        if name != "global_shape":
            run()


def run_raises(problem, out, tpb=16):
    raise RuntimeError("boom before any launch")


def _variant(name, run):
    return Variant(op="matvec", backend="numba_cuda", name=name, run=run,
                   supports={"dtype": ("float32",)}, params=(Param("tpb", (16, 32)),))


@pytest.fixture(scope="module")
def result():
    os.environ["PYTHONPATH"] = os.pathsep.join([str(HERE)] + ([os.environ["PYTHONPATH"]] if os.environ.get("PYTHONPATH") else []))
    vs = [_variant("bad_shape", run_global_shape), _variant("clean", run_clean), _variant("raises", run_raises),
          _variant("corpus", run_corpus_except_compile_bug)]
    return cc.preflight(vs, {"cc": "sm_90"})


def test_module_global_shape_is_a_compile_error(result):
    from sanitizer_corpus import cuda_kernels as ck
    fs = result["matvec/numba_cuda/bad_shape"]
    errs = [f for f in fs if f["class"] == "compile-error"]
    assert errs, fs
    e = errs[0]
    assert e["kernel"] == "global_shape" and e["file"].endswith("cuda_kernels.py")
    assert "shared.array" in e["message"] or "array" in e["message"]
    assert e["cc"] == "sm_90" and e["specialisation"]["params"] in ({"tpb": 16}, {"tpb": 32})


def test_clean_kernels_compile_with_resource_info(result):
    fs = result["matvec/numba_cuda/clean"]
    assert [f for f in fs if f["class"] != "compile-info"] == [], fs
    kernels = {f["kernel"] for f in fs}
    assert {"clean_tile_transpose", "clean_reduce"} <= kernels
    if any("regs" in f for f in fs):
        f = next(f for f in fs if f["kernel"] == "clean_reduce" and "regs" in f)
        assert f["regs"] > 0 and f["smem"] >= 128 * 4


def test_every_corpus_kernel_but_the_compile_bug_compiles_for_a_gpu(result):
    # the corpus runs on a real GPU too (gpu_driver.py): a kernel only the simulator accepts
    # (e.g. a shared shape written N1 + 2 inside the kernel) would leave its row of the
    # comparison table unmeasured
    from sanitizer_corpus import cuda_kernels as ck
    fs = result["matvec/numba_cuda/corpus"]
    assert [f for f in fs if f["class"] != "compile-info"] == [], fs
    expected = {k for name, (_, _, _, k) in ck.CASES.items() if name != "global_shape"}
    assert expected <= {f["kernel"] for f in fs}


def test_a_variant_that_cannot_be_traced_is_not_a_pass(result):
    fs = result["matvec/numba_cuda/raises"]
    assert fs and all(f["class"] == "compile-check-failed" for f in fs)
    assert "boom" in fs[0]["message"]


def test_parse_cc():
    assert cc.parse_cc("sm_90") == (9, 0) == cc.parse_cc("90") == cc.parse_cc("9.0") == cc.parse_cc((9, 0))
    assert cc.parse_cc("sm_120") == (12, 0) and cc.parse_cc("sm_90a") == (9, 0)


def test_specialisations_cover_every_param_value():
    v = Variant(op="matvec", backend="numba_cuda", name="x", run=run_clean,
                supports={"dtype": ("float32", "float64")},
                params=(Param("a", (1, 2, 3), 2), Param("b", (7, 8))))
    specs = cc.specialisations(v)
    seen_a = {p["a"] for p, _ in specs}
    seen_b = {p["b"] for p, _ in specs}
    assert seen_a == {1, 2, 3} and seen_b == {7, 8}
    assert {d.split("dtype=")[1].split(",")[0] for _, d in specs} == {"float32", "float64"}
    assert len(cc.specialisations(v, "all")) == 2 * 6


def test_pytest_plugin_compile_flag_checks_a_variant_that_cannot_run_here(tmp_path):
    """``--refconv-compile`` runs the compile check from pytest too; ``warp_shuffle`` cannot run
    under the simulator without refconv's scheduler (``REFCONV_SIM_SCHEDULER=numba``: no warp
    shuffles) but is still compiled for sm_90 and says so in its skip."""
    import subprocess
    env = dict(os.environ, REFCONV_SIM_SCHEDULER="numba")
    p = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--refconv", "--refconv-backend",
                        "numba_cuda", "--refconv-variant", "warp_shuffle", "--refconv-sanitize",
                        "--refconv-compile", "-rs"], cwd=tmp_path, capture_output=True, text=True, timeout=600,
                       env=env)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-2000:]
    assert "1 skipped" in p.stdout and "preflight passed" in p.stdout, p.stdout[-3000:]


def test_ptx_census_counts_a_kernels_instructions_by_kind():
    """lab/probes/ptx_census.py (docs/performance.md): a variant's kernels compiled to PTX without a
    GPU, instructions counted by kind."""
    import subprocess
    env = {k: v for k, v in os.environ.items() if k not in ("REFCONV_CUDA", "NUMBA_ENABLE_CUDASIM")}
    p = subprocess.run([sys.executable, str(HERE.parent / "lab" / "probes" / "ptx_census.py"), "filter2d/numba_cuda/GM"],
                       capture_output=True, text=True, timeout=300, env=env)
    assert p.returncode == 0, p.stderr[-3000:]
    line = next(x for x in p.stdout.splitlines() if x.startswith("filter2d/numba_cuda/GM kernel"))
    total = int(line.split(": ")[1].split()[0])
    counts = dict((k.rsplit(" ", 1)[0], int(k.rsplit(" ", 1)[1])) for k in line.split("instructions: ")[1].split(", "))
    assert sum(counts.values()) == total > 50
    assert counts["store global"] == 1 and counts["int64 arith"] > 0 and counts["load global"] >= 9  # a 3x3 window


def test_a_compile_params_value_not_accepted_is_a_usage_error_naming_it(tmp_path):
    import subprocess
    env = dict(os.environ, REFCONV_COMPILE_PARAMS="x")
    p = subprocess.run([sys.executable, "-m", "refconv", "check", "--compile", "--backend", "numba_cuda", "--variant",
                        "matvec/numba_cuda/thread_per_row", "--examples", "1", "--no-save"], cwd=tmp_path,
                       capture_output=True, text=True, timeout=300, env=env)
    assert p.returncode == 2, p.stdout[-2000:] + p.stderr[-2000:]
    assert [s for s in p.stderr.splitlines() if s.strip()] == [
        "refconv check: REFCONV_COMPILE_PARAMS='x' not accepted; accepted: cover, all, defaults"]


def test_a_compile_error_gives_its_reason_first_and_keeps_the_signature_for_the_json():
    from refconv import preflight
    from refconv.runner import VariantResult
    from refconv.tooling.cuda.compile_check._judge import judge
    sig = "(" + ", ".join(["array(float64, 1d, C)"] * 7 + ["int64"] * 16) + ")"
    rec = {"variant": "conv2d/numba_cuda/best", "key": "k", "kernel": "kern", "file": "<gen>", "line": 1,
           "signature": sig, "griddim": [1, 1, 8], "blockdim": [8, 16, 1], "sharedmem": 0, "max_registers": None,
           "host_smem": 49156, "specialisation": {"params": {"tile": "64x32k32"}, "problem": "conv2d:..."}}
    err = ("error   : Entry function '_ZN8__main__4kernB2v1' uses too much shared data (0xc004 bytes, 0xc000 max)\n"
           "ERROR 9: complete")
    out: dict = {}
    judge([rec], {"k": {"error": err, "stage": "nvJitLink"}}, (9, 0), out)
    (f,) = out["conv2d/numba_cuda/best"]
    assert f["class"] == "compile-error" and f["signature"] == sig
    assert f["message"].startswith("nvJitLink: uses 49156 bytes shared, limit 49152 -- kernel kern does not compile")
    assert sig not in f["message"]
    r = VariantResult("conv2d/numba_cuda/best", "pass")
    preflight.apply(r, [f])
    assert r.reason.startswith("preflight: [compile-error] nvJitLink: uses 49156 bytes shared, limit 49152")


def test_kernels_that_compile_alike_share_a_fingerprint_and_others_do_not():
    from types import SimpleNamespace

    from refconv.tooling.cuda.compile_check._fingerprint import Unfingerprintable, fingerprint

    def make(value, reads=None):
        def kern(a):
            a[0] = value
        return SimpleNamespace(py_func=kern, targetoptions={"fastmath": False})

    assert fingerprint(make(1)) == fingerprint(make(1))             # a launch parameter the code does not change
    assert fingerprint(make(1)) != fingerprint(make(2))             # a closure constant compiled in
    assert fingerprint(make(np.float32(1))) != fingerprint(make(np.float64(1)))
    assert fingerprint(make(np.arange(3))) != fingerprint(make(np.arange(1, 4)))
    with pytest.raises(Unfingerprintable):                          # compiled every time, never cached
        fingerprint(make(object()))


def test_a_second_run_takes_every_kernel_from_the_cache_and_says_so(tmp_path, monkeypatch, capfd):
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(HERE)] + ([os.environ["PYTHONPATH"]] if os.environ.get("PYTHONPATH") else [])))
    monkeypatch.setenv("REFCONV_COMPILE_CACHE", str(tmp_path / "cache"))
    v = _variant("clean", run_clean)
    first = cc.preflight([v], {"cc": "sm_90"})[v.id]
    err1 = capfd.readouterr().err
    second = cc.preflight([v], {"cc": "sm_90"})[v.id]
    err2 = capfd.readouterr().err
    assert all(f["class"] == "compile-info" for f in first + second)
    assert not any(f.get("cached") for f in first) and all(f.get("cached") for f in second)
    assert [f["message"] for f in first] == [f["message"] for f in second]
    kernels = len({f["kernel"] for f in first})
    assert f"0 from the cache {tmp_path / 'cache'}, {kernels} to compile" in err1      # said up front
    assert f"{kernels}/{kernels} kernels compiled" in err1
    assert f"{kernels} from the cache {tmp_path / 'cache'}, 0 to compile" in err2


def test_a_worker_past_its_time_limit_is_killed_and_never_a_pass(monkeypatch):
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(HERE)] + ([os.environ["PYTHONPATH"]] if os.environ.get("PYTHONPATH") else [])))
    monkeypatch.setenv("REFCONV_COMPILE_CACHE", "off")
    v = _variant("clean", run_clean)
    fs = cc.preflight([v], {"cc": "sm_90", "compile_timeout": 0.2, "compile_jobs": 1})[v.id]
    assert fs and all(f["class"] == "compile-check-failed" for f in fs), fs
    assert "hang" in fs[0]["message"] and "compile-check worker" in fs[0]["message"]
