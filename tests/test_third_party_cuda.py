"""A third-party numba-cuda plugin, written from docs/plugins.md alone, gets the built-in backend's
tooling through the public ``refconv.cuda``: it follows ``--cuda``, runs on refconv's simulator
scheduler, keeps the checker's poison on the device, has its racy kernel named by ``--sanitize``
and its uncompilable kernel by ``--compile``; and a plugin importing ``numba.cuda`` itself in
``variants()`` no longer knocks the built-in variants out of a simulator run (issue 13 item 4).
The kit's options are the plugin's own, selected alone, whether it passes
``**refconv.cuda.backend_fields()`` (tests/plugins/refconv-cudarace) or only some of the kit's
hooks (``tpcuda`` below): no "has no effect" warning, and the options applied (issues 40, 43).

Each test pairs a bug with its fixed twin in the same run, so a tool that flags everything (or
nothing) fails the test.  The plugins are written on the fly (``plugin_factory``)."""
import json

import pytest

from helpers import ROOT, plugin_env, refconv_cli

#: the plugin, as docs/plugins.md section "Running, sanitizing and compile-checking your own
#: kernels" writes it: every kernel is kron (exact), float64, one thread per element of C
TPCUDA = '''
import numpy as np
import refconv.cuda as rc
from refconv import Backend, Param, Range, Variant

T = 6          # a module-level size: the shape_bug kernel computes a shared shape from it
_K = {}
cuda = None    # a module global: the simulator swaps the kernel's global `cuda` (not a closure's)


def kernels():
    global cuda
    if _K:
        return _K
    cuda = rc.cuda()                      # numba.cuda in the mode --cuda chose
    from numba import float64

    @cuda.jit
    def kron_plain(a, b, c, m, n, p, q):
        x, y = cuda.grid(2)
        if y < m * p and x < n * q:
            c[y, x] = a[y // p, x // q] * b[y % p, x % q]

    @cuda.jit
    def kron_skip_zero(a, b, c, m, n, p, q):
        x, y = cuda.grid(2)
        if y < m * p and x < n * q:
            s = a[y // p, x // q]
            if s != 0:                        # "a zero of A leaves its block of C alone"
                c[y, x] = s * b[y % p, x % q]

    def staged(barrier):
        @cuda.jit
        def kron_staged(a, b, c, p, q):       # one block per element of A, one thread per element of B
            s = cuda.shared.array((8, 8), float64)
            k = cuda.threadIdx.y
            l = cuda.threadIdx.x
            s[k, l] = b[k, l]
            if barrier:
                cuda.syncthreads()
            kk = p - 1 - k                    # each thread uses what another thread staged
            ll = q - 1 - l
            c[cuda.blockIdx.y * p + kk, cuda.blockIdx.x * q + ll] = a[cuda.blockIdx.y, cuda.blockIdx.x] * s[kk, ll]
        return kron_staged

    @cuda.jit
    def kron_shape(a, b, c, m, n, p, q):
        s = cuda.shared.array((T + 2, T + 2), float64)   # the simulator runs it; NVVM rejects it
        x, y = cuda.grid(2)
        if y < m * p and x < n * q:
            if cuda.threadIdx.x == 0 and cuda.threadIdx.y == 0:
                s[0, 0] = 0.0                 # one writer: the sanitizer, on by default, names a race otherwise
            c[y, x] = a[y // p, x // q] * b[y % p, x % q]

    @cuda.jit
    def kron_shape_fixed(a, b, c, m, n, p, q):
        s = cuda.shared.array((8, 8), float64)
        x, y = cuda.grid(2)
        if y < m * p and x < n * q:
            if cuda.threadIdx.x == 0 and cuda.threadIdx.y == 0:
                s[0, 0] = 0.0                 # one writer: the sanitizer, on by default, names a race otherwise
            c[y, x] = a[y // p, x // q] * b[y % p, x % q]

    _K.update(plain=kron_plain, skip_zero=kron_skip_zero, race_bug=staged(False), race_fixed=staged(True),
              shape_bug=kron_shape, shape_fixed=kron_shape_fixed)
    return _K


def _tooling_in_place():
    # what the tests check: the mode followed --cuda, and a simulated run is on refconv's scheduler
    if rc.mode() != "sim":
        raise AssertionError(f"expected the simulator, refconv.cuda.mode() = {rc.mode()!r}")


def _grid2(problem, kernel, out, bx, zeros=False):
    cuda = rc.cuda()
    a, b = problem.inputs["a"], problem.inputs["b"]
    (m, n), (p, q) = a.shape, b.shape
    # the mistake the poison exists to catch: a zeroed device buffer instead of the checker's
    d_c = cuda.to_device(np.zeros_like(out)) if zeros else rc.device_out(out)
    grid = (rc.cdiv(n * q, bx), rc.cdiv(m * p, 4))
    rc.launch(kernel[grid, (bx, 4)], cuda.to_device(a), cuda.to_device(b), d_c, m, n, p, q)
    rc.copy_back(d_c, out)
    _tooling_in_place()
    if not rc.scheduler_installed():
        raise AssertionError("the simulated launch did not run on refconv's scheduler")
    return out


def make_run(name, zeros=False):
    def run(problem, out, bx=8):
        return _grid2(problem, kernels()[name], out, bx, zeros)
    return run


def make_staged(name):
    def run(problem, out):
        cuda = rc.cuda()
        a, b = problem.inputs["a"], problem.inputs["b"]
        (m, n), (p, q) = a.shape, b.shape
        d_c = rc.device_out(out)
        rc.launch(kernels()[name][(n, m), (q, p)], cuda.to_device(a), cuda.to_device(b), d_c, p, q)
        rc.copy_back(d_c, out)
        return out
    return run


F64 = {"dtype": ("float64",)}
ZERO_HEAVY = {**F64, "fill.a": ("zero", "delta", "onehot"), "fill.b": ("one", "exact", "ramp")}  # b finite: 0*b is 0
SMALL_B = {**F64, "p": Range(2, 8), "q": Range(2, 8)}


def _variants():
    def v(name, run, supports=F64, params=(Param("bx", (4, 8), 8),)):
        return Variant(op="kron", backend="tpcuda", name=name, run=run, supports=supports, params=params,
                       available=rc.reason, doc=name)
    return [
        v("ok_plain", make_run("plain")),
        v("ok_skip_zero_on_zeros", make_run("skip_zero", zeros=True), ZERO_HEAVY),
        v("ok_skip_zero_on_poison", make_run("skip_zero"), ZERO_HEAVY),
        v("race_bug", make_staged("race_bug"), SMALL_B, ()),
        v("race_fixed", make_staged("race_fixed"), SMALL_B, ()),
        v("shape_bug", make_run("shape_bug")),
        v("shape_fixed", make_run("shape_fixed")),
    ]


backend = Backend(name="tpcuda", variants=_variants, available=rc.reason, preflight=rc.preflight,
                  describe=rc.describe, target=rc.target)
'''

