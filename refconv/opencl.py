"""refconv.opencl: the OpenCL kit for backend plugins -- :mod:`refconv.tooling.opencl`, re-exported."""
from refconv.tooling.opencl import *  # noqa: F401,F403
from refconv.tooling.opencl import __all__  # noqa: F401
