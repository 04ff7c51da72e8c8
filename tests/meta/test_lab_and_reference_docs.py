"""The product reads first and the lab sits beside it (issue 41): the README's set-up stays short,
docs/performance.md stays a reference whose current-best numbers each name the ``lab/runs/``
folder they came from, and the lab's index lists every script and run it holds."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LAB = ROOT / "lab"
PERF = ROOT / "docs" / "performance.md"


def _section(text: str, heading: str) -> list[str]:
    """The lines of the section under ``heading`` (a ``## `` line), up to the next ``## ``."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("## ") and heading in line)
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    return lines[start:end]


def test_the_readme_set_up_section_is_at_most_25_lines():
    setup = _section((ROOT / "README.md").read_text(encoding="utf-8"), "Set-up")
    assert len(setup) <= 25, f"README's set-up section has {len(setup)} lines"
    assert any("bash scripts/install.sh" in line for line in setup)


def test_performance_md_is_a_reference_of_at_most_600_lines():
    n = len(PERF.read_text(encoding="utf-8").splitlines())
    assert n <= 600, f"docs/performance.md has {n} lines"


def _current_best_rows() -> list[str]:
    sec = _section(PERF.read_text(encoding="utf-8"), "Current best")
    return [line for line in sec if line.startswith("| ") and not line.startswith("| preset") and "---" not in line]


def test_every_current_best_row_names_an_existing_lab_runs_folder():
    rows = _current_best_rows()
    assert len(rows) >= 5
    for row in rows:
        links = re.findall(r"\]\(\.\./lab/runs/([^/)]+)/?\)", row)
        assert links, f"no lab/runs folder named in: {row[:80]}"
        for folder in links:
            assert (LAB / "runs" / folder).is_dir(), f"lab/runs/{folder} named in performance.md does not exist"


def test_every_lab_runs_folder_has_notes():
    runs = sorted(p for p in (LAB / "runs").iterdir() if p.is_dir())
    assert runs
    missing = [p.name for p in runs if not (p / "notes.md").is_file() and not any(p.glob("*.sh"))]
    assert missing == [], f"lab/runs folders with neither notes.md nor a runner: {missing}"


@pytest.mark.parametrize("part", ["probes", "sweeps", "runners"])
def test_the_lab_index_lists_every_script(part):
    index = (LAB / "README.md").read_text(encoding="utf-8")
    scripts = sorted(p.name for p in (LAB / part).iterdir() if p.suffix in (".py", ".sh"))
    assert scripts
    unlisted = [s for s in scripts if f"`{part}/{s}`" not in index]
    assert unlisted == [], f"lab/README.md does not list lab/{part}/: {unlisted}"


def test_the_lab_index_lists_every_run():
    index = (LAB / "README.md").read_text(encoding="utf-8")
    runs = sorted(p.name for p in (LAB / "runs").iterdir() if p.is_dir())
    unlisted = [r for r in runs if f"`runs/{r}/`" not in index]
    assert unlisted == [], f"lab/README.md does not list lab/runs/: {unlisted}"


def test_no_doc_links_the_old_data_folders():
    """docs/data and docs/img moved into lab/runs/; no doc points at them any more."""
    bad = []
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for n, line in enumerate(doc.read_text(encoding="utf-8").splitlines(), 1):
            if re.search(r"docs/(data|img)/|\((data|img)/", line):
                bad.append(f"{doc.name}:{n}")
    assert bad == []
