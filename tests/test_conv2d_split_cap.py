"""The Numba ``cuconv_split`` host's register cap: taken exactly where it turns a grid of more than
one wave into one wave, never for grids of many waves, and never where an SM's block or thread
limit, not its registers, decides how many blocks it holds."""
from __future__ import annotations

import pytest

from refconv.backends.conv2d_gemm import blocks_per_sm
from refconv.backends.numba_cuda.conv2d import SPLIT_CAP_REGS, SPLIT_REGS, split_register_cap


@pytest.mark.parametrize("threads,sms", [(256, 132), (256, 114), (128, 4)])
def test_the_cap_is_taken_only_between_the_two_one_wave_limits(threads, sms):
    uncapped = sms * blocks_per_sm(threads, SPLIT_REGS)
    capped = sms * blocks_per_sm(threads, SPLIT_CAP_REGS)
    assert capped > uncapped, "the cap must make room for more blocks, or it is never worth its spill"
    for blocks in range(1, 3 * capped):
        want = SPLIT_CAP_REGS if uncapped < blocks <= capped else None
        assert split_register_cap(blocks, threads, sms) == want, blocks


@pytest.mark.parametrize("threads", [4, 8, 32])
def test_small_blocks_are_never_capped_since_the_32_block_limit_decides(threads):
    # 32 threads at 40 registers: 51 blocks by registers, 64 at 32, but an SM holds 32 blocks
    assert blocks_per_sm(threads, SPLIT_REGS) == blocks_per_sm(threads, SPLIT_CAP_REGS) == 32
    assert all(split_register_cap(b, threads, 132) is None for b in range(1, 132 * 80))


def test_the_t3_1x1_b_grid_on_an_h100_is_capped_and_t3_1x1_c_is_not():
    # T3-1x1-B: 14x14 outputs (one block of 256), M = 1024, a 1x1 filter: 1024 blocks;
    # T3-1x1-C: 27x27 outputs (three blocks), M = 256: 768 blocks, one wave at 40 registers
    assert split_register_cap(1 * 1024 * 1, 256, 132) == SPLIT_CAP_REGS
    assert split_register_cap(3 * 256 * 1, 256, 132) is None
