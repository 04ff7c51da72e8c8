"""Issue 27 point 6: a failure saved in the example database unshrunk (by a run with shrinking
off, or one stopped while shrinking) is shrunk again when a later run replays it, as a fresh
database would shrink it, instead of coming back large in every later run."""
import os

import numpy as np

from .wrong_impls import _spec

from refconv import Variant
from refconv.problem import Problem
from refconv.profiles import database, get_profile
from refconv.runner import check_variant


def _variant(bug: bool) -> Variant:
    """filter2d on float32; with ``bug`` every output is 1 too large when the image's fill seed
    exceeds 100 (never in a directed case, whose seeds are small: only random draws find it)."""
    def run(problem, out):
        r = _spec(problem)
        if bug and int(problem.fills["image"].split(".")[1]) > 100:
            r = r + np.float32(1)
        out[...] = r
    return Variant("filter2d", "t", "seed_bug", run=run, supports={"dtype": ("float32",)})


def _size(r) -> int:
    d = Problem.parse(r.failure["descriptor"]).dims
    return max(d["c"], 1) * d["h"] * d["w"] * d["kh"] * d["kw"]


def test_a_replayed_unshrunk_failure_is_shrunk_again(tmp_path):
    db = str(tmp_path / "db")
    first = check_variant(_variant(True), "ci", seed=3, db=db, failures_dir=None, shrink=False)
    assert first.status == "fail" and not first.failed_case
    assert _size(first) > 1                                    # saved as found: unshrunk
    again = check_variant(_variant(True), "ci", seed=4, db=db, failures_dir=None)
    assert again.status == "fail"
    assert _size(again) == 1, again.failure["descriptor"]      # re-shrunk (as a fresh database shrinks it)
    assert again.shrink_examples > 1


def test_a_saved_failure_that_passes_now_leaves_the_database(tmp_path):
    db = str(tmp_path / "db")
    ci10 = get_profile("ci", examples=10)
    assert check_variant(_variant(True), ci10, seed=3, db=db, failures_dir=None, shrink=False).status == "fail"
    key = b"refconv:filter2d/t/seed_bug"
    assert list(database(db).fetch(key))
    assert check_variant(_variant(False), ci10, seed=3, db=db, failures_dir=None).status == "pass"
    assert not list(database(db).fetch(key))
    assert os.path.isdir(db)
