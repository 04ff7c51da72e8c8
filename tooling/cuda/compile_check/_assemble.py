"""Assembling PTX for the compile check: nvJitLink (same CUDA release as NVVM) or ``ptxas``, and
their resource report (registers, shared memory, spills, stack)."""
from __future__ import annotations

import os
import re
import subprocess
import tempfile


_PTXAS_RE = {
    "regs": re.compile(r"[Uu]sed (\d+) registers"),
    "smem": re.compile(r"(\d+) bytes smem"),
    "stack": re.compile(r"(\d+) bytes stack frame"),
    "spill_stores": re.compile(r"(\d+) bytes spill stores"),
    "spill_loads": re.compile(r"(\d+) bytes spill loads"),
}


_PTX_SHARED_RE = re.compile(r"^\s*(?:\.visible\s+|\.global\s+)?\.shared\s+\.align\s+(\d+)\s+\.b8\s+[\w$]+\[(\d+)\];",
                            re.M)


def ptx_static_shared(ptx: str) -> int:
    """The static shared memory the PTX declares (each array at its alignment, in order): what
    ``ptxas`` holds to the 48 KiB limit.  The assembler's own figure (``smem``) adds the driver's
    reserved shared memory per block (1 KiB from sm_80 on) where the kernel uses any."""
    total = 0
    for align, size in _PTX_SHARED_RE.findall(ptx):
        a = int(align)
        total = -(-total // a) * a + int(size)
    return total


def parse_ptxas(text):
    info = {}
    for k, rx in _PTXAS_RE.items():
        m = rx.findall(text)
        if m:
            info[k] = max(int(x) for x in m)
    return info


def _nvjitlink(ptx, cc, max_registers=None):
    """Assemble with nvJitLink (same CUDA release as NVVM, from the cu13 wheels): ``(info, error)``;
    ``(None, None)`` when nvJitLink is not available."""
    try:
        from cuda.bindings import nvjitlink as nj
    except Exception:
        return None, None
    opts = [f"-arch=sm_{cc[0]}{cc[1]}", "-verbose"] + ([f"-maxrregcount={max_registers}"] if max_registers else [])
    try:
        h = nj.create(len(opts), opts)
    except Exception:
        return None, None
    try:
        data = ptx.encode()
        try:
            nj.add_data(h, nj.InputType.PTX, data, len(data), "kernel.ptx")
            nj.complete(h)
        except Exception as e:
            try:
                n = nj.get_error_log_size(h)
                buf = bytearray(n)
                nj.get_error_log(h, buf)
                msg = buf.decode(errors="replace").strip("\x00 \n")
            except Exception:
                msg = ""
            return None, (msg or str(e))
        n = nj.get_info_log_size(h)
        buf = bytearray(n)
        nj.get_info_log(h, buf)
        return parse_ptxas(buf.decode(errors="replace")), None
    finally:
        try:
            nj.destroy(h)
        except Exception:
            pass


def assemble(ptxas, ptx, cc, max_registers=None):
    """``(info, error, tool)``; ``info`` None and ``error`` None: no assembler usable here.
    ``max_registers``: the kernel's ``cuda.jit(max_registers=...)``, passed on as the driver
    would (``-maxrregcount``)."""
    info, err = _nvjitlink(ptx, cc, max_registers)
    if info is not None or err is not None:
        return info, err, "nvJitLink"
    if not ptxas:
        return None, None, None
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, "k.ptx")
        with open(src, "w") as f:
            f.write(ptx)
        regs = [f"-maxrregcount={max_registers}"] if max_registers else []
        p = subprocess.run([ptxas, f"-arch=sm_{cc[0]}{cc[1]}", "-v", *regs, src, "-o", os.path.join(d, "k.cubin")],
                           capture_output=True, text=True, timeout=120)
    text = p.stdout + p.stderr
    if p.returncode != 0:
        if "Unsupported .version" in text:  # ptxas older than NVVM: a tool mismatch, not a kernel bug
            return None, None, None
        return None, text.strip(), "ptxas"
    return parse_ptxas(text), None, "ptxas"
