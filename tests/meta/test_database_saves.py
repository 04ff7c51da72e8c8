"""A counterexample the example database could not save says so (issue 43): on a full disk
(writes raising ENOSPC) and with the database's key folders replaced by files, the run reports
``database_error`` with the variant (matrix, JSON, JUnit), and no empty or partial file is left
under a value's name, where Hypothesis's own database is silent."""
from __future__ import annotations

import errno
import io
import json
import os

import numpy as np
import pytest
from rich.console import Console

from .wrong_impls import _spec

from refconv import Variant, render, report
from refconv.exampledb import CheckedDirectoryDatabase
from refconv.profiles import database
from refconv.runner import check_variant


def _rows_wrong():
    """filter2d on float32, one too large when the image's fill seed exceeds 100: never in a
    directed case (small seeds), so only Hypothesis's draws find it, and save it."""
    def run(problem, out):
        r = _spec(problem)
        if int(problem.fills["image"].split(".")[1]) > 100:
            r = r + np.float32(1)
        out[...] = r
    return Variant("filter2d", "meta", "seed_bug", run=run, supports={"dtype": ("float32",)})


def _files(root):
    return [os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs]


def _shown(r) -> str:
    out = io.StringIO()
    render.print_matrix(Console(file=out, width=200, highlight=False, color_system=None), [r], 1.0)
    return out.getvalue()


def test_a_directory_database_is_the_checked_one(tmp_path):
    assert isinstance(database(str(tmp_path / "db")), CheckedDirectoryDatabase)


def test_a_full_disk_is_reported_and_leaves_no_empty_file(tmp_path, monkeypatch):
    def full(fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    monkeypatch.setattr("refconv.exampledb.os.fsync", full)
    db = tmp_path / "db"
    r = check_variant(_rows_wrong(), "ci", seed=1, db=str(db), failures_dir=None)
    monkeypatch.undo()   # the disk has room again for the reports
    assert r.status == "fail"
    assert "not saved in the example database" in r.database_error and "No space left on device" in r.database_error
    assert not [f for f in _files(db) if os.path.getsize(f) == 0 or ".refconv-save-" in f], _files(db)
    assert r.database_error in _shown(r)
    assert json.loads(report.json_report("ci", 1.0, {}, [r]))["results"][0]["database_error"] == r.database_error
    report.write_junit(str(tmp_path / "r.xml"), [r], 1.0)
    assert "No space left on device" in (tmp_path / "r.xml").read_text()


def test_key_folders_replaced_by_files_are_reported(tmp_path):
    db = tmp_path / "db"
    first = check_variant(_rows_wrong(), "ci", seed=1, db=str(db), failures_dir=None)
    assert first.status == "fail" and first.database_error == ""
    keys = [p for p in db.iterdir() if p.is_dir()]
    assert keys and all(os.path.getsize(f) > 0 for f in _files(db))      # saved whole
    for k in keys:
        for f in k.iterdir():
            f.unlink()
        k.rmdir()
        k.write_text("not a folder")
    r = check_variant(_rows_wrong(), "ci", seed=2, db=str(db), failures_dir=None)
    assert r.status == "fail"
    assert "a file stands where the key's folder should be" in r.database_error, r.database_error
    assert r.database_error in _shown(r)


def test_a_save_that_happens_is_read_back_and_a_failure_is_counted(tmp_path):
    db = CheckedDirectoryDatabase(tmp_path / "db")
    db.save(b"k", b"value")
    assert list(db.fetch(b"k")) == [b"value"] and db.error_line() == ""
    (tmp_path / "db" / "blocked").write_text("x")
    db.path = tmp_path / "db" / "blocked"
    db.keypaths.clear()
    for i in range(8):
        db.save(b"k", bytes([i]))
    assert db.failed_saves >= 8 and len(db.save_errors) <= 5
    assert db.error_line().startswith(f"{db.failed_saves} example(s) not saved") and "more)" in db.error_line()


@pytest.mark.parametrize("status", ["pass", "fail"])
def test_the_matrix_says_what_the_database_lost_on_any_row(status):
    from refconv.runner import VariantResult
    r = VariantResult("matvec/x/y", status, reason="r", database_error="1 example(s) not saved in the example "
                                                                     "database db: db/abc: No space left on device")
    assert "No space left on device" in _shown(r)
