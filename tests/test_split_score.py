"""The score of a split and the CPU device's dispatcher (``transforms/split_score.py``,
``devices/cpu/dispatch.py``): a launch whose fast subdomain is a sliver runs the loop as
formed, a large one runs the split, the choice is kept per launch shape and scalar values,
both subkernels write what the unsplit kernel writes, and the scores are shown."""

from __future__ import annotations

import numpy as np
import pytest

from ppcl.compiler.frontend import compile_source
from ppcl.compiler.frontend.options import parse_build_options
from ppcl.compiler.ir import wgnodes as wg
from ppcl.compiler.ir.visit import find_all
from ppcl.compiler.pipeline import KernelSpec, kernel_ir
from ppcl.compiler.transforms.split_score import choose, launch_values
from ppcl.devices.cpu.device import CPUProgram
from ppcl.devices.cpu.dispatch import SplitDispatcher
from ppcl.devices.interface import BufferArg, NDRange, ValueArg
from ppcl.devices.serial import SerialDevice
from ppcl.settings import NO_DEBUG, read_settings
from tests.launch import aligned_empty, build_kernel, run_in_chunks
from tests.test_split import BOUND, CLAMPED, SOBEL_X, STENCIL


def _formed(source: str, name: str, local: tuple[int, int, int], options: str = ""):
    result = compile_source(source, "t.cl", options)
    return kernel_ir(result.module, name, KernelSpec(local), result.options).formed


def _score(source: str, name: str, local: tuple[int, int, int]) -> wg.SplitScore:
    (split,) = find_all(_formed(source, name, local).body, wg.SplitLoop)
    assert split.score is not None
    return split.score


def _split_and_plain(source: str) -> tuple[CPUProgram, CPUProgram]:
    """``source`` built for a serial CPU device as usual and with ``-ppcl-no-split``."""
    device = SerialDevice()
    module = compile_source(source, "t.cl").module
    return (CPUProgram(module, parse_build_options(""), NO_DEBUG, device.pool),
            CPUProgram(module, parse_build_options("-ppcl-no-split"), NO_DEBUG, device.pool))


def _scalars(*values: int) -> list[ValueArg]:
    return [ValueArg(np.int32(v).tobytes()) for v in values]


def test_score_prefers_the_loop_as_formed_on_a_sliver_and_the_split_on_a_large_domain() -> None:
    score = _score(STENCIL, "stencil", (32, 8, 1))
    tiny = choose(score, launch_values((32, 32, 1), (32, 8, 1), (0, 0, 0), {"ni": 32, "nj": 4}))
    large = choose(score, launch_values((2048, 2048, 1), (32, 8, 1), (0, 0, 0),
                                        {"ni": 2048, "nj": 2048}))
    assert tiny.volumes.fast == 2 * 2 * 8  # lanes 1..2 of the rows of groups 8..15, 16..23
    assert tiny.name == "guarded" and tiny.guarded_cost < tiny.split_cost
    assert large.name == "split" and large.split_cost < large.guarded_cost
    # an empty subdomain (the group test fails for every group) costs only the guarded lanes
    empty = choose(score, launch_values((64, 16, 1), (32, 8, 1), (0, 0, 0), {"ni": 4, "nj": 64}))
    assert empty.volumes.fast == 0 and empty.name == "guarded"


def test_dispatcher_chooses_per_launch_and_keeps_the_choice(monkeypatch) -> None:
    kernel = build_kernel(STENCIL, "stencil", local_size=(32, 8))
    ndrange = NDRange(2, (256, 128, 1), (32, 8, 1), (0, 0, 0))
    dispatcher = SplitDispatcher.of(kernel.generated.formed.body, kernel.arg_kinds, ndrange)
    assert dispatcher is not None
    (loop,) = dispatcher.loops
    buffers = [BufferArg(0), BufferArg(0)]
    assert dispatcher.mask([*buffers, *_scalars(32, 4)]) == 1 << loop.index  # a sliver
    assert dispatcher.mask([*buffers, *_scalars(128, 256)]) == 0  # most lanes fast
    evaluated: list[object] = []
    original = dispatcher.evaluate
    monkeypatch.setattr(dispatcher, "evaluate", lambda key: evaluated.append(key) or original(key))
    for _ in range(3):
        assert dispatcher.mask([*buffers, *_scalars(32, 4)]) == 1 << loop.index
        assert dispatcher.mask([*buffers, *_scalars(128, 256)]) == 0
    assert not evaluated  # both shapes were kept
    assert len(dispatcher.masks) == 2
    dispatcher.mask([*buffers, *_scalars(127, 256)])
    assert len(evaluated) == 1