#: a plugin that does what docs/plugins.md used to warn against: ``from numba import cuda`` in
#: ``variants()``, with no ``refconv.cuda`` -- its name sorts first, so it imports numba.cuda
#: before any built-in numba_cuda kernel module is loaded
EARLY = '''
import numpy as np
from refconv import Backend, Variant


cuda = None


def _variants():
    global cuda
    from numba import cuda                 # early, and not through refconv.cuda
    import refconv.cuda as rc

    @cuda.jit
    def kron_early(a, b, c, m, n, p, q):
        x, y = cuda.grid(2)
        if y < m * p and x < n * q:
            c[y, x] = a[y // p, x // q] * b[y % p, x % q]

    def run(problem, out):
        a, b = problem.inputs["a"], problem.inputs["b"]
        (m, n), (p, q) = a.shape, b.shape
        d_c = cuda.to_device(out)
        kron_early[((n * q + 7) // 8, (m * p + 7) // 8), (8, 8)](cuda.to_device(a), cuda.to_device(b), d_c, m, n, p, q)
        out[...] = d_c.copy_to_host()
        if not rc.scheduler_installed():
            raise AssertionError("a plugin importing numba.cuda itself ran on the simulator's own scheduler")
        return out

    return [Variant(op="kron", backend="numba_cuda_early", name="direct", run=run,
                    supports={"dtype": ("float64",)})]


backend = Backend(name="numba_cuda_early", variants=_variants)
'''


def _gpu_present() -> bool:
    from refconv.tooling.cuda._env import detect_gpu
    return detect_gpu()[0]


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    e = plugin_env(tmp_path_factory.mktemp("tp_site"), {"tpcuda": TPCUDA})
    for k in ("NUMBA_ENABLE_CUDASIM", "REFCONV_CUDA", "REFCONV_SANITIZE"):
        e.pop(k, None)   # the plugin must follow --cuda, not an inherited environment
    return e


