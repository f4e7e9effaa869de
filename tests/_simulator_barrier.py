"""numba-cuda's simulator with a block barrier that wakes on arrival instead of by polling.

The simulator runs a block's threads as Python threads; at a ``syncthreads`` each thread sets a
flag and waits, and the block's manager spins over the threads' flags (holding the GIL as often
as they do) until all live ones are waiting. The GPU solver's kernels pass a barrier a few
times per row, so the spinning made the GPU tests the slowest of the suite. This manager keeps
the simulator's semantics (a barrier releases when every live thread of the block waits at
one; a thread that ends leaves the count; an exception aborts the block's other threads and is
raised from the launch) with a condition variable: the last thread to arrive releases the rest.
Threads stay real threads, so races between them (what the shared-array lock in
``linsvm.solvers._cuda_compat`` is for) remain possible as before.
"""

from __future__ import annotations

import threading


def install() -> bool:
    """Replace the simulator's block manager (idempotent); False where the simulator's classes
    are not the ones this was written for (then the original stays)."""
    try:
        from numba.cuda.simulator import kernel
    except ImportError:
        return False
    if getattr(kernel.BlockManager, "_wakes_on_arrival", False):
        return True
    original_manager, original_thread = kernel.BlockManager, kernel.BlockThread
    if not all(hasattr(original_thread, name) for name in ("syncthreads", "run")):
        return False

    class BlockThread(original_thread):
        def syncthreads(self):
            if self.abort:
                raise RuntimeError("abort flag set on syncthreads call")
            self._manager.arrive_and_wait()
            if self.abort:
                raise RuntimeError("abort flag set on syncthreads clear")

        def run(self):
            try:
                super().run()  # (stores an exception in self.exception)
            finally:
                self._manager.leave(self)

    class BlockManager(original_manager):
        _wakes_on_arrival = True

        def run(self, grid_point, *args):
            import numpy as np

            self._changed = threading.Condition()
            self._live = int(np.prod(self._block_dim))
            self._waiting = 0
            self._generation = 0
            self._failed = None

            def target():
                self._f(*args)

            self._threads = [
                BlockThread(target, self, grid_point, point, self._debug)
                for point in np.ndindex(*self._block_dim)
            ]
            for thread in self._threads:
                thread.start()
            for thread in self._threads:
                thread.join()
            if self._failed is not None:
                raise self._failed.exception[0].with_traceback(self._failed.exception[1])

        def arrive_and_wait(self):
            with self._changed:
                generation = self._generation
                self._waiting += 1
                if self._waiting == self._live:
                    self._release()
                    return
                while generation == self._generation and self._failed is None:
                    self._changed.wait()

        def leave(self, thread):
            with self._changed:
                self._live -= 1
                if thread.exception and self._failed is None:
                    self._failed = thread
                    for other in self._threads:
                        other.abort = True
                    self._changed.notify_all()
                elif self._waiting and self._waiting == self._live:
                    self._release()

        def _release(self):
            self._waiting = 0
            self._generation += 1
            self._changed.notify_all()

    kernel.BlockManager = BlockManager
    return True
