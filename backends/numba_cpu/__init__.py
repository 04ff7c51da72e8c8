"""refconv.backends.numba_cpu"""
