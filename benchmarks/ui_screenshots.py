"""The screenshots of docs/ui.md, taken of the real page in a real headless Chromium (Debian's,
through Playwright) over a small store made for them (the tests' sample store and a few more).

    python benchmarks/ui_screenshots.py            # writes docs/ui/timeline.png, memory.png, conflicts.png
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

from ui_browser_support import Served, browser, missing  # noqa: E402
from ui_support import sample_store  # noqa: E402

OUT = REPO / "docs" / "ui"
MORE = [
    ("The billing service retries a failed charge three times, 10 minutes apart; never more, or the bank "
     "flags the card.", "decision", ["billing", "payments"], ["src/billing/**"]),
    ("`make test` needs Postgres 16 running locally: `docker compose up db` first.", "knowledge", ["postgres"], []),
    ("Prefer small pull requests: one change each, under 400 lines.", "preference", ["review"], []),
    ("The 2026-11 outage came from a cron job that ran twice after the DST change; jobs now run in UTC.",
     "episode", ["cron", "outage"], ["ops/cron/**"]),
]


def main() -> int:
    why = missing()
    if why:
        print(f"no screenshots: {why}", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory() as work:
        os.environ["HOME"] = work  # the person's record of accepted memories: this store's only
        sample = sample_store(Path(work) / "store")
        for text, kind, entities, paths in MORE:
            sample.store.remember(text, type=kind, entities=entities, paths=paths, trust="user-stated")
        served = Served(sample.store)
        OUT.mkdir(parents=True, exist_ok=True)
        try:
            with browser() as context:
                page = context.new_page()
                page.goto(served.login())
                page.wait_for_selector("#count-conflicts")
                page.screenshot(path=str(OUT / "timeline.png"), full_page=True)
                page.goto(served.url(f"/m/{sample.older}"))
                page.screenshot(path=str(OUT / "memory.png"), full_page=True)
                page.goto(served.url("/inbox"))
                page.locator("#conflicts").screenshot(path=str(OUT / "conflicts.png"))
        finally:
            served.stop()
            sample.store.close()
    print(f"wrote {', '.join(p.name for p in sorted(OUT.glob('*.png')))} in {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
