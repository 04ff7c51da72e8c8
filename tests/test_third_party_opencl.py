"""A third-party pyopencl plugin, written against the public ``refconv.opencl`` module only (as
docs/plugins.md shows), installed on the fly beside the built-in backends: its kernels run on the
target ``--opencl`` selects, Oclgrind's diagnostics of its kernels reach the report as findings
(a missing barrier in its local-memory reduction is named a data race at its kernel and lines),
the poisoned output transfer makes an unwritten row ``never written``, and a kernel that does
not compile is reported with its whole build log."""
from __future__ import annotations

import json

import pytest

from helpers import plugin_env, refconv_cli

pytest.importorskip("pyopencl")

#: the plugin's OpenCL C: y = M v, one work-group per row, partial sums in __local memory, then
#: work-item 0 adds them up.  -DRACY drops the barrier between the two; -DSKIP_LAST leaves the
#: last row unwritten.
KERNELS = r"""
__kernel void row_dot(__global const float *m, __global const float *v, __global float *y,
                      __local float *part, const int R, const int C)
{
    const int r = get_group_id(0), l = get_local_id(0), L = get_local_size(0);
    float s = 0.0f;
    for (int c = l; c < C; c += L)
        s += m[r * C + c] * v[c];
    part[l] = s;
#ifndef RACY
    barrier(CLK_LOCAL_MEM_FENCE);
#endif
    if (l == 0) {
        float acc = 0.0f;
        for (int i = 0; i < L; ++i)
            acc += part[i];
#ifdef SKIP_LAST
        if (r == R - 1)
            return;
#endif
        y[r] = acc;
    }
}
"""

#: two undeclared identifiers on two lines: the build log has (at least) two errors
BROKEN = r"""
__kernel void row_dot(__global const float *m, __global const float *v, __global float *y,
                      __local float *part, const int R, const int C)
{
    y[0] = first_undeclared_name;
    y[1] = second_undeclared_name;
}
"""

PLUGIN = '''
import numpy as np
from refconv import Backend, Param, Range, Variant
from refconv import opencl as oc

KERNELS = {kernels!r}
BROKEN = {broken!r}


def _make(name, source, options=()):
    def constraint(problem, params):
        wg = params["wg"]
        return (oc.check_local((wg,), 4 * wg, (source, "row_dot", options, "thirdparty.cl"))
                or oc.fits_memory(problem, 4 * problem.dims["rows"]))

    def run(problem, out, wg=4):
        import pyopencl as cl
        m = np.ascontiguousarray(problem.inputs["m"], dtype=np.float32)
        v = np.ascontiguousarray(problem.inputs["v"], dtype=np.float32)
        R, C = m.shape
        k = oc.kernel(source, "row_dot", options, name="thirdparty.cl")
        return oc.launch(k, (R * wg,), (wg,), oc.to_device(m), oc.to_device(v), oc.OUT,
                         cl.LocalMemory(4 * wg), np.int32(R), np.int32(C),
                         out=out, what=f"matvec/oclthird/{{name}}")

    return Variant(op="matvec", backend="oclthird", name=name, run=run,
                   supports={{"dtype": ("float32",), "rows": Range(1), "cols": Range(1)}},
                   params=(Param("wg", (2, 4, 8), 4),), available=oc.available, constraint=constraint,
                   doc="one work-group per row, partial sums in __local memory")


def _variants():
    return [_make("reduce", KERNELS), _make("reduce_racy", KERNELS, ("-DRACY",)),
            _make("skips_last_row", KERNELS, ("-DSKIP_LAST",)), _make("broken_build", BROKEN)]


backend = Backend(name="oclthird", variants=_variants, **oc.backend_fields())
'''.format(kernels=KERNELS, broken=BROKEN)


def _line(text: str) -> int:
    return next(i + 1 for i, s in enumerate(KERNELS.splitlines()) if text in s)


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    return plugin_env(tmp_path_factory.mktemp("oclthird_site"), {"oclthird": PLUGIN})


def _installed(target):
    from refconv import opencl
    if target not in opencl.platforms():
        pytest.skip(f"OpenCL target {target} is not installed here")


@pytest.fixture(scope="module")
def oclgrind_run(env, tmp_path_factory):
    _installed("oclgrind")
    work = tmp_path_factory.mktemp("oclthird_run")
    p = refconv_cli("check", "--backend", "oclthird", "--opencl", "oclgrind", "--examples", "4", "--seed", "1",
                    "--jobs", "2", "--quiet", "--no-save", "--json", "r.json", env=env, cwd=work, timeout=600)
    assert "no effect" not in p.stderr, p.stderr          # --opencl is the plugin's own (backend_fields)
    report = json.loads((work / "r.json").read_text())
    assert report["backend_options"]["opencl"] == "oclgrind"
    return p, {r["variant"]: r for r in report["results"]}


