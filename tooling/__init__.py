"""refconv.tooling: the kernel tooling, one package per kernel language, between the core and the
backends.

* :mod:`refconv.tooling.cuda` -- numba-cuda: the mode (``--cuda``), the poisoned device transfer,
  the simulator's block scheduler and warp model, the sanitizer, the compile check and the
  compute-sanitizer runs;
* :mod:`refconv.tooling.opencl` -- pyopencl: targets, builds, buffers, Oclgrind's diagnostics,
  profiling events;
* :mod:`refconv.tooling.triton` -- Triton: the mode (``--triton``), lazy kernels, launches with
  host arrays, the interpreter's memory checker.

One kit shape: each package's ``__init__`` is its kit's public face, with ``backend_fields()``
(the kit's options, configure, availability ...), re-exported whole by the facade
:mod:`refconv.cuda`, :mod:`refconv.opencl` or :mod:`refconv.triton`; the ``_``-prefixed modules
are private to their package.

Layers (tests/meta/test_import_graph.py): tooling imports the core and the specs, never a
backend; the built-in backends (kernels and ``Backend`` declarations) import the public kits,
third-party plugins the facades (the same objects); no module outside a tooling package imports
its private modules.
"""
