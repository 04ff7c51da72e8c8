"""The Numba ``cuconv_split`` host's register cap: taken exactly where it turns a grid of more than
one wave into one wave, never for grids of many waves."""
from __future__ import annotations

import pytest

from refconv.backends.numba_cuda.conv2d import SM_REGS, SPLIT_CAP_REGS, SPLIT_REGS, split_register_cap


def _slots(regs: int, threads: int, sms: int) -> int:
    return sms * (SM_REGS // (regs * threads))


@pytest.mark.parametrize("threads,sms", [(256, 132), (256, 114), (128, 4)])
def test_the_cap_is_taken_only_between_the_two_one_wave_limits(threads, sms):
    uncapped, capped = _slots(SPLIT_REGS, threads, sms), _slots(SPLIT_CAP_REGS, threads, sms)
    assert capped > uncapped, "the cap must make room for more blocks, or it is never worth its spill"
    for blocks in range(1, 3 * capped):
        want = SPLIT_CAP_REGS if uncapped < blocks <= capped else None
        assert split_register_cap(blocks, threads, sms) == want, blocks


def test_the_t3_1x1_b_grid_on_an_h100_is_capped_and_t3_1x1_c_is_not():
    # T3-1x1-B: 14x14 outputs (one block of 256), M = 1024, a 1x1 filter: 1024 blocks;
    # T3-1x1-C: 27x27 outputs (three blocks), M = 256: 768 blocks, one wave at 40 registers
    assert split_register_cap(1 * 1024 * 1, 256, 132) == SPLIT_CAP_REGS
    assert split_register_cap(3 * 256 * 1, 256, 132) is None