def _check(tmp_path, env, *args):
    p = refconv_cli("check", "--backend", "tpcuda", "--quiet", "--no-save", "--seed", "0", "--json", "r.json",
                    *args, env=env, cwd=tmp_path, timeout=900)
    # tpcuda passes the kit's hooks, not backend_fields(): the kit completes it, so the options
    # given (--cuda, --sanitize, --compile) are its own, never "no effect" (issues 40 and 43)
    assert "no effect" not in p.stderr, p.stderr
    from refconv.variant_id import VariantId
    rows = {}
    if (tmp_path / "r.json").exists():
        rows = {VariantId.parse(r["variant"]).name: r for r in json.loads((tmp_path / "r.json").read_text())["results"]}
    return p, rows


def test_plugin_follows_cuda_sim_and_keeps_the_poison_on_the_device(tmp_path, env):
    """--cuda sim with NUMBA_ENABLE_CUDASIM unset: the plugin's variants run (not "unavailable"),
    on refconv's scheduler; a kernel that skips zeros passes on a zeroed buffer and is named
    "never written" with ``refconv.cuda.device_out``."""
    p, rows = _check(tmp_path, env, "--cuda", "sim", "--variant", "ok_*", "--examples", "4")
    out = p.stdout + p.stderr
    assert set(rows) == {"ok_plain", "ok_skip_zero_on_zeros", "ok_skip_zero_on_poison"}, out
    assert rows["ok_plain"]["status"] == "pass", rows["ok_plain"]
    # zeros hide the unwritten elements (zero is the right answer there) ...
    assert rows["ok_skip_zero_on_zeros"]["status"] == "pass", rows["ok_skip_zero_on_zeros"]
    # ... the poisoned transfer shows them
    assert rows["ok_skip_zero_on_poison"]["status"] == "fail", rows["ok_skip_zero_on_poison"]
    assert "never written" in rows["ok_skip_zero_on_poison"]["reason"], rows["ok_skip_zero_on_poison"]
    assert p.returncode == 1, out


def test_plugin_follows_cuda_gpu_without_a_gpu_with_exit_2(tmp_path, env):
    if _gpu_present():
        pytest.skip("this machine has a GPU")
    p, _ = _check(tmp_path, env, "--cuda", "gpu", "--variant", "ok_plain")
    assert p.returncode == 2, p.stdout + p.stderr
    assert "--cuda gpu" in p.stderr, p.stderr


def test_sanitize_names_the_plugins_race_and_passes_its_fixed_twin(tmp_path, env):
    p, rows = _check(tmp_path, env, "--sanitize", "--variant", "race_*", "--examples", "3")
    out = p.stdout + p.stderr
    assert p.returncode == 1, out
    assert rows["race_fixed"]["status"] == "pass", rows["race_fixed"]
    bug = rows["race_bug"]
    assert bug["status"] == "fail", bug
    races = [f for f in bug["findings"] if f["class"] == "shared-race"]
    assert races and races[0]["kernel"].endswith("kron_staged") and races[0]["array"] == "s", bug


def test_compile_names_the_plugins_uncompilable_kernel_and_passes_its_fixed_twin(tmp_path, env):
    pytest.importorskip("cuda.bindings.nvjitlink", reason="the compile check needs numba-cuda[cu13] (NVVM)")
    p, rows = _check(tmp_path, env, "--cuda", "sim", "--compile", "--variant", "shape_*", "--examples", "2")
    out = p.stdout + p.stderr
    assert p.returncode == 1, out
    assert rows["shape_fixed"]["status"] == "pass", rows["shape_fixed"]
    bug = rows["shape_bug"]
    assert bug["status"] == "fail", bug
    assert "compile-error" in bug["reason"] and "kron_shape" in bug["reason"], bug


def test_a_plugin_importing_numba_cuda_in_variants_leaves_the_builtin_variants_running(tmp_path):
    env = plugin_env(tmp_path / "site", {"numba_cuda_early": EARLY})
    for k in ("NUMBA_ENABLE_CUDASIM", "REFCONV_CUDA", "REFCONV_SANITIZE"):
        env.pop(k, None)
    p = refconv_cli("check", "--backend", "numba_cuda*", "--op", "kron", "--cuda", "sim", "--examples", "2",
                    "--quiet", "--no-save", "--seed", "0", "--json", "r.json", env=env, cwd=tmp_path, timeout=900)
    out = p.stdout + p.stderr
    assert p.returncode == 0, out
    rows = {r["variant"]: r["status"] for r in json.loads((tmp_path / "r.json").read_text())["results"]}
    assert rows == {"kron/numba_cuda_early/direct": "pass", "kron/numba_cuda/block_launches": "pass",
                    "kron/numba_cuda/single_launch": "pass", "kron/numba_cuda/streamed": "pass"}, out


