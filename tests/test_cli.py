"""The command line as a new user meets it: list, check with reports, clear errors."""
import json

from conftest import refconv_cli


def test_list_shows_builtin_and_example_plugin_backends_with_availability():
    p = refconv_cli("list")
    assert p.returncode == 0, p.stderr
    for name in ("numba_cpu", "numba_cuda", "opencl", "example"):
        assert name in p.stdout
    assert "available" in p.stdout


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
    assert p.returncode == 2 and "does not exist" in p.stdout