def test_the_plugin_follows_the_selected_target(env):
    _installed("oclgrind")
    p = refconv_cli("list", "--backend", "oclthird", "--opencl", "oclgrind", env=env)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "oclthird: target oclgrind" in p.stdout, p.stdout


def test_the_correct_kernel_passes_on_oclgrind(oclgrind_run):
    p, res = oclgrind_run
    assert res["matvec/oclthird/reduce"]["status"] == "pass", p.stdout + p.stderr


def test_oclgrind_names_the_race_in_the_plugins_kernel(oclgrind_run):
    p, res = oclgrind_run
    r = res["matvec/oclthird/reduce_racy"]
    assert r["status"] == "fail", r
    races = [f for f in r["findings"] if f["class"] == "data-race"]
    assert races, r["findings"]
    f = races[0]
    assert f["kernel"] == "row_dot" and f["source"] == "thirdparty.cl", f
    assert f["message"].startswith("matvec/oclthird/reduce_racy:"), f
    # the two sides of the race: a work-item's store of its partial sum, work-item 0's read of it
    assert {_line("part[l] = s;"), _line("acc += part[i];")} <= set(f.get("lines", (f["line"],))), f


def test_an_unwritten_row_keeps_the_poison(oclgrind_run):
    p, res = oclgrind_run
    r = res["matvec/oclthird/skips_last_row"]
    assert r["status"] == "fail" and "never written" in r["reason"], r


def test_a_compile_error_reports_the_whole_build_log(oclgrind_run):
    p, res = oclgrind_run
    r = res["matvec/oclthird/broken_build"]
    assert r["status"] == "error", r
    assert "OpenCLBuildError" in r["reason"] and "thirdparty.cl" in r["reason"], r["reason"]
    # both errors of the log, not only the message's first line
    assert "first_undeclared_name" in r["reason"] and "second_undeclared_name" in r["reason"], r["reason"]


def test_the_same_plugin_runs_on_pocl_when_pocl_is_selected(env, tmp_path):
    _installed("pocl")
    p = refconv_cli("list", "--backend", "oclthird", "--opencl", "pocl", env=env)
    assert "oclthird: target pocl" in p.stdout, p.stdout + p.stderr
    p = refconv_cli("check", "--backend", "oclthird", "--variant", "reduce", "--opencl", "pocl", "--examples", "4",
                    "--seed", "1", "--jobs", "1", "--quiet", "--no-save", "--json", "r.json", env=env, cwd=tmp_path,
                    timeout=600)
    (r,) = json.loads((tmp_path / "r.json").read_text())["results"]
    assert p.returncode == 0 and r["status"] == "pass", p.stdout + p.stderr


def test_a_plugin_given_only_the_kits_availability_owns_opencl_and_runs_on_oclgrind(tmp_path):
    """``Backend(..., available=oc.available)`` without backend_fields(): the kit completes it, so
    ``--opencl oclgrind`` with only this plugin selected is its own option (no "has no effect"
    warning, issues 40 and 43) and Oclgrind names the race in its kernel."""
    _installed("oclgrind")
    source = PLUGIN.replace('backend = Backend(name="oclthird", variants=_variants, **oc.backend_fields())',
                            'backend = Backend(name="oclhook", variants=_variants, available=oc.available)')
    source = source.replace('backend="oclthird"', 'backend="oclhook"').replace("matvec/oclthird/", "matvec/oclhook/")
    assert "backend_fields" not in source
    env = plugin_env(tmp_path / "site", {"oclhook": source})
    p = refconv_cli("check", "--backend", "oclhook", "--variant", "reduce*", "--opencl", "oclgrind", "--examples", "3",
                    "--seed", "1", "--jobs", "2", "--quiet", "--no-save", "--json", "r.json", env=env, cwd=tmp_path,
                    timeout=600)
    assert "no effect" not in p.stderr and p.returncode == 1, p.stdout + p.stderr
    res = {r["variant"]: r for r in json.loads((tmp_path / "r.json").read_text())["results"]}
    assert res["matvec/oclhook/reduce"]["status"] == "pass", res
    assert [f for f in res["matvec/oclhook/reduce_racy"]["findings"] if f["class"] == "data-race"], res
