"""What a backend declares so that the core names none: ``Backend.env_prefixes`` (the environment
its workers inherit), ``Backend.versions`` (the modules whose versions the bench records) and
``Backend.real_target`` (how to select a real target, quoted where a simulator is refused), read
through ``registry.env_prefixes()`` / ``version_modules()`` / ``real_target()``."""
from types import SimpleNamespace

from refconv import Backend, Variant, procs, registry
from refconv.registry import BackendLoadError
from refconv.variant import Target


def _backend(name, **kw):
    v = Variant("matvec", name, "k", run=lambda problem, out, **_: out)
    return Backend(name, variants=lambda: [v], **kw)


def test_a_backend_declaring_nothing_keeps_working_with_empty_declarations():
    b = Backend("plain", variants=lambda: [])
    assert (tuple(b.env_prefixes), tuple(b.versions), b.real_target) == ((), (), "")


def test_env_prefixes_are_refconvs_and_every_loaded_backends_without_repeats(monkeypatch):
    monkeypatch.setattr(registry, "backends", lambda: {
        "a": _backend("a", env_prefixes=("ZZA_", "SHARED_")), "b": _backend("b", env_prefixes=("SHARED_",)),
        "c": _backend("c"), "broken": BackendLoadError("broken", ImportError("no module"))})
    assert registry.env_prefixes() == ("REFCONV_", "SHARED_", "ZZA_")


def test_a_worker_inherits_the_variables_of_declared_prefixes_only(monkeypatch):
    monkeypatch.setattr(registry, "backends", lambda: {"a": _backend("a", env_prefixes=("ZZA_",))})
    monkeypatch.setenv("ZZA_SETTING", "1")
    monkeypatch.setenv("REFCONV_DECL_TEST", "2")
    monkeypatch.setenv("ZZB_SETTING", "3")
    env = procs.worker_env()
    assert env["ZZA_SETTING"] == "1" and env["REFCONV_DECL_TEST"] == "2" and "ZZB_SETTING" not in env


def test_version_modules_follow_the_backends_in_order_without_repeats(monkeypatch):
    monkeypatch.setattr(registry, "backends", lambda: {
        "a": _backend("a", versions=("liba", "common")), "b": _backend("b", versions=("common", "libb")),
        "broken": BackendLoadError("broken", ImportError("no module"))})
    assert registry.version_modules() == ("liba", "common", "libb")


def _simulated(name, **kw):
    return _backend(name, target=lambda: Target("a test simulator", simulated=True), **kw)


def test_a_profile_refusing_a_simulator_quotes_the_backends_real_target(monkeypatch):
    with_hint, without = _simulated("declsim_hint", real_target="--where gpu"), _simulated("declsim_plain")
    monkeypatch.setattr(registry, "backends", lambda: {b.name: b for b in (with_hint, without)})
    gpu = SimpleNamespace(name="gpu", real_targets_only=True)
    said = registry.simulated_reason(with_hint.variants()[0], gpu)
    assert "a test simulator" in said and said.endswith("or a real target (--where gpu)")
    plain = registry.simulated_reason(without.variants()[0], gpu)
    assert "a test simulator" in plain and "real target" not in plain
    assert registry.real_target("declsim_hint") == "--where gpu" and registry.real_target("missing") == ""


def test_the_builtin_backends_declare_their_toolchains():
    from refconv.backends import numba_cpu, numba_cuda, opencl, triton
    assert "NUMBA_" in numba_cuda.backend.env_prefixes and "numba_cuda" in numba_cuda.backend.versions
    assert "NUMBA_" in numba_cpu.backend.env_prefixes and "numba" in numba_cpu.backend.versions
    assert {"OCL", "POCL"} <= set(opencl.backend.env_prefixes) and "pyopencl" in opencl.backend.versions
    assert "triton" in triton.backend.versions
    for b in (numba_cuda.backend, opencl.backend, triton.backend):
        flags = {o.flag for o in b.options}
        assert any(f in b.real_target for f in flags), (b.name, b.real_target)


def test_plugins_get_the_declarations_through_backend_fields():
    import refconv.opencl
    import refconv.triton
    for kit, name in ((refconv.opencl, "opencl"), (refconv.triton, "triton")):
        fields = kit.backend_fields()
        builtin = registry.backends()[name]
        assert tuple(fields["versions"]) == tuple(builtin.versions)
        assert tuple(fields.get("env_prefixes", ())) == tuple(builtin.env_prefixes)
        assert fields["real_target"] == builtin.real_target
        b = Backend("plugin_" + name, variants=lambda: [], **fields)
        assert b.real_target and b.versions


def test_the_triton_names_plugins_imported_before_refconv_triton_still_work():
    import refconv.triton
    from refconv.backends.triton import backend_fields, kit
    assert kit.launch is refconv.triton.launch and backend_fields is refconv.triton.backend_fields
    assert set(refconv.triton.__all__) >= {"jit", "launch", "OUT", "HostArray", "backend_fields", "memcheck"}
    assert all(hasattr(refconv.triton, n) for n in refconv.triton.__all__)
