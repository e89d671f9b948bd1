"""Flag stores: a launch-invariant value stored to a launch-invariant global address under a
varying condition (the "something changed" flag of a breadth-first search update), checked
against numpy on ragged sizes, with the condition never, sometimes and always true, and with
the flag in the same buffer as another argument, where the order of a work-item's own accesses
decides the result. Any rewrite of such stores (moving the store out of the work-item loop,
reading the flag first) must keep these."""

from __future__ import annotations

import numpy as np
import pytest
from launch import run, serial_context

import ppcl as cl
from benchmarks.programs.irregular import BFS_SOURCE

# the update kernel of the second benchmark suite's breadth-first search, as it is written there
BFS2 = BFS_SOURCE



@pytest.mark.parametrize("density", [0.0, 0.3, 1.0])
@pytest.mark.parametrize("n, local", [(1000, 64), (77, 16), (256, 256)])
def test_bfs_update_matches_numpy(density: float, n: int, local: int) -> None:
    rng = np.random.default_rng(n + int(density * 10))
    updating = (rng.random(n) < density).astype(np.uint8)
    mask = rng.integers(0, 2, n).astype(np.uint8)
    visited = rng.integers(0, 2, n).astype(np.uint8)
    over = np.array([7], np.int32)
    want_mask, want_visited = mask.copy(), visited.copy()
    want_mask[updating != 0] = 1
    want_visited[updating != 0] = 1
    want_over = 1 if updating.any() else 7
    size = -(-n // local) * local  # a ragged last group
    run(BFS2, "bfs_kernel2", (size,), (local,), mask, updating, visited, over, np.int32(n))
    np.testing.assert_array_equal(mask, want_mask)
    np.testing.assert_array_equal(visited, want_visited)
    np.testing.assert_array_equal(updating, np.zeros(n, np.uint8))
    assert over[0] == want_over


def _run_aliased(updating: np.ndarray, flag_in: str) -> dict[str, np.ndarray]:
    """bfs_kernel2 with ``over`` the same buffer as ``flag_in`` (its first four bytes)."""
    n = updating.size
    context = serial_context()
    queue = cl.CommandQueue(context)
    flags = cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR
    host = {"mask": np.zeros(n, np.uint8), "updating": updating.copy(),
            "visited": np.zeros(n, np.uint8)}
    buffers = {k: cl.Buffer(context, flags, hostbuf=v) for k, v in host.items()}
    kernel = cl.Kernel(cl.Program(context, BFS2).build(), "bfs_kernel2")
    kernel(queue, (n,), (16,), buffers["mask"], buffers["updating"], buffers["visited"],
           buffers[flag_in], np.int32(n))
    for k, v in host.items():
        cl.enqueue_copy(queue, v, buffers[k])
    queue.finish()
    return host


def test_flag_aliasing_a_later_store_of_the_same_work_item() -> None:
    # work-item 0 alone writes: the flag (bytes 0-3 of updating) becomes 1, then updating[0]
    # becomes 0; a flag stored after the work-item's last access would leave updating[0] at 1
    updating = np.zeros(48, np.uint8)
    updating[0] = 1
    got = _run_aliased(updating, "updating")
    np.testing.assert_array_equal(got["updating"], np.zeros(48, np.uint8))
    assert got["mask"][0] == 1 and got["mask"][1:].sum() == 0


def test_flag_aliasing_an_earlier_store_of_the_same_work_item() -> None:
    # work-item 1 writes mask[1] = 1, then the flag over mask[0..3] = 1, 0, 0, 0
    updating = np.zeros(48, np.uint8)
    updating[1] = 1
    got = _run_aliased(updating, "mask")
    want = np.zeros(48, np.uint8)
    want[0] = 1
    np.testing.assert_array_equal(got["mask"], want)
    assert got["visited"][1] == 1


def test_flag_already_set_stays_set_and_nothing_else_is_written() -> None:
    n = 100
    updating = np.zeros(n, np.uint8)
    mask = np.full(n, 5, np.uint8)
    visited = np.full(n, 6, np.uint8)
    over = np.array([1], np.int32)
    run(BFS2, "bfs_kernel2", (112,), (16,), mask, updating, visited, over, np.int32(n))
    assert over[0] == 1 and (mask == 5).all() and (visited == 6).all()
