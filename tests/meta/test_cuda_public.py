"""The public numba-cuda tooling (``refconv.cuda``) and ``findings.collecting()``: the fast tier.

The end-to-end proof with a third-party plugin is tests/test_third_party_cuda.py (slow)."""
import ast
import subprocess
import sys
from pathlib import Path

import pytest

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


# ----------------------------------------------------------------------------- the kits' options

def test_backend_fields_carry_the_kits_options_configure_availability_and_preflight():
    import refconv.cuda as rc
    f = rc.backend_fields()
    assert [o.flag for o in f["options"]] == ["--cuda", "--sanitize", "--compile"]
    assert f["configure"] is rc.configure and f["available"] is rc.reason and f["preflight"] is rc.preflight
    assert f["describe"] is rc.describe and f["target"] is rc.target and f["bench"] is rc.BENCH


def _plugin(name, **hooks):
    from refconv import Backend, Variant
    v = Variant("matvec", name, "v", lambda problem, out: out)
    return Backend(name, lambda: [v], **hooks), v


def test_a_backend_given_some_of_a_kits_hooks_is_completed_with_the_kits_fields():
    """The plugin of issue 40 (``available=rc.reason, preflight=rc.preflight``, as the docs once
    said) owns --cuda, --sanitize and --compile and is configured by the kit; its own fields stay."""
    import refconv.cuda as rc
    import refconv.opencl as oc
    import refconv.triton as tt
    from refconv import BackendOption
    b, _ = _plugin("tp", available=rc.reason, preflight=rc.preflight)
    assert [o.flag for o in b.options] == ["--cuda", "--sanitize", "--compile"]
    assert b.configure is rc.configure and b.describe is rc.describe and b.target is rc.target
    assert b.env_prefixes == ("NUMBA_",) and b.real_target
    own = BackendOption("--mine", "mine", "a plugin's own option")
    b, _ = _plugin("tp", available=rc.reason, options=(own,), describe=lambda: "mine")
    assert [o.flag for o in b.options] == ["--mine", "--cuda", "--sanitize", "--compile"]
    assert b.describe() == "mine" and b.preflight is rc.preflight
    assert [o.flag for o in _plugin("q", available=oc.available)[0].options] == ["--opencl"]
    assert [o.flag for o in _plugin("r", available=tt.available)[0].options] == ["--triton"]
    plain, _ = _plugin("s", available=lambda: None)                     # no kit: nothing added
    assert plain.options == () and plain.preflight is None and plain.configure({}) is None


@pytest.mark.parametrize("kit, given", [
    ("cuda", {"cuda": "sim", "sanitize": True, "compile": True}),
    ("opencl", {"opencl": "oclgrind"}),
    ("triton", {"triton": "interpret"})])
@pytest.mark.parametrize("style", ["backend_fields", "one_hook"])
def test_a_kits_options_with_only_a_plugin_of_that_kit_selected_have_effect(monkeypatch, kit, given, style):
    """Only the plugin selected (the built-in backend installed beside it or not): no option of its
    kit is reported unused; with another backend selected alone each is, naming the kit's backends."""
    import importlib
    from refconv import registry
    from refconv.session import Session
    k = importlib.import_module(f"refconv.{kit}")
    hooks = k.backend_fields() if style == "backend_fields" else {"available": k.backend_fields()["available"]}
    plug, pv = _plugin("plug", **hooks)
    other, ov = _plugin("other")
    for builtin in ({}, {f"builtin_{kit}": _plugin(f"builtin_{kit}", **k.backend_fields())[0]}):
        monkeypatch.setattr(registry, "backends", lambda: {"other": other, "plug": plug, **builtin})
        s = Session(options=given)
        assert s.unused_options([pv]) == []
        lines = s.unused_options([ov])
        assert len(lines) == len(given) and all("plug" in x and "no effect" in x for x in lines), lines


def test_the_kit_configures_the_mode_through_a_plugin_when_the_builtin_backend_is_not_there():
    """configure_backends with a registry of the plugin alone: its kit-given configure sets the
    mode and the sanitizer for the process."""
    p = _py("from refconv import Backend, Variant, registry\n"
            "import refconv.cuda as rc\n"
            "from refconv.session import Session\n"
            "v = Variant('matvec', 'tp', 'v', lambda problem, out: out)\n"
            "b = Backend('tp', lambda: [v], available=rc.reason, preflight=rc.preflight)\n"
            "registry.backends = lambda: {'tp': b}\n"
            "vals = Session(options={'cuda': 'sim', 'sanitize': True}).configure()\n"
            "assert vals['cuda'] == 'sim' and vals['sanitize'] is True, vals\n"
            "assert rc.mode() == 'sim' and rc.sanitizing(), (rc.mode(), rc.sanitizing())\n"
            "assert rc.preflight([v], vals) == {}\n"
            "print('ok')")
    assert p.returncode == 0 and "ok" in p.stdout, p.stdout + p.stderr


def test_the_kits_package_attributes_stay_the_public_functions_after_their_submodules_load():
    """``preflight`` and ``compile_check`` are functions of the kit and names of its submodules;
    importing a submodule again (``python -m``, a worker) must not replace the function."""
    p = _py("import refconv.tooling.cuda as k\n"
            "from refconv.tooling.cuda.compile_check import preflight\n"
            "from refconv.tooling.cuda.preflight import preflight as pf\n"
            "import refconv.cuda as rc\n"
            "assert callable(k.compile_check) and k.compile_check.__module__ == 'refconv.tooling.cuda'\n"
            "assert k.preflight.__module__ == 'refconv.tooling.cuda' and rc.preflight is k.preflight\n"
            "print('ok')")
    assert p.returncode == 0 and "ok" in p.stdout, p.stdout + p.stderr
