"""What the masked-off lanes of a ``tl.load`` without ``other=`` hold, through refconv's Triton kit
(issue 40): on the GPU (``--triton gpu`` / ``REFCONV_TRITON=gpu``) and under the kit's interpreter.
Prints, per dtype, the lanes a kernel loaded with ``mask=i < 5`` and no ``other=`` (stored
unmasked into an 8-element output) and the ``tl.sum`` of them.  Usage:
``REFCONV_TRITON=gpu python lab/probes/gpu_triton_masked_lanes_probe.py``."""
import os

import numpy as np
import triton.language as tl

from refconv.tooling.triton import kit


@kit.jit
def lanes(src, dst, tot, n, B: tl.constexpr):
    i = tl.arange(0, B)
    x = tl.load(src + i, mask=i < n)            # lanes n..B-1 undefined
    tl.store(dst + i, x)
    tl.store(tot, tl.sum(x))


def main():
    kit.configure({"triton": os.environ.get("REFCONV_TRITON", "auto")})
    print("mode", kit.mode(), "triton", kit.version())
    for dt in (np.float32, np.float64, np.int32, np.int64, np.uint8):
        src = np.arange(1, 9, dtype=dt)
        got = np.full(8, 7, dt)
        tot = np.zeros(1, dt)
        kit.launch(lanes, (1,), src, kit.OUT, tot, 5, out=got, B=8)
        tot2 = np.zeros(1, dt)
        kit.launch(lanes, (1,), src, np.zeros(8, dt), kit.OUT, 5, out=tot2, B=8)
        print(f"{dt.__name__:8s} lanes {got.tolist()}  sum {tot2[0]!r} (of the five defined lanes: 15)")


if __name__ == "__main__":
    main()
