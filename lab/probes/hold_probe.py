"""Does the bench's stream hold see the host's release?  On a GPU every timed launch of the CUDA kit
holds its stream (a one-thread kernel spinning on a mapped host word) while the host issues the
flush, the events and the kernel, then releases it.  This times the kit's empty kernel through that
path (``refconv.cuda.BENCH.launch()`` inside ``refconv.timing.collect``): where the device sees the
release, a launch takes the host's issue and synchronise time (tens to hundreds of microseconds)
and no interval carries a caveat; where it cannot see the mapped word, every launch waits out the
hold's poll limit (tens of ms) and the intervals say "the stream hold timed out".

The kit's hold itself is private (its timed launch is the public face): this probe goes through
the public path and changes none of the kit's settings.

usage: python lab/probes/hold_probe.py   (on a GPU)"""
import time

from refconv.session import configure_backends

configure_backends({"cuda": "gpu"})
import refconv.cuda as kit  # noqa: E402
from refconv import timing  # noqa: E402

launch = kit.BENCH.launch()
launch()                        # compiled outside the timed runs
for flush in (0, 64 << 20):     # without and with the L2 flush the bench issues inside the hold
    for _ in range(5):
        with timing.collect(flush) as got:
            t0 = time.perf_counter()
            launch()            # hold, flush, events, kernel, release, synchronise
            host = time.perf_counter() - t0
        dev = got.seconds()
        caveats = got.caveats()
        print(f"flush {flush >> 20} MiB: launch {host * 1e3:.3f} ms on the host, {len(dev)} interval(s) "
              f"{', '.join(f'{s * 1e6:.1f} us' for s in dev)} on the device"
              + (f"; caveats: {caveats}" if caveats else "; the hold saw the release"), flush=True)
