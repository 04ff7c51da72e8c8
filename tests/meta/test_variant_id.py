"""``refconv.variant_id.VariantId``: the one reader of ``op/backend/name`` ids (registry lookup,
JUnit, bench rows), with an error that names the bad id and the accepted form."""
import pytest

from refconv import registry
from refconv.report import write_junit
from refconv.variant_id import VariantId


def test_an_id_parses_into_its_three_parts_and_prints_back_unchanged():
    vid = VariantId.parse("filter2d/numba_cuda/GM_CF4")
    assert (vid.op, vid.backend, vid.name) == ("filter2d", "numba_cuda", "GM_CF4")
    assert str(vid) == "filter2d/numba_cuda/GM_CF4"
    assert VariantId.parse(str(vid)) == vid


@pytest.mark.parametrize("bad", ["matvec/numba_cpu", "matvec/numba_cpu/naive/x", "matvec//naive", "/a/b", "a/b/",
                                 "", "matvec"])
def test_an_id_without_exactly_three_nonempty_parts_is_refused_naming_it_and_the_form(bad):
    with pytest.raises(ValueError) as e:
        VariantId.parse(bad)
    assert repr(bad) in str(e.value) and "op/backend/name" in str(e.value)


def test_parts_with_a_slash_or_empty_are_refused_when_built_directly():
    with pytest.raises(ValueError, match=r"name='a/b'.*op/backend/name"):
        VariantId("matvec", "numba_cpu", "a/b")
    with pytest.raises(ValueError, match=r"backend=''"):
        VariantId("matvec", "", "naive")


def test_registry_lookup_reads_ids_through_the_parser():
    with pytest.raises(ValueError, match=r"variant id 'matvec/naive' not accepted; accepted: op/backend/name"):
        registry.get("matvec/naive")
    v = registry.get("matvec/numba_cpu/row_loop")
    assert VariantId.parse(v.id) == VariantId("matvec", "numba_cpu", "row_loop")


def test_junit_classname_is_the_parsed_op_and_backend(tmp_path):
    from refconv.runner import VariantResult
    path = tmp_path / "j.xml"
    write_junit(str(path), [VariantResult("matvec/numba_cpu/naive", "pass")], 1.0)
    assert 'classname="matvec.numba_cpu" name="matvec/numba_cpu/naive"' in path.read_text()
