"""The Numba filter2d best kernels' GPU form -- the source a GPU compiles: int32 expressions, PTX
``prmt.b32``, ``mad.lo.s32`` and ``min.s32`` -- run under the simulator against the spec, with those
three instructions written in Python (the simulator's ``byte_perm``, checked against the PTX ISA in
tests/test_best_variants.py).  The simulator otherwise runs each kernel's sim form, whose lane
helpers are functions of their own; without this the generated text the GPU runs would meet the
spec on a GPU only.  Every two-lane tap kind, the preset's weights and random dyadic weights."""
from __future__ import annotations

import numpy as np
import pytest
from test_best_variants import F2D, _swar_cases

from refconv import Problem, registry
from refconv.checking import check_example

#: the filter2d-u8-3x3-3072 preset's weights: seven sign taps, a floor tap, a whole tap
PRESET_W = np.array([[5.5, -3.75, -6.25], [-3.25, -1.5, 5], [-0.75, -6.75, -2.75]], np.float32)


@pytest.fixture
def gpu_form(sim, monkeypatch):
    from refconv.backends.numba_cuda import filter2d_best as fb
    real_source, real_ops = fb.source, fb.device_ops

    def ops():
        d = real_ops()
        s = fb._sim_ops()
        d.update(prmt=s["byte_perm"], mad=s["imad"], imin=s["imin"])
        return d

    monkeypatch.setattr(fb, "source", lambda build, sim=False: real_source(build, False))
    monkeypatch.setattr(fb, "device_ops", ops)
    fb._kernel.cache_clear()
    yield
    fb._kernel.cache_clear()


def _cases():
    from refconv.backends.filter2d_arith import swar_plan
    yield from (p for p, _, _ in _swar_cases())
    for h, w in ((6, 32), (9, 21), (11, 64)):
        for image in ("random.3", "extreme.1"):
            p = Problem.parse(F2D.format(h=h, w=w, shift=4, cast="wrap", image=image, weights="exact.2"))
            yield p.with_inputs({"image": p.inputs["image"], "weights": PRESET_W})
    rng, drawn = np.random.default_rng(7), 0
    while drawn < 8:
        k = int(rng.integers(0, 4))
        w = (rng.integers(-12, 13, 9) / 2.0 ** k).astype(np.float32)
        shift = int(rng.integers(0, 8 - k))
        if swar_plan(w, shift, False) is None:
            continue
        h, wd = ((6, 32), (7, 16), (5, 21), (10, 48))[drawn % 4]
        drawn += 1
        p = Problem.parse(F2D.format(h=h, w=wd, shift=shift, cast="wrap", image=f"random.{drawn}", weights="exact.2"))
        yield p.with_inputs({"image": p.inputs["image"], "weights": w.reshape(3, 3)})


@pytest.mark.filterwarnings("ignore::RuntimeWarning")      # int32 products wrap, as mad.lo.s32's low word
@pytest.mark.parametrize("vid", ["filter2d/numba_cuda/best_R2", "filter2d/numba_cuda/best_R5"])
def test_the_gpu_form_of_filter2d_best_matches_the_spec_under_the_simulator(gpu_form, vid):
    v = registry.get(vid)
    for p in _cases():
        r = check_example(v, p, {"bx": 32, "arith": "auto"})
        assert r.status == "pass", f"{vid} on {p.descriptor()} weights {p.inputs['weights'].tolist()}: {r.message}"
