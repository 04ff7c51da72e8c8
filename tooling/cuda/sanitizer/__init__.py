"""A sanitizer for the CUDA simulator (numba-cuda 0.30.4).

``enable()`` instruments every simulated kernel launch; findings are reported through
:func:`refconv.findings.report` from the launching thread when the launch ends, one per
(class, array, source line) with a ``count``.  Classes:

``out-of-bounds``
    global / shared / local / const element access outside the array, negative indices included
    (they wrap silently in the simulator and on the GPU).
``shared-race``
    two threads of a block touch the same shared element between two barriers, one of them
    writing (atomics excepted).
``barrier-divergence``
    a ``syncthreads()`` not reached by every thread of the block (some finished, or threads wait
    at different ``syncthreads()`` calls).
``warp-mask``
    a warp-level operation (shuffle, vote, match, ``syncwarp``) whose mask names a lane that does
    not exist or has exited, or that never arrives (it waits at a barrier), a lane calling with
    a mask that leaves it out, or lanes meeting at different warp operations / masks
    (``sim_warps``).
``uninitialized-read``
    a read of shared or local memory not written since the kernel started (per block for shared
    memory, per thread for local memory); the storage is also poisoned (NaN / 0xAB bytes).

``arm()`` enables it as soon as the simulator is imported (what the ``numba_cuda`` backend does
under the simulator unless ``--no-sanitize``).  See docs/sanitizer.md.
"""
from ._arm import arm, armed, disarm
from ._core import (SUPPORTED_NUMBA_CUDA, SanitizerWarning, current_launch, disable, enable,
                    history, is_enabled)

CLASSES = ("out-of-bounds", "shared-race", "barrier-divergence", "uninitialized-read", "warp-mask")

__all__ = ["enable", "disable", "is_enabled", "arm", "disarm", "armed", "history", "SanitizerWarning", "CLASSES",
           "SUPPORTED_NUMBA_CUDA", "current_launch"]
