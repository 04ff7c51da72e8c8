"""The fake device of a compile-check worker: host-memory stand-ins for ``numba.cuda``'s
device-memory API (``to_device``, ``device_array*``, streams, ``synchronize``,
``get_current_device``) and a launch that records the kernel and its argument types instead of
running it.  Installed into the *real* ``numba.cuda`` (``NUMBA_ENABLE_CUDASIM=0``)."""
from __future__ import annotations


class _FakeStream:
    handle = None

    def synchronize(self):
        pass

    def auto_synchronize(self):
        import contextlib
        return contextlib.nullcontext(self)

    def __int__(self):
        return 0


class _FakeDevice:
    def __init__(self, cc):
        self.compute_capability = cc
        self.name = b"refconv compile check"
        self.id = 0
        self.MULTIPROCESSOR_COUNT = 132
        self.MAX_THREADS_PER_BLOCK = 1024
        self.MAX_SHARED_MEMORY_PER_BLOCK = 49152
        self.WARP_SIZE = 32
        self.MAX_BLOCK_DIM_X = 1024
        self.MAX_BLOCK_DIM_Y = 1024
        self.MAX_BLOCK_DIM_Z = 64
        self.MAX_GRID_DIM_X = 2 ** 31 - 1
        self.MAX_GRID_DIM_Y = 65535
        self.MAX_GRID_DIM_Z = 65535
        self.MAX_REGISTERS_PER_BLOCK = 65536

    def reset(self):
        pass


class _FakeContext:
    def get_memory_info(self):
        return (80 << 30, 80 << 30)

    def synchronize(self):
        pass


def _dev_array_type():
    """A host ``ndarray`` subclass standing in for a ``DeviceNDArray`` (typed the same by numba)."""
    import numpy as np

    class DevArray(np.ndarray):
        def copy_to_host(self, ary=None, stream=0):
            if ary is None:
                return np.array(self, copy=True).view(np.ndarray)
            np.copyto(ary, self)
            return ary

        def copy_to_device(self, ary, stream=0):
            np.copyto(self, np.asarray(ary))

        def split(self, section, stream=0):
            return [self[i:i + section] for i in range(0, len(self), section)]

        def is_c_contiguous(self):
            return self.flags.c_contiguous

        def is_f_contiguous(self):
            return self.flags.f_contiguous

        @property
        def alloc_size(self):
            return self.nbytes

        def bind(self, stream=0):
            return self

        def get_ipc_handle(self):  # pragma: no cover
            raise RuntimeError("not available in the compile check")

    return DevArray


def _device_api(fake_dev) -> dict:
    """``numba.cuda``'s device-memory, stream and device functions, on host memory."""
    import contextlib

    import numpy as np
    DevArray = _dev_array_type()

    def dev(a):
        return np.asarray(a).view(DevArray)

    def to_device(obj, stream=0, copy=True, to=None):
        if to is not None:
            np.copyto(to, np.asarray(obj))
            return to
        return dev(np.array(obj, copy=True, order="K"))

    def device_array(shape, dtype=np.float64, strides=None, order="C", stream=0):
        return dev(np.empty(shape, dtype=dtype, order=order))

    def device_array_like(ary, stream=0):
        return dev(np.empty_like(np.asarray(ary)))

    def pinned_array(shape, dtype=np.float64, strides=None, order="C"):
        return np.empty(shape, dtype=dtype, order=order)

    @contextlib.contextmanager
    def pinned(*arylist):
        yield

    return {
        "to_device": to_device, "device_array": device_array, "device_array_like": device_array_like,
        "mapped_array": device_array, "managed_array": device_array, "pinned_array": pinned_array,
        "pinned_array_like": lambda ary: np.empty_like(ary), "pinned": pinned,
        "synchronize": lambda: None, "stream": lambda: _FakeStream(),
        "default_stream": lambda: _FakeStream(), "per_thread_default_stream": lambda: _FakeStream(),
        "legacy_default_stream": lambda: _FakeStream(), "external_stream": lambda ptr: _FakeStream(),
        "is_available": lambda: True, "get_current_device": lambda: fake_dev,
        "select_device": lambda i: fake_dev, "close": lambda: None,
        "profile_start": lambda: None, "profile_stop": lambda: None,
        "current_context": lambda devnum=0: _FakeContext(),
    }


def _record_launches(D, recorder) -> None:
    """Make ``CUDADispatcher`` launches (and eager ``cuda.jit("sig")`` compiles) call
    ``recorder(dispatcher, argtypes, launch_config_or_None)`` instead of running."""
    def call(self, args, launch_config):
        recorder(self, tuple(self.typeof_pyval(a) for a in args), launch_config)

    def configure(self, griddim, blockdim, stream=0, sharedmem=0):
        from numba.cuda.errors import normalize_kernel_dimensions
        griddim, blockdim = normalize_kernel_dimensions(griddim, blockdim)
        lc = D._LaunchConfiguration.__new__(D._LaunchConfiguration)
        lc.dispatcher, lc.griddim, lc.blockdim = self, griddim, blockdim
        lc.stream, lc.sharedmem, lc.pre_launch_callbacks = stream, sharedmem, []
        lc._kernel_launch_config_sensitive = None
        return lc

    def compile_eager(self, sig):
        # cuda.jit("sig") compiles at decoration: record it, compile when launched / at the end
        from numba.cuda import sigutils
        args, _ = sigutils.normalize_signature(sig)
        recorder(self, tuple(args), None)
        return None

    D.CUDADispatcher.call = call
    D.CUDADispatcher.configure = configure
    D.CUDADispatcher.compile = compile_eager
    D._LaunchConfiguration.__call__ = lambda self, *args: self.dispatcher.call(args, self)


def install_fakes(cc, recorder):
    """Host-memory stand-ins for numba.cuda's device API and a recording launch."""
    from numba import cuda
    from numba.cuda import dispatcher as D

    fake_dev = _FakeDevice(cc)
    for name, val in _device_api(fake_dev).items():
        setattr(cuda, name, val)
    # device functions ask the current device for its compute capability while compiling
    import numba.cuda.api as _api
    import numba.cuda.compiler as _compiler
    for m in (D, _api, _compiler):
        if hasattr(m, "get_current_device"):
            m.get_current_device = lambda: fake_dev
    _record_launches(D, recorder)
