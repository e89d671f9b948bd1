"""Whether a launch shape runs on the calling thread alone or on the whole pool.

Handing a launch's work-groups to the pool's workers costs a few microseconds of cross-core
traffic (waking them, claiming chunks, waiting for the last one), more on many cores and in
virtual machines: a 4096-item stencil launched back to back took 4.3 us on one thread and 9.2
us on 16 of the GPU machine's cores. A launch shape whose work is that small runs faster on the
calling thread alone, and one with more work faster on the pool. Neither the IR nor the shape
tells the work apart (loops over scalar arguments, guards idling most of a grid), so the choice
is measured, with no run spent on a mode that loses:

- On the pool, a measured launch reports the calling thread's time in its own chunks and how
  many of the launch's chunks it ran; that time per chunk times the chunks estimates the launch
  alone (an upper bound when the pool's threads slow each other down, a poor one when chunks
  differ in work). An estimate below ``MARGIN`` of the pooled time switches the shape to run
  alone, only for a launch under ``ALONE_MOST_NS`` on the pool: a hand-off costs microseconds,
  so a longer launch cannot gain much alone, and could lose its whole parallel speedup.
  When the caller ran none of the chunks of a launch under ``PROBE_MOST_NS`` (alone, it could
  take as many times longer as the pool has threads), or the estimate says alone would take
  less than ``PROBE_BELOW`` times the pooled time without clearing the margin, the next launch
  is run alone and measured instead (a probe): a two-kernel Jacobi step of 4096 items stayed on the
  pool at 0.9-2.3 us a launch against 0.35 us alone, its estimates inconclusive.
- Alone, a measured launch gives its time, and the next two launches run on the pool, the
  second measured (the first wakes the workers, asleep while the shape ran alone): the pool
  wins back the shape when it is faster by the same margin.

A sample is taken at the first launch of a shape, then after 2, 4, ... up to ``MOST_INTERVAL``
launches while the choice stands (back to 2 when the shape goes alone; still growing when it
comes back to the pool, so that a poor estimate costs ever less), so launches between samples
pay no measurement and work that changes with the arguments (a factorization's shrinking
update) is followed. A kernel's new launch shape (a factorization's update shrinking by a row
each step, a wavefront growing by a cell) starts where the kernel's last shape stands
(``PoolChoice.following``): in its mode, on its sampling schedule, sampled at once only when it
went alone and the new shape has more groups. Starting every shape afresh sampled the pool at
each one's first launch, and a shape lasting a few launches never left it.
"""

from __future__ import annotations

MARGIN = 0.9
PROBE_BELOW = 2.0
PROBE_MOST_NS = 10_000
ALONE_MOST_NS = 50_000
FIRST_INTERVAL = 2
MOST_INTERVAL = 1024

TASK_ALONE = 1  # PPCL_TASK_ALONE in runtime.c
TASK_MEASURE = 2  # PPCL_TASK_MEASURE


class PoolChoice:
    """The mode of one launch shape: ``alone`` between samples, ``countdown`` launches until
    the next sample (see the module docstring)."""

    __slots__ = ("alone", "countdown", "interval", "alone_ns", "pool_ns", "waking", "changed")

    def __init__(self) -> None:
        self.alone = False
        self.countdown = 1
        self.interval = 1
        self.alone_ns: int | None = None  # measured alone, the pool's probe to come
        self.pool_ns: int | None = None  # measured on the pool, the probe alone to come
        self.waking = False  # the pool's probe to come is the one that wakes its workers
        self.changed = ""  # why the last change was made, for PPCL_DEBUG=plans

    @classmethod
    def following(cls, prior: PoolChoice, more_groups: bool) -> PoolChoice:
        """The choice of a kernel's new launch shape whose last shape had ``prior``;
        ``more_groups``: the new shape has more groups than that one."""
        choice = cls()
        choice.alone = prior.alone
        choice.interval = prior.interval
        choice.countdown = 1 if prior.alone and more_groups else max(1, prior.countdown)
        choice.changed = "as the kernel's last launch shape" if prior.alone else ""
        return choice

    def flags(self) -> int:
        """The task flags of a launch between samples."""
        return TASK_ALONE if self.alone else 0

    def sample_flags(self) -> int:
        """The task flags of a sampled launch: measured, alone unless probing the pool."""
        if (self.alone and self.alone_ns is None) or self.pool_ns is not None:
            return TASK_MEASURE | TASK_ALONE
        return TASK_MEASURE

    def observe(self, flags: int, total_ns: int, caller_ns: int, caller_chunks: int,
                chunks: int) -> bool:
        """Take a sampled launch's times; True when the mode changed."""
        if flags & TASK_ALONE and not self.alone:  # a pooled shape's probe alone
            pool_ns, self.pool_ns = self.pool_ns, None
            if pool_ns is not None and total_ns < pool_ns * MARGIN:
                return self._change(True, f"{total_ns / 1000:.1f} us alone against "
                                          f"{pool_ns / 1000:.1f} us on the pool (measured)")
            return self._settle()
        if flags & TASK_ALONE:
            self.alone_ns = max(1, total_ns)
            self.countdown = 1  # the next launches probe the pool
            self.waking = True
            return False
        if self.alone and self.alone_ns is not None:
            if self.waking:
                self.waking = False
                self.countdown = 1
                return False
            alone_ns, self.alone_ns = self.alone_ns, None
            if total_ns < alone_ns * MARGIN:
                return self._change(False, f"{total_ns / 1000:.1f} us on the pool against "
                                           f"{alone_ns / 1000:.1f} us alone")
            return self._settle()
        if total_ns >= ALONE_MOST_NS:
            return self._settle()
        if 0 < caller_chunks <= chunks:
            estimate = caller_ns * chunks // caller_chunks
            if estimate < total_ns * MARGIN:
                return self._change(True, f"{estimate / 1000:.1f} us alone (estimated from "
                                          f"{caller_chunks} of {chunks} chunks) against "
                                          f"{total_ns / 1000:.1f} us on the pool")
            if estimate >= total_ns * PROBE_BELOW:
                return self._settle()
        elif total_ns >= PROBE_MOST_NS:
            return self._settle()  # no estimate: alone could take the pool's threads times longer
        self.pool_ns = total_ns  # no estimate, or one too close to tell: measure alone
        self.countdown = 1
        return False

    def _change(self, alone: bool, why: str) -> bool:
        self.alone = alone
        self.changed = why
        if alone:
            self.interval = self.countdown = FIRST_INTERVAL
        else:
            self._settle()
        return True

    def _settle(self) -> bool:
        self.interval = min(self.interval * 2, MOST_INTERVAL)
        self.countdown = self.interval
        return False
