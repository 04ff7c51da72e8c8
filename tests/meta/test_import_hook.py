"""``refconv.tooling.cuda.import_hook.after_import``: callbacks run right after a module is
executed, by whoever imports it, in ascending order (the simulator scheduler before the
sanitizer)."""
import importlib
import subprocess
import sys

from refconv.tooling.cuda import import_hook, sim_scheduler
from refconv.tooling.cuda.sanitizer import _arm


def _fresh_module(tmp_path, monkeypatch, name):
    (tmp_path / f"{name}.py").write_text("VALUE = 41\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, name, raising=False)
    monkeypatch.setitem(import_hook._callbacks, name, [])
    importlib.invalidate_caches()


def test_callbacks_run_after_the_module_in_ascending_order_whoever_imports_it(tmp_path, monkeypatch):
    name = "rc_hook_target_a"
    _fresh_module(tmp_path, monkeypatch, name)
    seen = []
    late = lambda m: seen.append(("late", m.VALUE))          # noqa: E731
    early = lambda m: seen.append(("early", m.VALUE))        # noqa: E731
    assert import_hook.after_import(name, late, order=1)
    assert import_hook.after_import(name, early, order=0)
    assert import_hook.after_import(name, late, order=1)     # the same callback again: once
    assert seen == []                                        # nothing imported it yet
    importlib.import_module(name)
    assert seen == [("early", 41), ("late", 41)]


def test_an_imported_module_is_left_to_the_caller(tmp_path, monkeypatch):
    name = "rc_hook_target_b"
    _fresh_module(tmp_path, monkeypatch, name)
    importlib.import_module(name)
    seen = []
    assert import_hook.after_import(name, seen.append) is False
    assert seen == [] and import_hook.pending(name) == []


def test_the_scheduler_is_armed_before_the_sanitizer_whichever_arms_first():
    code = ("import sys\n"
            "from refconv.tooling.cuda import import_hook, sim_scheduler\n"
            "from refconv.tooling.cuda.sanitizer import _arm\n"
            "_arm.arm(); sim_scheduler.arm()\n"
            "names = [f.__qualname__ for f in import_hook.pending('numba.cuda.simulator.kernel')]\n"
            "assert 'numba.cuda' not in sys.modules\n"
            "print(names)\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "['_patch', '_on_import']"
    assert sim_scheduler.ARM_ORDER < _arm.ARM_ORDER