def _doc_example() -> str:
    """The worked example of docs/plugins.md, section *Running, sanitizing and compile-checking
    your own kernels*, subsection numba-cuda: its first ``python`` block."""
    text = (ROOT / "docs" / "plugins.md").read_text()
    sec = text[text.index("## Running, sanitizing and compile-checking your own kernels"):]
    sec = sec[sec.index("### numba-cuda"):]
    start = sec.index("```python\n") + len("```python\n")
    return sec[start:sec.index("```", start)]


BARRIER = "            cuda.syncthreads()     # delete it: `refconv check --sanitize` names a shared-race\n"


@pytest.mark.parametrize("barrier", [True, False], ids=["as_documented", "barrier_deleted"])
def test_the_documented_plugin_passes_and_its_race_is_named_by_sanitize(tmp_path, barrier):
    src = _doc_example()
    assert BARRIER in src
    if not barrier:
        src = src.replace(BARRIER, "")
    env = plugin_env(tmp_path / "site", {"mycuda": src})
    for k in ("NUMBA_ENABLE_CUDASIM", "REFCONV_CUDA", "REFCONV_SANITIZE"):
        env.pop(k, None)
    compile_ = []
    if barrier:   # as documented it also compiles for sm_90, where NVVM is installed
        try:
            import cuda.bindings.nvjitlink  # noqa: F401 -- NVVM present
            compile_ = ["--compile"]
        except ImportError:
            pass
    p = refconv_cli("check", "--backend", "mycuda", "--sanitize", *compile_, "--examples", "3", "--seed", "0",
                    "--quiet", "--no-save", "--json", "r.json", env=env, cwd=tmp_path, timeout=900)
    out = p.stdout + p.stderr
    (row,) = json.loads((tmp_path / "r.json").read_text())["results"]
    if barrier:
        assert p.returncode == 0 and row["status"] == "pass", out
        if compile_:
            assert any(f["class"] == "compile-info" for f in row["findings"]), row
    else:
        assert p.returncode == 1 and row["status"] == "fail", out
        # the threads' order decides whether an uninitialized-read of the same element comes first
        races = [f for f in row["findings"] if f["class"] == "shared-race"]
        assert races and races[0]["kernel"].endswith("matvec_block_per_row") and races[0]["array"] == "s", row


#: tests/plugins/refconv-cudarace: ``Backend(..., **refconv.cuda.backend_fields())``, two races a
#: GPU's values miss (lab/runs/2026-11-28-h200-plugin-sanitize) and their fixed twins
CUDARACE = (ROOT / "tests" / "plugins" / "refconv-cudarace" / "src" / "refconv_cudarace" / "__init__.py").read_text()


def test_a_plugin_on_backend_fields_selected_alone_gets_cuda_sim_sanitize_and_compile(tmp_path):
    """--cuda sim --sanitize (and --compile where NVVM is installed) with only the plugin selected:
    no warning, the simulator sanitizer names the tiled kernel's missing barrier and the warp
    reduction's missing syncwarp, the fixed twins pass (and compile for sm_90)."""
    env = plugin_env(tmp_path / "site", {"cudarace": CUDARACE})
    for k in ("NUMBA_ENABLE_CUDASIM", "REFCONV_CUDA", "REFCONV_SANITIZE"):
        env.pop(k, None)
    compile_ = []
    try:
        import cuda.bindings.nvjitlink  # noqa: F401 -- NVVM present
        compile_ = ["--compile"]
    except ImportError:
        pass
    p = refconv_cli("check", "--backend", "cudarace", "--cuda", "sim", "--sanitize", *compile_, "--examples", "3",
                    "--seed", "0", "--quiet", "--no-save", "--json", "r.json", env=env, cwd=tmp_path, timeout=900)
    out = p.stdout + p.stderr
    assert "no effect" not in p.stderr and p.returncode == 1, out
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["backend_options"]["cuda"] == "sim" and report["backend_options"]["sanitize"] is True
    rows = {r["variant"].rsplit("/", 1)[1]: r for r in report["results"]}
    assert rows["tiled"]["status"] == rows["warp_syncwarp"]["status"] == "pass", out
    for name, kernel in (("tiled_no_barrier", "matvec_tiled"), ("warp_no_syncwarp", "matvec_warp_reduce")):
        races = [f for f in rows[name]["findings"] if f["class"] == "shared-race"]
        assert rows[name]["status"] == "fail" and races, rows[name]
        assert races[0]["kernel"].endswith(kernel) and races[0]["array"] == "s", races[0]
    if compile_:
        for name in ("tiled", "warp_syncwarp"):
            assert any(f["class"] == "compile-info" for f in rows[name]["findings"]), rows[name]
