"""What the prompt and file hooks choose to inject: quiet on chatter whatever the store holds, a
clear runner-up kept by its score's margin to the best hit, and the most specific file memory first
(issue 33). The rules are checked in process on tests/chatter_set.py; the behaviour through the
real hook commands on stdin, over stores written with Store.remember."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest
from chatter_set import CODING, EXTRA_MEMORIES, WANT_NOTHING
from conftest import EXE, hook_env
from hook_eval import MEMORIES

from memory_mcp.adapters.hooks import relevance
from memory_mcp.app.store import Store
from memory_mcp.truth import globs
from memory_mcp.truth.recall import Hit

ID = re.compile(r"\[([0-9A-Z]{26})\]")

# Chat turns of our own, each sharing a word with a prompt that wants nothing.
CHAT_TURNS = [
    "I watched the game last night with my kids, what a finish!",
    "Can you explain again how you made that pasta sauce? It was amazing.",
    "Thanks a lot for the book, I finished it over the weekend.",
    "How was your weekend? We went hiking and the weather was perfect.",
    "I changed my mind about the trip, we will drive instead.",
    "Coffee first, then I will tell you what happened at work.",
]


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    return hook_env(tmp_path, monkeypatch)


def hook(env: dict[str, str], event: str, payload: dict, *args: str) -> str:
    done = subprocess.run([str(EXE), "hook", event, *args], input=json.dumps(payload), capture_output=True,
                          text=True, env=env, timeout=60)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    return done.stdout


def prompt(env: dict[str, str], store: Path, text: str, session: str) -> list[str]:
    out = hook(env, "UserPromptSubmit", {"session_id": session, "cwd": env["PROJECT"], "prompt": text},
               "--store", str(store))
    return ID.findall(json.loads(out)["hookSpecificOutput"]["additionalContext"]) if out else []


def hit(title: str, score: float, mem_id: str) -> Hit:
    return Hit(id=mem_id, path=f"memories/{mem_id}.md", title=title, excerpt="", type="fact", state="active",
               trust="user-stated", entities=[], updated=None, score=score)


# ------------------------------------------------------------------ the rules, in process
def test_chatter_is_not_searched_and_every_coding_prompt_is() -> None:
    quiet = [p for p in WANT_NOTHING if relevance.wants_nothing(p)]
    assert len(quiet) / len(WANT_NOTHING) >= 0.9
    for p in ("explain what you just did", "thanks!", "how was your weekend?", "sounds good", "/compact"):
        assert relevance.wants_nothing(p), p
    assert [p for p, _ in CODING if relevance.wants_nothing(p)] == []
    # The search leaves the chatter out and keeps the project thing and the function words.
    assert relevance.query("thanks, now the tax rounding") == "now the tax rounding"
    assert relevance.query("why did we pick pnpm?") == "why did we pick pnpm?"


def test_runners_up_are_kept_by_their_margin_to_the_best_hit_that_shares_a_word() -> None:
    hits = [hit("We watched the game", 2.0, "chat"),  # the top hit shares no content word: not the yardstick
            hit("Schema migrations go through alembic", 1.0, "alembic"),
            hit("Migrations are plain SQL files", relevance.MARGIN * 1.0 + 0.01, "sql"),  # one shared word
            hit("Migrations are squashed yearly", relevance.MARGIN * 1.0 - 0.01, "squash")]  # under the margin
    assert [h.id for h in relevance.chosen(hits, "write a migration for the orders table")] == ["alembic", "sql"]
    assert relevance.chosen(hits, "did you watch the game?") == []


def test_one_shared_word_is_a_match_only_when_it_is_the_projects() -> None:
    # The word lists held the tuned prompts' words and no others: "had pizza for lunch" got a chat
    # turn about pizza, "which files did you edit?" a memory about static files.
    chat = Hit(id="chat", path="memories/chat.md", title="We had pizza by the sea, you would love it!",
               excerpt="", type="fact", state="active", trust="agent-inferred", entities=[], updated=None, score=1.0)
    assert relevance.conversational(chat) and not relevance.conversational(hit("Pizza menu is cached", 1, "x"))
    assert relevance.chosen([chat], "had pizza for lunch") == []
    assert relevance.chosen([chat], "the pizza by the sea") == [chat]  # two shared words
    # One word the conversation in the store uses at a score as high: everyday English, not the project's.
    menu = hit("The pizza menu is cached for an hour", 0.9, "menu")
    assert relevance.chosen([chat, menu], "pizza") == []
    assert relevance.chosen([chat, hit("The pizza menu is cached for an hour", 1.1, "menu")], "pizza")[0].id == "menu"
    # A question about the session itself needs two shared words.
    static = hit("Static files are fingerprinted", 1.0, "static")
    assert relevance.about_session("which files did you edit?") and relevance.about_session("explain what you just did")
    assert not relevance.about_session("where do the static files go?")
    assert relevance.chosen([static], "which files did you edit?") == []
    assert relevance.chosen([static], "where do the static files go?") == [static]
    assert relevance.chosen([static], "did you fingerprint the static files?") == [static]


# ------------------------------------------------------------------ through the real hooks
def test_prompt_hook_is_quiet_on_chatter_over_a_store_with_chat_turns(env: dict[str, str], tmp_path: Path) -> None:
    # On a store holding conversation, an acknowledgement or a meta-request got a chat turn that
    # happened to share a word ("explain", "game", "weekend"); a coding prompt wrapped in chatter
    # must still get its memory.
    store = Store.open(tmp_path / "store")
    ids = {key: store.remember(content, title=title, type=kind, trust="user-stated").id
           for key, (kind, title, content) in {**MEMORIES, **EXTRA_MEMORIES}.items()}
    for turn in CHAT_TURNS:
        store.remember(turn)
    store.close()
    chatter = ["explain what you just did", "did you watch the game last night?", "how was your weekend?",
               "thanks a lot, that was perfect", "what did you change?"]
    assert [p for n, p in enumerate(chatter) if prompt(env, tmp_path / "store", p, f"n{n}")] == []
    assert ids["tax-rounding"] in prompt(env, tmp_path / "store", "thanks, now the tax rounding", "c1")
    assert ids["csv-import"] in prompt(env, tmp_path / "store", "great. make the CSV import accept Excel files", "c2")


def test_prompt_hook_is_quiet_on_chatter_no_word_list_holds(env: dict[str, str], tmp_path: Path) -> None:
    # Quiet on 13 of 20 held-out prompts that want nothing: words no list held ("pizza", "minute",
    # "files") matched a chat turn or a coding memory on that one word.
    store = Store.open(tmp_path / "store")
    ids = {key: store.remember(content, title=title, type=kind, trust="user-stated").id
           for key, (kind, title, content) in {**MEMORIES, **EXTRA_MEMORIES}.items()}
    for turn in ("We had the best pizza by the sea, you would love it!", "Give me a minute, I'm almost done here.",
                 "I love your style, where did you get that jacket?"):
        store.remember(turn)
    store.close()
    chatter = ["had pizza for lunch, back now", "hold on a minute", "which files did you edit?",
               "what did you run last?"]
    assert [p for n, p in enumerate(chatter) if prompt(env, tmp_path / "store", p, f"n{n}")] == []
    for n, (text, key) in enumerate([("sounds good, and the retry backoff?", "retry-backoff"),
                                     ("test_checkout_flow is red again", "flaky-test"),
                                     ("ok, the requests per minute limit on the api", "rate-limit")]):
        assert ids[key] in prompt(env, tmp_path / "store", text, f"c{n}"), text


def test_prompt_hook_keeps_a_clear_runner_up_that_shares_one_word(env: dict[str, str], tmp_path: Path) -> None:
    # A runner-up had to share two content words with the prompt, and the best hit set the bar even
    # when it shared none: asking for a migration, "Migrations are plain SQL files" (one word shared,
    # second under a hit that shares nothing) was dropped and the prompt got nothing.
    store = Store.open(tmp_path / "store")
    for kind, title, content in MEMORIES.values():
        store.remember(content, title=title, type=kind, trust="user-stated")
    sql = store.remember("Migrations are plain SQL files in db/migrations, numbered and applied in order.",
                         title="Migrations are plain SQL files", type="fact", trust="user-stated").id
    store.close()
    assert sql in prompt(env, tmp_path / "store", "add a migration for the new discount column", "s1")


def test_file_hook_shows_the_exact_path_first_and_cuts_the_broader_ones(env: dict[str, str], tmp_path: Path) -> None:
    # File memories came newest first under the 300-token cap: the one memory whose paths is exactly
    # src/billing/tax.py, written first, was cut while the broader src/** and src/billing/** were shown.
    store_root = tmp_path / "store"
    store = Store.open(store_root)
    long = "x " * 70  # each line near its 160-character excerpt: a few fill the token cap
    exact = store.remember(f"Tax is rounded per line here. {long}", title="Tax rounding", type="fact",
                           paths=["src/billing/tax.py"]).id
    near = store.remember(f"Billing code is reviewed twice. {long}", title="Billing reviews", type="fact",
                          paths=["src/billing/**"]).id
    broad = [store.remember(f"Source rule {n}. {long}", title=f"Source rule {n}", type="fact",
                            paths=["src/**"]).id for n in range(4)]
    anywhere = store.remember(f"Every file has a licence header. {long}", title="Licence headers", type="fact",
                              paths=["**"]).id
    store.close()
    project = Path(env["PROJECT"])
    out = hook(env, "PreToolUse", {"session_id": "s1", "cwd": str(project), "tool_name": "Read",
                                   "tool_input": {"file_path": str(project / "src/billing/tax.py")}},
               "--store", str(store_root))
    shown = ID.findall(json.loads(out)["hookSpecificOutput"]["additionalContext"])
    assert shown[:2] == [exact, near] and set(shown[2:]) < set(broad) and anywhere not in shown
    # recall --file gives the same order, the cap aside: the most specific first, newest first within a level.
    done = subprocess.run([str(EXE), "--store", str(store_root), "recall", "--file", "src/billing/tax.py"],
                          capture_output=True, text=True, cwd=project, timeout=60,
                          env={"HOME": env["HOME"], "PATH": os.environ["PATH"], "GIT_CONFIG_NOSYSTEM": "1"})
    assert done.returncode == 0, done.stderr
    assert ID.findall(done.stdout) == [exact, near, *reversed(broad), anywhere]


@pytest.mark.parametrize(("patterns", "level"), [
    (["src/billing/tax.py"], (0, 0)), (["/src/billing/tax.py"], (0, 0)), (["src/billing/**"], (1, -12)),
    (["src/billing/"], (1, -12)), (["src/*/tax.py"], (1, -4)), (["src/**"], (1, -4)), (["**"], (1, 0)),
    (["**/tax.py"], (1, 0)), (["docs/**"], (2, 0)), (["src/**", "src/billing/tax.py"], (0, 0))])
def test_glob_specificity_orders_exact_then_longest_literal_prefix(patterns: list[str], level: tuple[int, int]) -> None:
    assert globs.specificity(patterns, "src/billing/tax.py") == level
