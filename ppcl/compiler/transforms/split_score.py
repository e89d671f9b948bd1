"""The score of a split (Moll, Doerfert, Hack, Section 4.1): which of a ``SplitLoop``'s two
subkernels, the split (fast copy on the subdomain, the loop as formed on the rest) or the loop
as formed alone, a launch should run.

Splitting is not free: a group that runs the split enters up to three loops along x per row of
lanes instead of one, and the lanes at the edges of the fast range run one at a time where a
vector does not fill. On a launch whose fast subdomain is a sliver (an image a few pixels wider
than its border, a scalar argument that moves the guard), that costs more than the fast copy
saves. As in the paper, each subkernel gets a cost that is parametric in the launch's sizes and
scalar arguments:

* per lane, each copy costs the sum over its memory accesses of a weight by kind (uniform and
  consecutive 1, strided 4, divergent 8: a gather or scatter), plus 1 for an access under
  control that varies across lanes (a masked move) and 1 for every site the fast copy removes
  (a compare or select per lane); ``analysis/affine.py`` classifies the accesses;
* the volumes are bounding boxes over the parameters: ``N`` the lanes of the launch, ``F`` the
  lanes of the box of the fast subdomain (the range of ``gid0`` between its bounds, times the
  groups along y and z whose bases pass the group test), ``R`` the rows of lanes along x in the
  groups that meet the box; constraints that tie two dimensions together are left out, which
  only makes the box larger;
* ``split = fast * F + guarded * (N - F) + row * R`` against ``guarded = guarded * N``, with
  ``row`` a vector's width (8 lanes) of the fast copy run one lane at a time.

A split whose fast copy is not cheaper per lane, or whose gain over a whole group width cannot
pay for one row, loses on every launch and is dropped at compile time (static subkernel
elimination). The others keep their score in the IR (``wg.SplitScore``); the CPU device
evaluates it once per launch shape and scalar arguments (``devices/cpu/dispatch.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ppcl.compiler.analysis.affine import BASES, LANES, Model, Poly, accesses, affine_of
from ppcl.compiler.ir import nodes as ir
from ppcl.compiler.ir import wgnodes as wg
from ppcl.compiler.ir.visit import walk

WEIGHTS = {"uniform": 1, "consecutive": 1, "strided": 4, "divergent": 8}
MASKED = 1  # a uniform or consecutive access under varying control: a masked move
SITE = 1  # a guard, condition, min, max or clamp evaluated per lane
ROW_LANES = 8  # lanes at the edges of the fast range that run one at a time, per row

# names of values that are the same for every group of a launch
_LAUNCH_PREFIXES = ("gsize", "ngroups", "offset")


def _launch_level(p: Poly, params: frozenset[str], extra: frozenset[str] = frozenset()) -> bool:
    for name in p.names():
        if name in params or name in extra:
            continue
        if any(name.startswith(prefix) and name[len(prefix):] in ("0", "1", "2")
               for prefix in _LAUNCH_PREFIXES):
            continue
        return False
    return p.is_affine


_COMPARISONS = ("<", "<=", ">", ">=", "==", "!=")


def _varies(cond: ir.Expr, model: Model) -> bool:
    """Whether a condition may differ between the lanes of a group: some comparison in it has
    a side that moves with a lane or that the model cannot tell (True when unsure)."""
    comparisons = [n for n in walk(cond) if isinstance(n, ir.Binary) and n.op in _COMPARISONS]
    sides = [side for c in comparisons for side in (c.lhs, c.rhs)] or [cond]
    for side in sides:
        p = affine_of(side, model)
        if p is None or p.names() & set(LANES):
            return True
    return False


def masked(body: ir.Stmt, model: Model) -> bool:
    """Whether some statement of ``body`` runs under control that varies across lanes."""
    for node in walk(body):
        if isinstance(node, ir.If) and _varies(node.cond, model):
            return True
        if isinstance(node, ir.For | ir.While | ir.DoWhile):
            cond = node.cond
            if cond is not None and _varies(cond, model):
                return True
    return False


def lane_cost(body: ir.Stmt, model: Model, sites: int) -> int:
    """The cost of one lane of ``body`` (see the module docstring)."""
    extra = MASKED if masked(body, model) else 0
    total = sites * SITE
    for access in accesses(body, model):
        weight = WEIGHTS[access.kind]
        total += weight + (extra if weight == 1 else 0)
    return max(total, 1)


def make_score(test: Sequence[Poly], lower: Sequence[Poly], upper: Sequence[Poly], fast: int,
               guarded: int, model: Model) -> wg.SplitScore | str:
    """The score of a split with group test ``test`` (each ``p >= 0``) and bounds
    ``lower <= gid0 <= upper``, or why it loses on every launch."""
    if fast >= guarded:
        return f"the fast copy is not cheaper per lane ({fast} vs {guarded})"
    row = ROW_LANES * fast
    widest = model.local_size[0]
    if not model.rows and (guarded - fast) * widest <= row:
        return (f"a group's {widest} lanes along x save at most {(guarded - fast) * widest}, "
                f"less than one row costs ({row})")
    params = model.params
    tests: list[Poly] = []
    y: dict[int, tuple[list[Poly], list[Poly]]] = {1: ([], []), 2: ([], [])}
    for p in test:
        if _launch_level(p, params):
            tests.append(p)
            continue
        for d in (1, 2):
            base = BASES[d]
            a = p.coeff(base)
            if abs(a) == 1 and _launch_level(p, params, frozenset({base})):
                rest = p - Poly.var(base).scale(a)
                (y[d][0] if a == 1 else y[d][1]).append(-rest if a == 1 else rest)
    x_lows = [p for p in lower if _launch_level(p, params)]
    x_highs = [p for p in upper if _launch_level(p, params)]
    return wg.SplitScore(
        fast, guarded, row, tuple(p.terms for p in tests),
        tuple(p.terms for p in x_lows), tuple(p.terms for p in x_highs),
        tuple(p.terms for p in y[1][0]), tuple(p.terms for p in y[1][1]),
        tuple(p.terms for p in y[2][0]), tuple(p.terms for p in y[2][1]),
        model.local_size, model.rows)


# ---------------------------------------------------------------- evaluating a score


@dataclass(frozen=True)
class Volumes:
    """The volumes of a score for one launch: lanes, fast lanes, rows that run the split."""

    lanes: int
    fast: int
    rows: int


@dataclass(frozen=True)
class Choice:
    """A launch's evaluation of one score: both costs and the subkernel it runs."""

    split_cost: int
    guarded_cost: int
    volumes: Volumes

    @property
    def split(self) -> bool:
        return self.split_cost < self.guarded_cost

    @property
    def name(self) -> str:
        return "split" if self.split else "guarded"


