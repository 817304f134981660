"""The tables and the plot of a scale.py run, from its JSON (so a kept run can be drawn again).

    python benchmarks/scale_report.py benchmarks/results/scale.json --plot docs/perf-scale.png
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

Row = dict[str, object]


def _pair(stat: object) -> str:
    if not isinstance(stat, dict):
        return "-"
    return f"{stat['p50_ms']:.1f} / {stat['p95_ms']:.1f}"


def _p50(stat: object) -> str:
    return f"{stat['p50_ms']:.0f}" if isinstance(stat, dict) else "-"


def _ratio(ours: object, theirs: object) -> str:
    """Ours over theirs at p50: below 1.00x we answer faster."""
    if not (isinstance(ours, dict) and isinstance(theirs, dict)):
        return "-"
    return f"{ours['p50_ms'] / theirs['p50_ms']:.2f}x"


def tier_rows(tier: Row) -> list[tuple[str, str]]:
    """(figure, value) for one store, each of ours beside its same-run baseline."""
    cold = tier.get("cold_start")
    rows = [
        ("recall p50 / p95 (ms)", _pair(tier.get("recall"))),
        ("  official search_nodes, same queries (ms)", _pair(tier.get("official_search"))),
        ("  recall: ours / official (p50)", _ratio(tier.get("recall"), tier.get("official_search"))),
        ("  results per query: ours / official", f"{tier['recall_hits']:.1f} / {tier['official_hits']:.1f}"
         if tier.get("official_search") else f"{tier['recall_hits']:.1f} / -"),
        ("remember p50 / p95 (ms)", _pair(tier.get("remember"))),
        ("  official create_entities, same texts (ms)", _pair(tier.get("official_create"))),
        ("  remember: ours / official (p50)", _ratio(tier.get("remember"), tier.get("official_create"))),
    ]
    if tier.get("noop"):
        rows.append(("no-op call p50 / p95 (ms)", _pair(tier.get("noop"))))
    if tier.get("gate"):
        rows += [("conflict gate in-process p50 / p95 (ms)", _pair(tier.get("gate"))),
                 ("  unbounded gate, same subjects (ms)", _pair(tier.get("gate_unbounded")))]
    if isinstance(cold, dict):
        rows += [("cold start to tools/list p50 (ms)", _p50(cold)),
                 ("  minimal MCPServer, same run (ms)", _p50(tier.get("cold_start_minimal"))),
                 ("  official server, same run (ms)", _p50(tier.get("cold_start_official")))]
    return rows


def print_tables(report: Row) -> None:
    """The run as markdown tables: one column per store, then the first-call rows."""
    tiers = report["tiers"]
    assert isinstance(tiers, list)
    print(f"\n{report['date']}, commit {report['commit']}, load average at start {report['loadavg_at_start']}, "
          f"at end {report['machine']['loadavg']}, official: {report['official']}\n")  # type: ignore[index]
    if tiers:
        table = [tier_rows(t) for t in tiers]
        names = [name for name, _ in max(table, key=len)]
        print("| figure | " + " | ".join(f"{t['n']:,} {t['kind']}" for t in tiers) + " |")
        print("|---" * (len(tiers) + 1) + "|")
        for name in names:
            cells = [dict(rows).get(name, "-") for rows in table]
            print(f"| {name.strip()} | " + " | ".join(cells) + " |")
    first = report["first_calls"]
    assert isinstance(first, list)
    if first:
        print("\n| first call after N hand-added files | first call (ms) | spawn to answer (ms) | "
              "same, none added: first call / from spawn (ms) | all committed |")
        print("|---|---|---|---|---|")
        for f in first:
            print(f"| {f['added']:,} into {f['base']:,} | {f['first_call_ms']:.0f} | {f['spawn_to_answer_ms']:.0f} | "
                  f"{f['baseline_first_call_ms']:.0f} / {f['baseline_spawn_to_answer_ms']:.0f} | "
                  f"{'yes' if f['committed'] else 'NO'} |")


def draw(report: Row, out: Path) -> bool:
    """Remember and recall p50 against store size, ours beside the official server's where it ran,
    as a PNG at `out`; False (and a note) when matplotlib is absent (`pip install -e '.[bench]'`)."""
    try:
        import matplotlib
    except ImportError:
        print("no plot: matplotlib is not installed (pip install -e '.[bench]')")
        return False
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import ScalarFormatter

    tiers = [t for t in report["tiers"] if isinstance(t, dict) and t.get("recall")]  # type: ignore[union-attr]
    fig, axes = plt.subplots(1, 2, figsize=(10, 4.2))
    for ax, ours_key, theirs_key, title in ((axes[0], "remember", "official_create", "remember / create_entities"),
                                            (axes[1], "recall", "official_search", "recall / search_nodes")):
        for kind, marker in (("agent-built", "o"), ("generated", "s")):
            pts = [t for t in tiers if t["kind"] == kind]
            if pts:
                ax.plot([t["n"] for t in pts], [t[ours_key]["p50_ms"] for t in pts], marker=marker, color="tab:blue", label=f"memory-mcp ({kind} store)")
        theirs = [t for t in tiers if t.get(theirs_key)]
        if theirs:
            ax.plot([t["n"] for t in theirs], [t[theirs_key]["p50_ms"] for t in theirs], marker="^", color="tab:orange", label="official server-memory")
        ax.set_xscale("log")
        ax.set_yscale("log")
        sizes = sorted({t["n"] for t in tiers})
        ax.set_xticks(sizes, [f"{n // 1000}k" if n >= 1000 else str(n) for n in sizes])
        ax.yaxis.set_major_formatter(ScalarFormatter())
        ax.yaxis.set_minor_formatter(ScalarFormatter())
        ax.set_xlabel("memories in the store")
        ax.set_ylabel("p50 over stdio (ms)")
        ax.set_title(title)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle(f"{report['date'][:10]}, commit {report['commit']}, load average {report['loadavg_at_start']}",  # type: ignore[index]
                 fontsize=9)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return True


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("json", type=Path)
    ap.add_argument("--plot", type=Path, default=None)
    args = ap.parse_args()
    report = json.loads(args.json.read_text())
    print_tables(report)
    if args.plot and draw(report, args.plot):
        print(f"wrote {args.plot}")


if __name__ == "__main__":
    main()
