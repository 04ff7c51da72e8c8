"""Small host-side helpers shared by the numba_cuda variants."""
from __future__ import annotations

import numpy as np

from . import _env


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


def out_flat(out: np.ndarray) -> np.ndarray:
    """A flat C-order view of the checker's output buffer (a copy only if it is not contiguous)."""
    return out.reshape(-1) if out.flags.c_contiguous else np.ascontiguousarray(out).reshape(-1)


def finish(out: np.ndarray, flat: np.ndarray) -> np.ndarray:
    """Write ``flat`` back into ``out`` when :func:`out_flat` had to copy."""
    if not np.shares_memory(out, flat):
        out[...] = flat.reshape(out.shape)
    return out


def to_device_poisoned(out: np.ndarray, pad_to: int = 1):
    """Copy the poisoned output buffer to the device (padded to a multiple of ``pad_to``
    elements so that it may be viewed as wider words); returns ``(device_array, n)``."""
    cuda = _env.cuda()
    flat = out_flat(out)
    n = flat.size
    m = cdiv(max(n, 1), pad_to) * pad_to
    if m != n:
        host = np.empty(m, flat.dtype)
        host[:n] = flat
        host[n:] = 0
    else:
        host = np.ascontiguousarray(flat)
    return cuda.to_device(host), n


def from_device(d_out, n: int, out: np.ndarray) -> np.ndarray:
    flat = out_flat(out)
    flat[...] = d_out.copy_to_host()[:n]
    return finish(out, flat)


def max_threads_ok(*dims) -> str | None:
    t = 1
    for d in dims:
        t *= d
    if t > 1024:
        return f"block of {t} threads > 1024"
    return None