def test_dispatcher_reads_only_the_scalars_its_scores_name() -> None:
    kernel = build_kernel(BOUND, "fir", local_size=(32,))
    ndrange = NDRange(1, (8192, 1, 1), (32, 1, 1), (0, 0, 0))
    dispatcher = SplitDispatcher.of(kernel.generated.formed.body, kernel.arg_kinds, ndrange)
    assert dispatcher is not None
    assert {s.name for s in dispatcher.scalars} == {"n", "taps"}


def test_a_launch_too_small_to_pay_for_a_choice_runs_the_loop_as_formed() -> None:
    """On a shape where the split saves less than evaluating the scores costs, no dispatcher
    is made: the loop's bit is set in the shape's descriptor and results stay exact."""
    from ppcl.compiler.transforms.split_score import DISPATCH_UNITS
    from ppcl.devices.cpu.dispatch import fixed_unsplit

    program, plain = _split_and_plain(STENCIL)
    small = NDRange(2, (32, 8, 1), (32, 8, 1), (0, 0, 0))
    launch = program.prepare("stencil", small)
    (loop,) = find_all(launch.compiled.generated.formed.body, wg.SplitLoop)
    assert loop.score is not None
    assert (loop.score.guarded - loop.score.fast) * 32 * 8 < DISPATCH_UNITS
    assert launch.dispatcher is None
    assert fixed_unsplit(launch.compiled.generated.formed.body, small) == 1 << loop.index
    ni, nj = 8, 32
    a = aligned_empty(ni * nj, np.float32)
    a[:] = np.random.default_rng(3).random(ni * nj, dtype=np.float32)
    out = [aligned_empty(ni * nj, np.float32) for _ in range(2)]
    for target, o in ((launch, out[0]), (plain.prepare("stencil", small), out[1])):
        o[:] = 0
        target.run([BufferArg(a.ctypes.data, a), BufferArg(o.ctypes.data, o),
                    *_scalars(ni, nj)])
    np.testing.assert_array_equal(out[0], out[1])


