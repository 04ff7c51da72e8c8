"""Integer poisons: "never written" is said only of elements a variant really left alone, never of
an element it wrote with a wrong (off-by-one, saturated, even poison-valued) value."""
import numpy as np

from refconv import Problem, Variant
from refconv.checking import acceptance_for, check_example, poison_value

# uint8 filter2d whose expected result is all zeros (zero image)
ZERO = Problem("filter2d", {"dtype": "uint8", "c": 0, "h": 5, "w": 6, "kh": 3, "kw": 3},
               {"boundary": "zero", "flip": False, "accumulator": "int", "shift": 0, "cast": "saturate"},
               {"image": "zero.0", "weights": "exact.4"})


def _writer(value=None, skip=None):
    """Writes ``value`` everywhere (the correct result when None), except element ``skip``."""
    def run(problem, out, **_):
        full = acceptance_for(problem).expected if value is None else np.full(out.shape, value, out.dtype)
        keep = out.copy()
        out[...] = full
        if skip is not None:
            out[skip] = keep[skip]
        return out
    return Variant("filter2d", "meta", "writer", run)


def test_expected_zeros_and_a_kernel_writing_one_is_a_wrong_value_not_never_written():
    assert not acceptance_for(ZERO).expected.any()
    r = check_example(_writer(1), ZERO, {})
    assert r.status == "fail" and r.n_bad == 30
    assert r.n_unwritten == 0 and "never written" not in r.message


def test_a_kernel_that_skips_an_element_is_still_never_written():
    r = check_example(_writer(None, skip=(2, 3)), ZERO, {})
    assert r.status == "fail" and r.n_unwritten == 1 and r.first_bad == (2, 3)
    assert "never written" in r.message


def test_a_kernel_writing_the_first_poison_itself_is_a_wrong_value_confirmed_by_the_second_run():
    p1 = poison_value(np.uint8, acceptance_for(ZERO).expected)
    r = check_example(_writer(int(p1), skip=(0, 0)), ZERO, {})
    assert r.status == "fail" and r.n_bad == 30
    assert r.n_unwritten == 1 and r.first_bad == (0, 0)


def test_integer_poison_is_far_from_zero_the_extremes_and_every_expected_value():
    for dt in (np.uint8, np.int8, np.uint16, np.int16):
        info = np.iinfo(dt)
        p = int(poison_value(dt, np.zeros(4, dt)))
        assert min(abs(p), p - info.min, info.max - p) >= (info.max - info.min) // 4 - 1, (dt, p)
    exp = np.array([0, 1, 2, 3, 200], np.uint8)
    p = int(poison_value(np.uint8, exp))
    assert min(abs(p - int(e)) for e in list(exp) + [255]) >= 50
    p2 = int(poison_value(np.uint8, exp, avoid=(p,)))
    assert p2 != p and p2 not in exp.tolist()
