"""Backend preflight (e.g. ``--compile``): error findings fail a variant, ``*-info`` findings are
reports only, and a variant that cannot run here but whose backend can is still preflighted."""
import pytest

from refconv import Backend, Variant, preflight, registry
from refconv.runner import VariantResult


def _v(name, available=lambda: None):
    return Variant("matvec", "pf", name, run=lambda problem, out, **_: out, available=available)


GOOD, BAD, GPU_ONLY = _v("good"), _v("bad"), _v("gpu_only", available=lambda: "needs a GPU")


def _preflight(variants, options):
    out = {}
    for v in variants:
        out[v.id] = [{"class": "compile-info", "message": f"{v.name}: 20 registers"}]
        if v.name in ("bad", "gpu_only") and options.get("strict"):
            out[v.id].append({"class": "compile-error", "message": f"{v.name}: shape not a constant"})
    return out


@pytest.fixture
def pf_backend(monkeypatch):
    b = Backend("pf", variants=lambda: [GOOD, BAD, GPU_ONLY], preflight=_preflight)
    monkeypatch.setattr(registry, "backends", lambda: {"pf": b})
    return b


def test_preflight_runs_over_unavailable_variants_of_an_available_backend(pf_backend):
    found = preflight.run([GOOD, BAD, GPU_ONLY], {"strict": True})
    assert set(found) == {GOOD.id, BAD.id, GPU_ONLY.id}


def test_preflight_skips_a_backend_that_cannot_run(monkeypatch):
    b = Backend("pf", variants=lambda: [GOOD], preflight=_preflight, available=lambda: "no toolchain")
    monkeypatch.setattr(registry, "backends", lambda: {"pf": b})
    assert preflight.run([GOOD], {"strict": True}) == {}


def test_error_finding_fails_a_passing_and_an_unavailable_variant(pf_backend):
    found = preflight.run([GOOD, BAD, GPU_ONLY], {"strict": True})
    good, bad = VariantResult(GOOD.id, "pass"), VariantResult(BAD.id, "pass")
    gpu = VariantResult(GPU_ONLY.id, "unavailable", reason="needs a GPU")
    for r in (good, bad, gpu):
        preflight.apply(r, found[r.variant])
    assert good.status == "pass" and good.findings[0]["class"] == "compile-info"
    assert bad.status == "fail" and "[compile-error] bad: shape not a constant" in bad.reason
    assert gpu.status == "fail" and "gpu_only" in gpu.reason


def test_info_findings_keep_an_unavailable_variant_unavailable_and_say_so(pf_backend):
    r = VariantResult(GPU_ONLY.id, "unavailable", reason="needs a GPU")
    preflight.apply(r, preflight.run([GPU_ONLY], {})[GPU_ONLY.id])
    assert r.status == "unavailable" and "preflight passed" in r.reason


def test_a_failure_found_by_the_check_is_not_overwritten(pf_backend):
    r = VariantResult(BAD.id, "fail", reason="row 3 differs")
    preflight.apply(r, preflight.run([BAD], {"strict": True})[BAD.id])
    assert r.status == "fail" and r.reason == "row 3 differs" and len(r.findings) == 2


def test_the_defaults_mode_compiles_the_default_parameters_only_and_a_bad_mode_is_named():
    from refconv import Param, Variant
    from refconv.compile_specs import specialisations
    v = Variant(op="matvec", backend="x", name="y", run=lambda problem, out, t=32: None,
                params=(Param("t", (32, 64, 128), default=32),), supports={"dtype": ("float32",)})
    assert {p["t"] for p, _ in specialisations(v, "cover")} == {32, 64, 128}
    assert {p["t"] for p, _ in specialisations(v, "defaults")} == {32}
    with pytest.raises(ValueError, match="'most' not accepted; accepted: cover, all, defaults"):
        specialisations(v, "most")
