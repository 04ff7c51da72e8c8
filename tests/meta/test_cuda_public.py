"""The public numba-cuda tooling (``refconv.cuda``) and ``findings.collecting()``: the fast tier.

The end-to-end proof with a third-party plugin is tests/test_third_party_cuda.py (slow)."""
import ast
import subprocess
import sys
from pathlib import Path

from refconv import findings

ROOT = Path(__file__).resolve().parents[2]


def _py(code: str, **env_over) -> subprocess.CompletedProcess:
    import os
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_ENABLE_CUDASIM", "REFCONV_CUDA",
                                                            "REFCONV_SIM_SCHEDULER")}
    env.update(env_over)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)


def test_collecting_is_true_only_inside_a_collection():
    assert not findings.collecting()
    with findings.collect() as outer:
        assert findings.collecting()
        with findings.collect():
            assert findings.collecting()
        assert findings.collecting()
        findings.report("x", "y")
    assert not findings.collecting()
    assert outer == [{"class": "x", "message": "y"}]


def test_the_sanitizer_uses_the_public_collecting_not_the_private_stack():
    src = (ROOT / "tooling" / "cuda" / "sanitizer" / "_core.py").read_text()
    assert "findings._local" not in src and "findings.collecting()" in src


def _imports(path: Path) -> set:
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            mod = ("refconv." if node.level else "") + (node.module or "")
            out.add(mod)
            out |= {f"{mod}.{a.name}" for a in node.names}
    return out


def test_no_engine_module_imports_refconv_cuda_or_a_backend():
    for path in sorted((ROOT / "refconv").glob("*.py")):
        if path.name in ("cuda.py", "opencl.py", "triton.py"):   # the facades for plugins and backends
            continue
        bad = {m for m in _imports(path) if m.startswith(("refconv.cuda", "refconv.opencl", "refconv.triton",
                                                          "refconv.backends", "refconv.tooling"))
               or m in ("refconv..cuda", "refconv..opencl", "refconv..triton")}
        assert not bad, f"{path.name} imports {bad}"


def test_refconv_cuda_exports_its_api_without_importing_numba_cuda():
    p = _py("import sys, refconv.cuda as rc\n"
            "missing = [n for n in rc.__all__ if not hasattr(rc, n)]\n"
            "assert not missing, missing\n"
            "assert 'numba.cuda' not in sys.modules\n"
            "print(sorted(rc.__all__))")
    assert p.returncode == 0, p.stderr
    for name in ("mode", "configure", "cuda", "reason", "device_out", "copy_back", "to_device_poisoned",
                 "scheduler_installed", "sanitizing", "preflight", "compile_check"):
        assert f"'{name}'" in p.stdout


def test_configure_sim_reaches_a_later_plain_numba_cuda_import_and_its_scheduler():
    """The mode and the scheduler reach code that imports ``numba.cuda`` itself after the
    backends are configured (a plugin's ``variants()``), not only ``refconv.cuda.cuda()``."""
    p = _py("import refconv.cuda as rc\n"
            "rc.configure('sim')\n"
            "assert not rc.scheduler_installed()\n"
            "from numba import cuda\n"
            "from numba.cuda.core import config\n"
            "assert config.ENABLE_CUDASIM, 'numba.cuda imported in GPU mode'\n"
            "assert rc.mode() == 'sim' and rc.reason() is None, (rc.mode(), rc.reason())\n"
            "assert rc.scheduler_installed(), 'scheduler not armed'\n"
            "import numpy as np\n"
            "@cuda.jit\n"
            "def k(x):\n"
            "    x[cuda.grid(1)] += 1\n"
            "x = np.zeros(8)\n"
            "k[2, 4](x)\n"
            "assert (x == 1).all()\n"
            "print('ok')")
    assert p.returncode == 0 and "ok" in p.stdout, p.stdout + p.stderr


def test_scheduler_env_opt_out_keeps_the_simulators_own():
    p = _py("import refconv.cuda as rc\n"
            "rc.configure('sim')\n"
            "from numba import cuda\n"
            "assert not rc.scheduler_installed()\n"
            "print('ok')", REFCONV_SIM_SCHEDULER="numba")
    assert p.returncode == 0 and "ok" in p.stdout, p.stdout + p.stderr


def test_device_out_uploads_the_poison_and_copy_back_restores_any_layout():
    p = _py("import numpy as np, refconv.cuda as rc\n"
            "rc.configure('sim')\n"
            "out = np.full((3, 4), np.nan)\n"
            "d = rc.device_out(out)\n"
            "assert d.shape == (3, 4) and np.isnan(d.copy_to_host()).all()\n"
            "h = d.copy_to_host(); h[0, 0] = 7.0; d.copy_to_device(h)\n"
            "o2 = np.full((4, 3), np.nan).T\n"
            "rc.copy_back(d, o2)\n"
            "assert o2[0, 0] == 7.0 and np.isnan(o2[1, 1])\n"
            "print('ok')")
    assert p.returncode == 0 and "ok" in p.stdout, p.stdout + p.stderr


def test_preflight_does_nothing_without_compile():
    import refconv.cuda as rc
    assert rc.preflight([], {}) == {} and rc.preflight([], {"compile": False}) == {}
