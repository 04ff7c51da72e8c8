"""refconv.triton: the Triton kit for backend plugins -- :mod:`refconv.tooling.triton`, re-exported."""
from refconv.tooling.triton import *  # noqa: F401,F403
from refconv.tooling.triton import __all__  # noqa: F401
