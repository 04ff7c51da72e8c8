"""Run some variants once each (with their default parameters, as the bench does) on the GPU on a
bench preset's problem, for Nsight Compute
(``ncu ... python lab/probes/twin_profile.py numba_cuda/GM opencl/GM``), and write each numba-cuda
kernel's PTX and each OpenCL program's PTX (NVIDIA's OpenCL binaries are PTX) to $OUT/ptx/.

usage: PRESET=filter2d-u8-3x3-3072 python lab/probes/twin_profile.py BACKEND/VARIANT [...]
"""
import os
import sys
from pathlib import Path

from refconv import registry
from refconv.checking import scratch_output
from refconv.pool import configure_backends
from refconv.bench.presets import PRESETS
from refconv.variant import run_variant

out_dir = Path(os.environ.get("OUT", "/tmp/out")) / "ptx"
out_dir.mkdir(parents=True, exist_ok=True)
configure_backends({"cuda": "gpu", "opencl": "nvidia"})
prob = PRESETS[os.environ.get("PRESET", "filter2d-u8-3x3-3072")].problem()
for name in sys.argv[1:]:
    v = registry.get(f"{prob.op}/{name}")      # name: BACKEND/VARIANT (registry.get parses the id)
    run_variant(v, prob, scratch_output(prob, v.writes), v.default_params())   # the bench's parameters
    print(name, "ran", flush=True)

if os.environ.get("NO_PTX"):
    sys.exit(0)
# PTX of everything compiled in this process
import gc
try:
    from numba.cuda.dispatcher import CUDADispatcher
    for obj in gc.get_objects():
        if isinstance(obj, CUDADispatcher):
            for i, (sig, ptx) in enumerate(obj.inspect_asm().items()):
                (out_dir / f"numba_{obj.__name__}_{id(obj) % 10000}_{i}.ptx").write_text(str(sig) + "\n" + ptx)
            if os.environ.get("SASS"):       # SASS=1: the machine code too (needs nvdisasm on PATH)
                for i, (sig, sass) in enumerate(obj.inspect_sass().items()):
                    (out_dir / f"numba_{obj.__name__}_{id(obj) % 10000}_{i}.sass").write_text(str(sig) + "\n" + sass)
except Exception as e:  # noqa: BLE001
    print("no numba PTX:", e)
try:
    import pyopencl as cl
    for obj in gc.get_objects():
        if isinstance(obj, cl.Program):
            for i, b in enumerate(obj.get_info(cl.program_info.BINARIES)):
                (out_dir / f"opencl_{id(obj) % 10000}_{i}.ptx").write_bytes(bytes(b))
except Exception as e:  # noqa: BLE001
    print("no OpenCL binaries:", e)
