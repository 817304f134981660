"""The benchmark scripts are not run by the suite (they take minutes), but they must stay runnable."""

import importlib.util
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


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
