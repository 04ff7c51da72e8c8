"""refconv.tooling: the kernel tooling, one package per kernel language, between the core and the
backends.

* :mod:`refconv.tooling.cuda` -- numba-cuda: the mode (``--cuda``), the poisoned device transfer,
  the simulator's block scheduler and warp model, the sanitizer, the compile check and the
  compute-sanitizer runs;
* :mod:`refconv.tooling.opencl` -- pyopencl: targets, builds, buffers, Oclgrind's diagnostics,
  profiling events;
* :mod:`refconv.tooling.triton` -- Triton: the mode (``--triton``), lazy kernels, launches with
  host arrays, the interpreter's memory checker.

Layers (tests/meta/test_import_graph.py): tooling imports the core and the specs, never a
backend; the built-in backends (kernels and ``Backend`` declarations) and third-party plugins
import tooling, the latter through the public facades :mod:`refconv.cuda`, :mod:`refconv.opencl`
and :mod:`refconv.triton`.
"""
