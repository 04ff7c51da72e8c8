"""The command line as a new user meets it: list, check with reports, clear errors."""
import json
import os
import re

from helpers import refconv_cli


def test_list_shows_builtin_and_example_plugin_backends_with_availability():
    p = refconv_cli("list")
    assert p.returncode == 0, p.stderr
    for name in ("numba_cpu", "numba_cuda", "opencl", "example"):
        assert name in p.stdout
    # the example plugin's matvec variant is listed as available ("yes" in its row, not the header)
    assert re.search(r"matvec\s*│\s*example\s*│\s*numpy_rows\s*│\s*yes", p.stdout), p.stdout[-3000:]


def test_check_of_a_correct_backend_passes_and_writes_reports(tmp_path):
    p = refconv_cli("check", "--backend", "example", "--examples", "10", "--seed", "0", "--quiet",
                    "--json", "r.json", "--junit", "r.xml", "--database", "none", cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    rep = json.loads((tmp_path / "r.json").read_text())
    assert rep["results"] and all(r["status"] == "pass" and r["examples"] == 10 for r in rep["results"])
    assert "refconv check" in p.stdout and "pass" in p.stdout
    assert "<testsuite" in (tmp_path / "r.xml").read_text()


def test_unknown_filter_names_what_is_installed():
    p = refconv_cli("check", "--backend", "nosuchbackend")
    assert p.returncode != 0 and "installed backends" in (p.stdout + p.stderr)


def test_bad_profile_is_rejected_naming_the_choices():
    p = refconv_cli("check", "--profile", "fast")
    assert p.returncode == 2 and "ci" in p.stderr and "thorough" in p.stderr


def test_repro_of_a_missing_file_says_so(tmp_path):
    p = refconv_cli("repro", str(tmp_path / "nope.json"))
    assert p.returncode == 2 and "does not exist" in p.stderr


def test_plain_refconv_check_runs_every_backend_together_green(tmp_path):
    """The README's first command, ``refconv check`` with no backend options, over every installed
    backend at once.  Backends share worker processes, so this is where they can break each other:
    numba_cpu importing numba before numba_cuda chose the simulator once put every numba_cuda
    variant on a missing GPU.  One op (matvec: every built-in backend and the example plugin have
    variants of it) and few examples: the per-backend conformance tests cover every op in depth."""
    env = dict(os.environ)
    for k in ("REFCONV_CUDA", "REFCONV_SANITIZE", "NUMBA_ENABLE_CUDASIM", "REFCONV_OPENCL"):
        env.pop(k, None)
    p = refconv_cli("check", "--op", "matvec", "--examples", "2", "--seed", "0", "--database", "none", "--no-save",
                    "--json", "r.json", cwd=tmp_path, env=env, timeout=1200)
    rep = json.loads((tmp_path / "r.json").read_text())
    bad = [(r["variant"], r["status"], r["reason"][:200]) for r in rep["results"] if r["status"] in ("fail", "error")]
    assert p.returncode == 0 and not bad, bad
    from refconv.variant_id import VariantId
    backends = {VariantId.parse(r["variant"]).backend for r in rep["results"] if r["status"] == "pass"}
    assert {"numba_cpu", "numba_cuda", "opencl", "example"} <= backends, backends


def test_numba_cuda_auto_mode_survives_numba_imported_first_in_the_same_worker(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("REFCONV_CUDA", "NUMBA_ENABLE_CUDASIM")}
    p = refconv_cli("check", "--variant", "matvec/numba_cpu/*", "--variant", "matvec/numba_cuda/thread_per_row",
                    "--jobs", "1", "--examples", "2",
                    "--database", "none", "--no-save", "--json", "r.json", cwd=tmp_path, env=env)
    rep = json.loads((tmp_path / "r.json").read_text())
    assert [r["variant"] for r in rep["results"]][0].startswith("matvec/numba_cpu/")  # numba imported first
    assert p.returncode == 0, [(r["variant"], r["reason"][:200]) for r in rep["results"]]


def test_list_backend_filter_takes_a_glob():
    p = refconv_cli("list", "--backend", "numba_c*")
    assert p.returncode == 0
    assert "numba_cpu" in p.stdout and "numba_cuda" in p.stdout and "opencl" not in p.stdout


def test_op_or_backend_given_twice_is_a_usage_error_naming_both_values(capsys):
    import pytest
    from refconv.cli import build_parser
    for cmd, flag, a, b, hint in (("check", "--op", "matvec", "kron", "--variant 'matvec/*' --variant 'kron/*'"),
                                  ("list", "--backend", "opencl", "triton", "--variant '*/opencl/*' --variant '*/triton/*'")):
        with pytest.raises(SystemExit) as e:
            build_parser().parse_args([cmd, flag, a, flag, b])
        err = capsys.readouterr().err
        assert e.value.code == 2
        assert f"{flag} given twice ('{a}', '{b}')" in err and hint in err
    ns = build_parser().parse_args(["check", "--op", "matvec", "--backend", "opencl"])
    assert (ns.op, ns.backend) == ("matvec", "opencl")
