"""Exploration: every variant derived and measured once, the measurements kept on disk per
(expression, device, sizes), and a second exploration choosing the same variant from the
cache alone."""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np

import ppcl as cl
from ppcl.patterns import codegen, explore, interp, run
from ppcl.patterns import derive as d
from ppcl.patterns import expr as px
from ppcl.patterns import rules as r


def test_exploration_is_reproducible_from_the_cache(tmp_path: Path, ctx: cl.Context,
                                                    queue: cl.CommandQueue) -> None:
    problem = d.scal()
    sizes = {"N": 4096}
    data = {"x": np.arange(4096, dtype=np.float32), "a": 2.0}
    measured: list[str] = []

    def measure(derived: px.Expr, local: int) -> float:
        runnable = run.Runnable(ctx, codegen.lower(derived, problem.inputs, sizes, local))
        (out,) = runnable.run(queue, data)
        np.testing.assert_array_equal(out, 2.0 * data["x"])
        measured.append(px.show(derived))
        # a deterministic cost, so that the choice is known: fewer, wider work-items win
        return 1.0 / (len(px.show(derived)) + local)

    candidates = explore.variants((64, 256), (1, 4), (1, 8))
    progress = io.StringIO()
    first = explore.explore(problem, sizes, "dev", candidates, measure, str(tmp_path), progress)
    assert first.measured == len(candidates) == len(measured)
    assert "8/8 variants" in progress.getvalue()
    saved = json.loads(Path(first.path).read_text())
    assert len(saved["variants"]) == 8 and saved["device"] == "dev"

    def refuse(derived: px.Expr, local: int) -> float:
        raise AssertionError("a cached variant was measured again")

    second = explore.explore(problem, sizes, "dev", candidates, refuse, str(tmp_path), None)
    assert second.measured == 0
    assert second.best == first.best
    assert second.best.derivation.startswith("vectorize{width=4}@0,split-join")

    other = explore.explore(problem, {"N": 8192}, "dev", candidates[:1],
                            lambda e, local: 1.0, str(tmp_path), None)
    assert other.path != first.path and other.measured == 1


def test_failed_variants_are_recorded(tmp_path: Path) -> None:
    problem = d.scal()
    candidates = explore.variants((3, 4), (1,), (1,))  # 4096 is no multiple of 3

    def lower_only(derived: px.Expr, local: int) -> float:
        codegen.lower(derived, problem.inputs, {"N": 4096}, local)
        return 1.0

    result = explore.explore(problem, {"N": 4096}, "dev", candidates, lower_only,
                             str(tmp_path), None)
    failed, fine = result.results
    assert failed.time_s is None and "not a whole number" in failed.error
    assert result.best == fine


def test_plot_when_matplotlib_is_there(tmp_path: Path) -> None:
    problem = d.scal()
    result = explore.explore(problem, {"N": 4096}, "dev", explore.variants((64,), (1, 4), (1,)),
                             lambda e, local: len(px.show(e)) * 1e-6, str(tmp_path), None)
    drawn = explore.plot(result, str(tmp_path / "scal.png"))
    assert drawn == (tmp_path / "scal.png").exists()


def test_rewrite_space_finds_lowered_derivations_that_preserve_meaning(tmp_path: Path) -> None:
    problem = d.scal()
    rules = [r.SplitJoin(4), r.Vectorize(4), r.MapToLevel("global"), r.MapToLevel("seq")]
    found = explore.rewrite_space(problem.expr, rules, depth=4)
    texts = {d.show_derivation(s) for s in found}
    assert "map-level{level=global}@0" in texts  # one work-item per element
    assert any(t.startswith("vectorize{width=4}@0,split-join{n=4}@0") for t in texts)
    xs = [float(v) for v in range(16)]
    want = interp.evaluate(problem.expr, {"x": xs, "a": 2.0})
    for steps in found:
        derived = d.derive(problem.expr, steps)
        assert r.is_lowered(derived)
        got = interp.evaluate(derived, {"x": xs, "a": 2.0})
        assert np.allclose(np.array(got, dtype=float), want)
    candidates = [explore.Variant(0, 0, 1, steps=s) for s in found]
    result = explore.explore(problem, {"N": 16}, "dev", candidates,
                             lambda e, local: float(len(px.show(e))), str(tmp_path), None)
    assert result.measured == len(found) and result.best.derivation in texts
