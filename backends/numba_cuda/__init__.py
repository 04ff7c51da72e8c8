"""refconv.backends.numba_cuda"""
