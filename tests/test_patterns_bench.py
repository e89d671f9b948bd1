"""benchmarks/patterns.py at small sizes: it explores, checks every result against numpy and
the hand-written BlackScholes, and writes its figures (no assertion on times)."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks import patterns


def test_small_run_checks_every_result(tmp_path: Path) -> None:
    out = tmp_path / "run.json"
    assert patterns.main(["--size", "small", "--quick", "--rounds", "3", "--only",
                          "dot,black_scholes", "--cache", str(tmp_path / "cache"),
                          "--json", str(out)]) == 0
    rows = json.loads(out.read_text())["rows"]
    assert [r["kernel"] for r in rows] == ["dot", "black_scholes"]
    assert [r["check"] for r in rows] == ["ok", "ok/ok"]
    assert all(r["explored"] > 0 and r["derivation"] for r in rows)
    assert rows[1]["versus"] == "hand-written OpenCL"
