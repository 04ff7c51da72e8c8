"""refconv.tooling.triton: the Triton kit (:mod:`.kit`: the mode, lazy kernels, host arrays,
launches, ``backend_fields``) and the interpreter's memory checker (:mod:`.memcheck`), used by
the built-in ``triton`` backend and published for plugins as :mod:`refconv.triton`.  Importing
this package never imports triton."""
