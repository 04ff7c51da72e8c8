"""Peers, declared: the library calls a user would pick instead of a hand-written kernel for one op.

An op's record lists its peers (``OpRecord.peers``, :class:`PeerCall`) and the order in which the
bench picks its ratio column's peer (``OpRecord.baseline``).  A :class:`PeerCall` is plain data:
its name, the library call it makes (``library``), where it runs (``device``: ``"gpu"`` or
``"cpu"``), whose device events bracket it on a GPU (``runtime``: ``"torch"`` or ``"cupy"``), the
modules it needs on the CPU (``modules``), and ``prepare(problem)``: move the inputs where the
library wants them (untimed) and return ``call()``, the library call made once.  The timing
(stream hold, L2 flush, events, host clock) and the availability checks are the core's
(:mod:`refconv.peers`); nothing here imports a library at module level: torch, CuPy, OpenCV and
SciPy are imported inside ``prepare`` only.

The helpers below (:func:`gray_f32`, :func:`planes`, :func:`cuda_tensor`, :func:`out_fits_gpu`) are
what several ops' peers share.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

DEVICES = ("gpu", "cpu")
RUNTIMES = ("torch", "cupy")


@dataclass(frozen=True)
class PeerCall:
    """One library call for one op (see the module docstring).  A GPU peer names its
    ``runtime`` (the library whose CUDA events time it, and whose view of the device says whether
    it can run); a CPU peer names the ``modules`` that must import (none: NumPy only)."""

    name: str
    library: str
    device: str
    prepare: Callable[[Any], Callable[[], object]]
    runtime: str | None = None
    modules: tuple = field(default_factory=tuple)

    def __post_init__(self):
        if self.device not in DEVICES:
            raise ValueError(f"PeerCall {self.name!r}: device {self.device!r} not accepted; accepted: {DEVICES}")
        if self.device == "gpu" and self.runtime not in RUNTIMES:
            raise ValueError(f"PeerCall {self.name!r}: a GPU peer's runtime is {self.runtime!r}; "
                             f"accepted: {RUNTIMES}")
        if self.device == "cpu" and self.runtime is not None:
            raise ValueError(f"PeerCall {self.name!r}: a CPU peer has no runtime, got {self.runtime!r}")
        object.__setattr__(self, "modules", tuple(self.modules))


def gray_f32(image: np.ndarray) -> np.ndarray:
    """float32 gray image the Sobel peers start from: ``(0.299R + 0.587G) + 0.114B`` for 3/4 channels."""
    if image.ndim == 2:
        return image.astype(np.float32)
    f = image.astype(np.float32)
    return (np.float32(0.299) * f[..., 0] + np.float32(0.587) * f[..., 1]) + np.float32(0.114) * f[..., 2]


def planes(image: np.ndarray) -> list:
    """An image as a list of 2-D planes: itself when 2-D, else its planar channels (``(C, H, W)``)."""
    return [image] if image.ndim == 2 else list(image)


def cuda_tensor(a, dtype=None):
    """A CUDA tensor (torch, imported here) holding a copy of the (read-only) array ``a``."""
    import torch
    return torch.from_numpy(np.array(a, dtype=dtype)).to("cuda")


def out_fits_gpu(nbytes: int, free: int | None = None) -> None:
    """Raise ``MemoryError`` when a result of ``nbytes`` does not fit the GPU's ``free`` memory
    (None: ask torch)."""
    if free is None:
        import torch
        free, _ = torch.cuda.mem_get_info()
    if nbytes > free:
        raise MemoryError(f"output of {nbytes / 1e9:.1f} GB > {free / 1e9:.1f} GB free on the GPU")


def cudnn_conv2d(x, w, tf32: bool, **kw) -> Callable[[], object]:
    """``call()`` running ``torch.nn.functional.conv2d(x, w, **kw)`` through cuDNN at its best:
    autotuned (``cudnn.benchmark``: the bench's untimed warm-up call picks the algorithm), TF32
    on or off as asked; torch's global flags are restored after each call."""
    import torch
    import torch.nn.functional as F

    def call():
        saved = torch.backends.cudnn.allow_tf32, torch.backends.cudnn.benchmark
        torch.backends.cudnn.allow_tf32 = tf32
        torch.backends.cudnn.benchmark = True
        try:
            F.conv2d(x, w, **kw)
        finally:
            torch.backends.cudnn.allow_tf32, torch.backends.cudnn.benchmark = saved
    return call
