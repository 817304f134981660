"""LoCoMo (snap-research/locomo, `locomo10.json`) as recall_eval reads it: each turn a document,
with the metadata an agent recording the conversation would give its memory (`Turn`), and each
question's evidence normalised (and the audit's corrected evidence beside it)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}

_SESSION_RE = re.compile(r"^session_(\d+)$")
_DIA_RE = re.compile(r"^D(\d+):(\d+)$")


@dataclass(frozen=True)
class Turn:
    """Where a turn's memory came from, as an agent recording the conversation would write it:
    `source` the session (`locomo:conv-26:session_3`), `created` the session's date and time plus
    the turn's position in it, in seconds (so turns keep their order within a session)."""

    source: str
    created: str


def session_start(date_time: str) -> datetime:
    """A LoCoMo session's `date_time` ("1:56 pm on 8 May, 2023") as a UTC moment."""
    return datetime.strptime(date_time.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)


def turn_meta(sample_id: str, session: int, date_time: str, position: int) -> Turn:
    """The `Turn` of the turn at `position` (0-based) of `session`."""
    created = session_start(date_time) + timedelta(seconds=position)
    return Turn(f"locomo:{sample_id}:session_{session}", created.strftime("%Y-%m-%dT%H:%M:%SZ"))


@dataclass
class Conversation:
    docs: list[str]
    dia_ids: list[str]
    meta: list[Turn] = field(default_factory=list)
    questions: list[dict] = field(default_factory=list)


def normalise_evidence(raw: Iterable[str], known: set[str]) -> tuple[list[str], int]:
    """Split joined ids (`"D8:6; D9:17"`), strip zero padding (`D30:05`), drop unresolvable ids.

    Returns (resolved ids, number of raw pieces skipped).
    """
    out: list[str] = []
    skipped = 0
    for item in raw:
        for piece in re.split(r"[;,\s]+", str(item).strip()):
            if not piece:
                continue
            m = _DIA_RE.match(piece)
            if not m:
                skipped += 1
                continue
            did = f"D{int(m.group(1))}:{int(m.group(2))}"
            if did in known:
                if did not in out:
                    out.append(did)
            else:
                skipped += 1
    return out, skipped


def load_locomo(eval_dir: Path) -> tuple[list[Conversation], dict[str, int]]:
    data = json.loads((eval_dir / "locomo10.json").read_text(encoding="utf-8"))
    audit = json.loads((eval_dir / "locomo10_audit_errors.json").read_text(encoding="utf-8"))
    corrected: dict[tuple[int, int], list[str]] = {}
    for entry in audit:
        m = re.match(r"^locomo_(\d+)_qa(\d+)$", entry.get("question_id", ""))
        ce = entry.get("correct_evidence")
        if m and isinstance(ce, list):
            corrected[(int(m.group(1)), int(m.group(2)))] = ce
    stats = {"skipped_original": 0, "skipped_corrected": 0, "empty_evidence": 0, "audit_substituted": 0}
    convs = []
    for ci, item in enumerate(data):
        c = item["conversation"]
        docs, ids, meta = [], [], []
        sessions = sorted(int(m.group(1)) for k in c if (m := _SESSION_RE.match(k)))
        for s in sessions:
            for pos, turn in enumerate(c[f"session_{s}"]):
                text = f"{turn['speaker']}: {turn['text']}"
                if turn.get("blip_caption"):
                    text += f" [shares a photo of {turn['blip_caption']}]"
                docs.append(text)
                ids.append(turn["dia_id"])
                meta.append(turn_meta(item.get("sample_id", f"conv-{ci}"), s, c[f"session_{s}_date_time"], pos))
        conv = Conversation(docs, ids, meta)
        known = set(ids)
        for qi, qa in enumerate(item["qa"]):
            orig, sk = normalise_evidence(qa.get("evidence", []), known)
            stats["skipped_original"] += sk
            if (ci, qi) in corrected and sorted(corrected[(ci, qi)]) != sorted(qa.get("evidence", [])):
                corr, sk2 = normalise_evidence(corrected[(ci, qi)], known)
                stats["audit_substituted"] += 1
            else:
                corr, sk2 = orig, 0
            stats["skipped_corrected"] += sk2
            if not orig:
                stats["empty_evidence"] += 1
            conv.questions.append(
                {"question": qa["question"], "category": qa["category"], "orig": orig, "corr": corr})
        convs.append(conv)
    return convs, stats


def main(argv: list[str] | None = None) -> int:
    """Print what the loader makes of the data: turns, sessions and questions per conversation,
    and the first and last `created` a turn gets."""
    import argparse

    ap = argparse.ArgumentParser(description="LoCoMo as recall_eval reads it")
    ap.add_argument("--eval-dir", type=Path, default=Path(__file__).resolve().parent.parent.parent / "shared" / "eval")
    args = ap.parse_args(argv)
    convs, stats = load_locomo(args.eval_dir)
    for ci, conv in enumerate(convs):
        sessions = len({t.source for t in conv.meta})
        print(f"{ci}: {len(conv.docs)} turns, {sessions} sessions, {len(conv.questions)} questions,"
              f" {conv.meta[0].created} .. {max(t.created for t in conv.meta)}")
    print("evidence:", stats)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
