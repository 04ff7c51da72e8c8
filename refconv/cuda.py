"""refconv.cuda: the numba-cuda kit for backend plugins -- :mod:`refconv.tooling.cuda`, re-exported."""
from refconv.tooling.cuda import *  # noqa: F401,F403
from refconv.tooling.cuda import __all__  # noqa: F401
