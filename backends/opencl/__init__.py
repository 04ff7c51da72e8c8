"""refconv.backends.opencl"""