@pytest.mark.parametrize("ni,nj", [(32, 4), (32, 64), (67, 95), (2, 2)])
def test_both_subkernels_write_what_the_unsplit_kernel_writes(ni: int, nj: int) -> None:
    """Each value of the mask (split, loop as formed) against ``-ppcl-no-split``."""
    gsize = (-(-nj // 32) * 32, -(-ni // 8) * 8)
    rng = np.random.default_rng(ni * nj)
    a = aligned_empty(ni * nj, np.float32)
    a[:] = rng.random(ni * nj, dtype=np.float32)
    split = build_kernel(STENCIL, "stencil", local_size=(32, 8))
    plain = build_kernel(STENCIL, "stencil", "-ppcl-no-split", local_size=(32, 8))
    assert find_all(split.generated.formed.body, wg.SplitLoop)
    want = aligned_empty(ni * nj, np.float32)
    want[:] = 7.0
    run_in_chunks(plain, gsize, [a, want, np.int32(ni), np.int32(nj)], chunk=3)
    for mask in (0, 1):
        got = aligned_empty(ni * nj, np.float32)
        got[:] = 7.0
        run_in_chunks(split, gsize, [a, got, np.int32(ni), np.int32(nj)], chunk=3,
                      unsplit=mask)
        np.testing.assert_array_equal(got, want)


def test_the_device_launch_runs_the_dispatcher_choice() -> None:
    """Through the CPU device's launch object: the mask of each launch's scalars is kept and
    the results equal the unsplit kernel's."""
    program, plain = _split_and_plain(CLAMPED)
    ndrange = NDRange(2, (256, 64, 1), (16, 4, 1), (0, 0, 0))
    launch = program.prepare("blur", ndrange)
    assert launch.dispatcher is not None
    for w, h in ((64, 16), (5, 16), (64, 16)):
        r = 2
        src = aligned_empty(w * h, np.float32)
        src[:] = np.random.default_rng(w).random(w * h, dtype=np.float32)
        out = [aligned_empty(w * h, np.float32) for _ in range(2)]
        for o in out:
            o[:] = 0
        for target, o in ((launch, out[0]), (plain.prepare("blur", ndrange), out[1])):
            target.run([BufferArg(src.ctypes.data, src), BufferArg(o.ctypes.data, o),
                        *_scalars(w, h, r)])
        np.testing.assert_array_equal(out[0], out[1])
    masks = launch.dispatcher.masks
    assert len(masks) == 2  # the repeated launch found its choice
    choices = {key: [c.name for c in cs] for key, cs in launch.dispatcher.choices.items()}
    assert sorted(v[0] for v in choices.values()) == ["guarded", "split"]


def test_a_split_that_cannot_pay_for_a_row_is_dropped_at_compile_time() -> None:
    formed = _formed(SOBEL_X, "sobel_x", (1, 1, 1))
    assert not find_all(formed.body, wg.SplitLoop)
    assert any("no split (a group's 1 lanes" in line for line in formed.plans), formed.plans


def test_scores_are_in_the_plans() -> None:
    formed = _formed(STENCIL, "stencil", (32, 8, 1))
    (line,) = [p for p in formed.plans if "score" in p]
    assert "split = 6*F + 16*(N - F) + 48*R, guarded = 16*N" in line, line
    assert "Y = groups with base1 in [max(offset1, 1), min(offset1 + gsize1 - 8, ni - 9)]" \
        in line, line


def _stencil_outputs(launch, plain_launch, ni: int, nj: int, seed: int):
    """The outputs of ``launch`` and of the unsplit kernel's on one random input."""
    a = aligned_empty(ni * nj, np.float32)
    a[:] = np.random.default_rng(seed).random(ni * nj, dtype=np.float32)
    out = [aligned_empty(ni * nj, np.float32) for _ in range(2)]
    for target, o in ((launch, out[0]), (plain_launch, out[1])):
        o[:] = 0
        target.run([BufferArg(a.ctypes.data, a), BufferArg(o.ctypes.data, o),
                    *_scalars(ni, nj)])
    return out


def test_a_mid_sized_launch_chooses_while_its_scalar_values_repeat() -> None:
    """A shape whose split saves more than a kept choice costs and less than evaluating new
    values (LOOKUP_UNITS <= saved < DISPATCH_UNITS) gets a dispatcher: a time-step loop's
    repeated sizes run the split (a 4096-lane stencil ran guarded at 4.3 us a launch, split at
    1.0 us); new values at every launch make it give up, and the loop runs as formed."""
    from ppcl.compiler.transforms.split_score import (
        DISPATCH_UNITS,
        LOOKUP_UNITS,
        most_saved,
    )
    from ppcl.devices.cpu.dispatch import NEW_VALUES_LIMIT

    program, plain = _split_and_plain(STENCIL)
    shape = NDRange(2, (64, 32, 1), (32, 8, 1), (0, 0, 0))
    launch = program.prepare("stencil", shape)
    plain_launch = plain.prepare("stencil", shape)
    (loop,) = find_all(launch.compiled.generated.formed.body, wg.SplitLoop)
    assert loop.score is not None
    assert LOOKUP_UNITS <= most_saved(loop.score, (64, 32, 1)) < DISPATCH_UNITS
    dispatcher = launch.dispatcher
    assert dispatcher is not None and dispatcher.repeats_only
    for _ in range(3 * NEW_VALUES_LIMIT):  # the same sizes again and again: the split runs
        split, as_formed = _stencil_outputs(launch, plain_launch, 32, 64, seed=1)
        np.testing.assert_array_equal(split, as_formed)
    assert dispatcher.masks == {(np.int32(32).tobytes(), np.int32(64).tobytes()): 0}
    assert launch.dispatcher is dispatcher and not dispatcher.gave_up
    # sizes that change at every launch (a narrower row each time): it stops choosing
    for width in range(63, 63 - 8 * NEW_VALUES_LIMIT, -1):
        split, as_formed = _stencil_outputs(launch, plain_launch, 32, width, seed=width)
        np.testing.assert_array_equal(split, as_formed)
    assert dispatcher.gave_up and launch.dispatcher is None
    assert launch._fixed_unsplit == 1 << loop.index
    split, as_formed = _stencil_outputs(launch, plain_launch, 32, 64, seed=2)
    np.testing.assert_array_equal(split, as_formed)


@pytest.mark.parametrize("args,pick", [(["--global", "256,128", "--arg", "ni=32", "--arg", "nj=4"],
                                        "launch picks: guarded (split 524736, guarded 524288"),
                                       (["--global", "32,32", "--arg", "ni=32", "--arg", "nj=4"],
                                        "launch picks: guarded (split 16832, guarded 16384; "
                                        "N=1024, F=32, R=16; kept while the scalar values "
                                        "repeat: the split saves at most 10240, less than "
                                        "choosing for new values costs (30000))"),
                                       (["--global", "32,8", "--arg", "ni=32", "--arg", "nj=4"],
                                        "launch picks: guarded (the split saves at most 2560 "
                                        "on this launch, less than a kept choice costs: 6000)"),
                                       (["--global", "2048,2048", "--arg", "ni=2048",
                                         "--arg", "nj=2048"], "launch picks: split")])
def test_explain_prints_the_scores_and_the_pick(tmp_path, capsys, args: list[str],
                                                pick: str) -> None:
    from ppcl.cli import main

    path = tmp_path / "k.cl"
    path.write_text(STENCIL)
    assert main(["explain", str(path), "--local", "32,8", *args]) == 0
    out = capsys.readouterr().out
    for line in ("subkernels: split (the fast copy on the subdomain, guarded on the others), "
                 "guarded (the loop as formed)",
                 "split = 6*F + 16*(N - F) + 48*R, guarded = 16*N",
                 "F = |gid0 in [max(offset0, 1), min(offset0 + gsize0 - 1, nj - 2)]|", pick):
        assert line in out, out


def test_ppcl_split_setting_turns_splitting_off() -> None:
    assert read_settings({}).split
    assert not read_settings({"PPCL_SPLIT": "0"}).split
    assert read_settings({"PPCL_SPLIT": "1"}).split


LU_UPDATE = """
__kernel void update(__global float *A, int k, int n)
{
    int j = get_global_id(0);
    int i = get_global_id(1);
    if ((i > k) && (j > k) && (i < n) && (j < n))
        A[i * n + j] = A[i * n + j] - A[i * n + k] * A[k * n + j];
}
"""


@pytest.mark.parametrize("source,name,local,names", [
    (STENCIL, "stencil", (32, 8, 1), ("ni", "nj")),
    (CLAMPED, "blur", (16, 4, 1), ("w", "h", "r")),
    (BOUND, "fir", (32, 1, 1), ("n", "taps")),
    (LU_UPDATE, "update", (32, 8, 1), ("k", "n")),
])
def test_launch_score_agrees_with_choose(source: str, name: str, local: tuple[int, int, int],
                                         names: tuple[str, ...]) -> None:
    """The dispatcher's folded score (a function made per launch shape) answers as ``choose``
    on launches of many shapes, offsets and scalar values, inside and around the domain."""
    from ppcl.compiler.transforms.split_score import LaunchScore

    score = _score(source, name, local)
    rng = np.random.default_rng(len(names))
    seen = set()
    for _ in range(200):
        groups = [int(rng.integers(1, 9)) for _ in range(3)]
        gsize = (groups[0] * local[0], groups[1] * local[1], 1)
        offset = (int(rng.integers(0, 3)) * local[0], int(rng.integers(0, 40)), 0)
        values = [int(rng.integers(-5, 3 * max(gsize))) for _ in names]
        folded = LaunchScore(score, gsize, local, offset, names)
        want = choose(score, launch_values(gsize, local, offset, dict(zip(names, values))))
        assert folded.split(values) == want.split, (gsize, offset, values, folded.source)
        seen.add(want.split)
    assert seen == {True, False}
