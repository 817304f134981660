"""The benchmark scripts are not run by the suite (they take minutes), but they must stay runnable."""

import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT

BENCHMARKS = ROOT / "benchmarks"


@pytest.mark.parametrize("script", sorted(p.name for p in BENCHMARKS.glob("*.py")))
def test_benchmark_script_imports(script: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Regression: bench_watch.py imported a vocabulary from bench_store.py after that script was
    folded into perf.py and deleted, and nothing noticed until someone ran it."""
    monkeypatch.syspath_prepend(str(BENCHMARKS))  # the scripts import each other as when run from there
    spec = importlib.util.spec_from_file_location(f"bench_{script[:-3]}", BENCHMARKS / script)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)
    spec.loader.exec_module(module)
    assert callable(getattr(module, "main", None)), f"{script} has no main()"


def _run_scale(tmp_path: Path, *extra: str) -> dict:
    """benchmarks/scale.py at tiny sizes, as its own process (it starts servers), and its JSON."""
    out = tmp_path / "scale.json"
    subprocess.run([sys.executable, str(BENCHMARKS / "scale.py"), "--work", str(tmp_path / "work"),
                    "--agent", "12", "--first-call", "6", "--generated", "40", "--queries", "4", "--writes", "2",
                    "--cold", "1", "--out", str(out), "--plot", str(tmp_path / "scale.png"), *extra],
                   check=True, capture_output=True, text=True, timeout=600, cwd=BENCHMARKS)
    return json.loads(out.read_text())


@pytest.mark.slow
def test_scale_harness_measures_agent_built_generated_and_hand_added_stores(tmp_path: Path) -> None:
    """The real-store harness runs end to end without npm: every tier has its figures, the
    hand-added files are indexed and committed by the first call, and the snapshots are kept."""
    report = _run_scale(tmp_path, "--no-official")
    kinds = [(t["kind"], t["n"]) for t in report["tiers"]]
    assert kinds == [("agent-built", 12), ("generated", 40)]
    agent, generated = report["tiers"]
    for figure in ("recall", "remember", "noop", "gate", "cold_start", "cold_start_minimal"):
        assert agent[figure]["n"] > 0, figure
    assert generated["recall"]["n"] == 20 and generated["remember"]["n"] == 10
    assert agent["official_search"] is None and report["official"].startswith("not run")
    (first,) = report["first_calls"]
    assert first["added"] == 6 and first["base"] == 12 and first["committed"]
    kept = {p.name for p in (tmp_path / "work").iterdir()}
    assert {"agent-12-v1", "generated-40-v1"} <= kept and "scratch" not in kept


@pytest.mark.slow
def test_scale_harness_runs_the_official_server_beside_ours(tmp_path: Path) -> None:
    """With npm and the registry at hand, the official server's calls are timed on the same store;
    without them the test skips (CI must not fail on the network)."""
    if not (shutil.which("node") and shutil.which("npm")):
        pytest.skip("node and npm are not installed: the official server cannot run")
    sys.path.insert(0, str(BENCHMARKS))
    try:
        import official
        entry, why = official.install()
    finally:
        sys.path.remove(str(BENCHMARKS))
    if entry is None:
        pytest.skip(f"the official server could not be installed: {why}")
    report = _run_scale(tmp_path, "--generated", "")
    (agent,) = report["tiers"]
    assert agent["official_search"]["n"] == 4 and agent["official_create"]["n"] == 2
    assert agent["cold_start_official"]["n"] == 1
    assert (tmp_path / "work" / "official-12-v1.jsonl").read_text().count('"type":"entity"') >= 12
