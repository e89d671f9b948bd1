"""The work-items one step of the checking device runs together, one lane each.

A batch is a range of consecutive work-groups (one group for kernels with barriers or
``__local`` memory; many for the rest, so a large NDRange runs in a few numpy steps). For
each lane it holds the ids OpenCL gives the work-item and the identities the race shadows
record (a global linear id, a group number).
"""

from __future__ import annotations

import numpy as np

from ppcl.devices.interface import NDRange


class Lanes:
    """The lanes of groups ``first`` to ``first + groups - 1`` of ``ndrange``."""

    def __init__(self, ndrange: NDRange, first: int, groups: int) -> None:
        local = ndrange.local_size
        per_group = local[0] * local[1] * local[2]
        ng = ndrange.num_groups
        self.ndrange = ndrange
        self.count = per_group * groups
        self.groups = groups
        group_linear = np.repeat(np.arange(first, first + groups, dtype=np.int64), per_group)
        local_linear = np.tile(np.arange(per_group, dtype=np.int64), groups)
        self.group_linear = group_linear
        self.per_group = per_group
        self.slot = np.repeat(np.arange(groups, dtype=np.int64), per_group)  # group in batch
        grp = np.stack([group_linear % ng[0], (group_linear // ng[0]) % ng[1],
                        group_linear // (ng[0] * ng[1])], axis=1)
        lid = np.stack([local_linear % local[0], (local_linear // local[0]) % local[1],
                        local_linear // (local[0] * local[1])], axis=1)
        position = grp * np.array(local, np.int64) + lid
        gsize = ndrange.global_size
        self.linear = (position[:, 2] * gsize[1] + position[:, 1]) * gsize[0] + position[:, 0]
        self.group_id = grp
        self.local_id = lid
        self.global_id = position + np.array(ndrange.global_offset, np.int64)
        self.all = np.ones(self.count, np.bool_)
        self.index = np.arange(self.count, dtype=np.int64)

    def ids(self, lane: int) -> tuple[tuple[int, int, int], tuple[int, int, int],
                                      tuple[int, int, int]]:
        """Global, local and group ids of one lane, as a finding reports them."""
        def three(a: np.ndarray) -> tuple[int, int, int]:
            return int(a[lane, 0]), int(a[lane, 1]), int(a[lane, 2])
        return three(self.global_id), three(self.local_id), three(self.group_id)

    def global_of_linear(self, linear: int) -> tuple[int, int, int]:
        gsize = self.ndrange.global_size
        off = self.ndrange.global_offset
        return (linear % gsize[0] + off[0], (linear // gsize[0]) % gsize[1] + off[1],
                linear // (gsize[0] * gsize[1]) + off[2])