def launch_values(global_size: tuple[int, int, int], local_size: tuple[int, int, int],
                  global_offset: tuple[int, int, int],
                  scalars: Mapping[str, int]) -> dict[str, int]:
    """The values a score is evaluated with: the scalar arguments and the launch's sizes."""
    values = dict(scalars)
    for d in range(3):
        values[f"gsize{d}"] = global_size[d]
        values[f"ngroups{d}"] = global_size[d] // max(local_size[d], 1)
        values[f"offset{d}"] = global_offset[d]
    return values


def _value(terms: wg.Terms, values: Mapping[str, int]) -> int:
    return Poly(terms).evaluate(values)


def _groups(lows: tuple[wg.Terms, ...], highs: tuple[wg.Terms, ...], d: int,
            values: Mapping[str, int], local: int) -> int:
    """The groups along dimension ``d`` whose base lies between the bounds."""
    offset, count = values[f"offset{d}"], values[f"ngroups{d}"]
    first, last = 0, count - 1
    for t in lows:  # base = offset + k * local >= lo
        first = max(first, -((offset - _value(t, values)) // local))
    for t in highs:
        last = min(last, (_value(t, values) - offset) // local)
    return max(0, last - first + 1)


def volumes(score: wg.SplitScore, values: Mapping[str, int]) -> Volumes:
    """``N``, ``F`` and ``R`` of a launch (KeyError names a value that is missing)."""
    local = score.local_size
    lanes = values["gsize0"] * values["gsize1"] * values["gsize2"]
    if any(_value(t, values) < 0 for t in score.tests):
        return Volumes(lanes, 0, 0)
    x_lo = max([values["offset0"]] + [_value(t, values) for t in score.x_lows])
    x_hi = min([values["offset0"] + values["gsize0"] - 1]
               + [_value(t, values) for t in score.x_highs])
    if x_hi < x_lo:
        return Volumes(lanes, 0, 0)
    ys = _groups(score.y_lows, score.y_highs, 1, values, local[1])
    zs = _groups(score.z_lows, score.z_highs, 2, values, local[2])
    fast = (x_hi - x_lo + 1) * ys * local[1] * zs * local[2]
    off = values["offset0"]
    xs = 1 if score.rows else (x_hi - off) // local[0] - (x_lo - off) // local[0] + 1
    return Volumes(lanes, fast, xs * ys * local[1] * zs * local[2])


def choose(score: wg.SplitScore, values: Mapping[str, int]) -> Choice:
    """Both costs of a launch and the cheaper subkernel (KeyError: a value is missing)."""
    v = volumes(score, values)
    split = score.fast * v.fast + score.guarded * (v.lanes - v.fast) + score.row * v.rows
    return Choice(split, score.guarded * v.lanes, v)


def _folded(terms: wg.Terms, launch: Mapping[str, int], order: Mapping[str, int]) -> str:
    """A polynomial with the launch's sizes folded in, as a Python expression over ``s``, the
    scalar arguments by position (``order``)."""
    const = 0
    parts: list[str] = []
    for m, c in terms:
        at: list[str] = []
        for n in m:
            if n in order:
                at.append(f"s[{order[n]}]")
            else:
                c *= launch[n]
        if at:
            parts.append("*".join([str(c)] + at))
        else:
            const += c
    return "(" + " + ".join([str(const)] + parts) + ")"


class LaunchScore:
    """One score with a launch's sizes folded in: ``split(scalars)`` says what ``choose`` says
    for the scalar arguments ``names`` (by position), in about a microsecond, for a dispatcher
    that meets new scalar values at every launch (LU's pivot). The score's polynomials have
    integer coefficients and name positions only; they are made into one Python function."""

    def __init__(self, score: wg.SplitScore, global_size: tuple[int, int, int],
                 local_size: tuple[int, int, int], global_offset: tuple[int, int, int],
                 names: Sequence[str]) -> None:
        launch = launch_values(global_size, local_size, global_offset, {})
        order = {n: i for i, n in enumerate(names)}

        def forms(group: tuple[wg.Terms, ...]) -> list[str]:
            return [_folded(t, launch, order) for t in group]

        lanes = global_size[0] * global_size[1] * global_size[2]
        local = score.local_size
        lines = ["def split(s):"]
        for test in forms(score.tests):  # no fast lane: split = guarded * N
            lines.append(f"    if {test} < 0: return False")
        x_lo = ", ".join([str(global_offset[0])] + forms(score.x_lows))
        x_hi = ", ".join([str(global_offset[0] + global_size[0] - 1)] + forms(score.x_highs))
        lines.append(f"    x_lo = max(({x_lo},))")
        lines.append(f"    x_hi = min(({x_hi},))")
        lines.append("    if x_hi < x_lo: return False")
        for d, lows, highs in ((1, score.y_lows, score.y_highs), (2, score.z_lows, score.z_highs)):
            offset, size = global_offset[d], local[d]
            first = ", ".join(["0"] + [f"-(({offset} - {f}) // {size})" for f in forms(lows)])
            last = ", ".join([str(launch[f"ngroups{d}"] - 1)]
                             + [f"({f} - {offset}) // {size}" for f in forms(highs)])
            lines.append(f"    g{d} = max(0, min(({last},)) - max(({first},)) + 1)")
        lines.append(f"    fast = (x_hi - x_lo + 1) * g1 * {local[1]} * g2 * {local[2]}")
        off = global_offset[0]
        xs = "1" if score.rows else f"((x_hi - {off}) // {local[0]} - (x_lo - {off}) // {local[0]} + 1)"
        lines.append(f"    rows = {xs} * g1 * {local[1]} * g2 * {local[2]}")
        lines.append(f"    return {score.fast} * fast + {score.guarded} * ({lanes} - fast) "
                     f"+ {score.row} * rows < {score.guarded * lanes}")
        namespace: dict[str, Any] = {}
        exec(compile("\n".join(lines), "<split score>", "exec"), namespace)  # noqa: S102
        self.source = "\n".join(lines)
        self.split: Callable[[Sequence[int]], bool] = namespace["split"]


# What evaluating the scores for new scalar values costs, in the scores' units (a unit is about
# 0.08 ns of a lane's work on the machines measured: LU's 384x384 update, 12 units a lane, ran
# in 146 us; the evaluation takes 2-3 us). A launch shape on which the split can save less than
# this runs its loop as formed without consulting the scores: LU's 512-lane row scaling, which
# saves 5 units a lane at most, paid 2.8 us a launch for a choice worth 0.2 us.
DISPATCH_UNITS = 30000
# What a launch whose scalar values came before pays for its choice: the values' key and two
# lookups, about 0.5 us. A shape between the two (a 4096-lane stencil saves at most 24576
# units, measured 4.3 against 1.0 us a launch guarded and split) keeps a choice per value
# while the values repeat (a time-step loop's constant size) and stops choosing once new
# values keep coming (``devices/cpu/dispatch.py``).
LOOKUP_UNITS = 6000


def most_saved(score: wg.SplitScore, global_size: tuple[int, int, int]) -> int:
    """The most the split of a loop with ``score`` can save on a launch of ``global_size``:
    ``guarded - fast`` for every lane."""
    g = global_size
    return (score.guarded - score.fast) * g[0] * g[1] * g[2]


def worth_dispatching(score: wg.SplitScore, global_size: tuple[int, int, int]) -> bool:
    """Whether the split can save more than looking up a kept choice costs (``LOOKUP_UNITS``):
    the loop gets a choice on launches of ``global_size``."""
    return most_saved(score, global_size) >= LOOKUP_UNITS


def worth_evaluating(score: wg.SplitScore, global_size: tuple[int, int, int]) -> bool:
    """Whether the split can save more than evaluating the scores for new scalar values
    costs (``DISPATCH_UNITS``)."""
    return most_saved(score, global_size) >= DISPATCH_UNITS


def needed_names(score: wg.SplitScore) -> set[str]:
    """The scalar arguments a score reads (the launch's sizes aside)."""
    names: set[str] = set()
    for group in (score.tests, score.x_lows, score.x_highs, score.y_lows, score.y_highs,
                  score.z_lows, score.z_highs):
        for t in group:
            names |= Poly(t).names()
    return {n for n in names
            if not any(n.startswith(p) and n[len(p):] in ("0", "1", "2")
                       for p in _LAUNCH_PREFIXES)}


# ---------------------------------------------------------------- the score as text


def _extreme(kind: str, first: str, terms: tuple[wg.Terms, ...]) -> str:
    items = [first] + [str(Poly(t)) for t in terms]
    return items[0] if len(items) == 1 else f"{kind}({', '.join(items)})"


def score_lines(score: wg.SplitScore) -> list[str]:
    """The score's expressions, as ``ppcl explain`` and ``PPCL_DEBUG=plans`` print them."""
    lx, ly, lz = score.local_size
    x = (f"gid0 in [{_extreme('max', 'offset0', score.x_lows)}, "
         f"{_extreme('min', 'offset0 + gsize0 - 1', score.x_highs)}]")
    lines = [f"split = {score.fast}*F + {score.guarded}*(N - F) + {score.row}*R, "
             f"guarded = {score.guarded}*N",
             "N = gsize0*gsize1*gsize2",
             f"F = |{x}| * {ly}*Y * {lz}*Z"]
    if score.tests:
        lines[-1] += " if " + " and ".join(f"{Poly(t)} >= 0" for t in score.tests)
    for name, d, lows, highs in (("Y", 1, score.y_lows, score.y_highs),
                                 ("Z", 2, score.z_lows, score.z_highs)):
        if lows or highs:
            lines.append(f"{name} = groups with base{d} in [{_extreme('max', f'offset{d}', lows)}"
                         f", {_extreme('min', f'offset{d} + gsize{d} - {score.local_size[d]}', highs)}]")
        else:
            lines.append(f"{name} = ngroups{d}")
    per = "1 per row of groups" if score.rows else f"groups of {lx} lanes meeting the x range"
    lines.append(f"R = ({per}) * {ly}*Y * {lz}*Z")
    return lines
