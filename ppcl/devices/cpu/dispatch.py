"""The CPU device's split dispatcher: which split loops of a kernel a launch runs as split.

Every ``SplitLoop`` with a score (``compiler/transforms/split_score.py``) has a bit in the
launch descriptor's ``unsplit`` mask; the generated C runs the loop as formed where its bit is
set. The scores read the launch's sizes, fixed for one ``CPULaunch``, and some scalar
arguments: the mask is computed once per value of those arguments and kept, so a repeated
launch costs one dictionary lookup and the descriptor of its mask is reused. A shape whose
split loops save less than a new value's evaluation costs (``worth_evaluating``) chooses only
while values repeat: after ``NEW_VALUES_LIMIT`` new values outnumbering the repeats it gives
up (``gave_up``), and the launch runs those loops as formed from then on.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ppcl.compiler.codegen.c_unit import ArgKind
from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.ir import wgnodes as wg
from ppcl.compiler.ir.types import ScalarType
from ppcl.compiler.ir.visit import find_all
from ppcl.compiler.transforms.split_score import (
    Choice,
    LaunchScore,
    choose,
    launch_values,
    needed_names,
    worth_dispatching,
    worth_evaluating,
)
from ppcl.devices.interface import ArgValue, NDRange, ValueArg

# the masks kept per launch shape: a kernel launched with ever new scalar values (a frame
# counter) must not grow the table without bound
MAX_KEPT = 256
# new scalar values a shape whose choice is worth less than its evaluation tries before it
# gives up choosing (LU's row scaling passes a new pivot at every launch: 2.8 us each)
NEW_VALUES_LIMIT = 8


@dataclass(frozen=True)
class _Scalar:
    index: int
    name: str
    signed: bool


class SplitDispatcher:
    """The ``unsplit`` masks of one kernel over one NDRange, by the scalar arguments its scores
    read. ``choices`` keeps, per key, each split loop's :class:`Choice` (for tests and
    ``ppcl explain``)."""

    def __init__(self, loops: Sequence[wg.SplitLoop], arg_kinds: Sequence[ArgKind],
                 ndrange: NDRange) -> None:
        self.loops = tuple(loops)
        self.ndrange = ndrange
        scores = []
        names: set[str] = set()
        for loop in self.loops:
            assert loop.score is not None
            scores.append(loop.score)
            names |= needed_names(loop.score)
        self.scores: tuple[wg.SplitScore, ...] = tuple(scores)
        self.scalars = tuple(
            _Scalar(i, kind.name, isinstance(kind.type, ScalarType) and kind.type.is_signed)
            for i, kind in enumerate(arg_kinds) if kind.kind == "value" and kind.name in names)
        self.masks: dict[tuple[bytes, ...], int] = {}
        order = [s.name for s in self.scalars]
        self.launch_scores = tuple(
            LaunchScore(score, ndrange.global_size, ndrange.local_size, ndrange.global_offset,
                        order) for score in scores)
        # every loop saves less than choosing for new values costs: choose while they repeat
        self.repeats_only = not any(worth_evaluating(score, ndrange.global_size)
                                    for score in scores)
        self.loop_bits = sum(1 << loop.index for loop in self.loops)
        self.new_values = self.repeats = 0
        self.gave_up = False

    @staticmethod
    def of(formed_body: ir.Stmt, arg_kinds: Sequence[ArgKind],
           ndrange: NDRange) -> SplitDispatcher | None:
        """The dispatcher of a kernel over ``ndrange``, or None when no scored split loop is
        worth a choice on it (``fixed_unsplit`` gives those loops' bits)."""
        loops = [s for s in find_all(formed_body, wg.SplitLoop)
                 if s.score is not None and worth_dispatching(s.score, ndrange.global_size)]
        return SplitDispatcher(loops, arg_kinds, ndrange) if loops else None

    def key(self, args: Sequence[ArgValue]) -> tuple[bytes, ...]:
        out = []
        for s in self.scalars:
            arg = args[s.index]
            out.append(arg.data if isinstance(arg, ValueArg) else b"")
        return tuple(out)

    def mask(self, args: Sequence[ArgValue]) -> int:
        """The ``unsplit`` mask of a launch with ``args`` (computed once per key)."""
        key = self.key(args) if self.scalars else ()
        found = self.masks.get(key)
        if found is not None:
            self.repeats += 1
            return found
        self.new_values += 1
        if (self.repeats_only and self.new_values > NEW_VALUES_LIMIT
                and self.new_values > self.repeats):
            self.gave_up = True  # the launch runs the loops as formed from now on
            return self.loop_bits
        mask = self.evaluate(key)
        if len(self.masks) >= MAX_KEPT:
            self.masks.clear()
        self.masks[key] = mask
        return mask

    def _values(self, key: tuple[bytes, ...]) -> list[int]:
        return [int.from_bytes(data, "little", signed=s.signed)
                for s, data in zip(self.scalars, key)]

    def evaluate(self, key: tuple[bytes, ...]) -> int:
        """The mask for the scalar values of ``key``, from the scores with the launch's sizes
        folded in (``LaunchScore``): a few microseconds for a kernel launched with new values
        every time."""
        values = self._values(key)
        mask = 0
        for loop, score in zip(self.loops, self.launch_scores):
            if not score.split(values):
                mask |= 1 << loop.index
        return mask

    @property
    def choices(self) -> dict[tuple[bytes, ...], tuple[Choice, ...]]:
        """Each kept key's :class:`Choice` per split loop, both costs shown (for tests and
        ``ppcl explain``; the launches only need the mask)."""
        r = self.ndrange
        out = {}
        for key in self.masks:
            scalars = {s.name: v for s, v in zip(self.scalars, self._values(key))}
            values = launch_values(r.global_size, r.local_size, r.global_offset, scalars)
            out[key] = tuple(choose(score, values) for score in self.scores)
        return out


def fixed_unsplit(formed_body: ir.Stmt, ndrange: NDRange) -> int:
    """The ``unsplit`` bits of the scored split loops too small on ``ndrange`` to be worth a
    choice: they run as formed on every launch of the shape, with no evaluation."""
    mask = 0
    for loop in find_all(formed_body, wg.SplitLoop):
        if loop.score is not None and not worth_dispatching(loop.score, ndrange.global_size):
            mask |= 1 << loop.index
    return mask
