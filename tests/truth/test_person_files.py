"""A server edit of a file a person wrote changes only the lines it must: `memory_feedback` on a
hand-written file keeps its YAML comments, quoting, BOM, CRLF line ends and file mode. And what a
person's file holds cannot drive the terminal: `memory-mcp recall` prints control characters escaped."""

from __future__ import annotations

import codecs
import os
import subprocess
from pathlib import Path

import pytest
from conftest import EXE, make_store, new_id, open_server, server_env

pytestmark = pytest.mark.anyio


async def test_feedback_on_a_hand_written_file_keeps_its_comments_bom_crlf_and_mode(tmp_path: Path) -> None:
    store = make_store(tmp_path / "store")
    mem_id = new_id()
    lines = ["---", f"id: {mem_id}", "# why this memory exists: the outage of March", "type: 'decision'",
             "entities: [kittiwake]   # the service", "---", "# Kittiwake retries", "",
             "Kittiwake retries three times, then pages.", ""]
    path = store / "memories" / "kittiwake.md"
    path.write_bytes(codecs.BOM_UTF8 + "\r\n".join(lines).encode())
    os.chmod(path, 0o640)
    async with open_server(store) as s:
        await s.call("memory_feedback", id=mem_id, helpful=True)
        new = await s.call("memory_remember", content="Kittiwake pages the on-call rota.")
    umask = os.umask(0o022)
    os.umask(umask)
    assert os.stat(store / new["path"]).st_mode & 0o777 == 0o666 & ~umask  # a new file: the umask's mode
    data = path.read_bytes()
    assert data.startswith(codecs.BOM_UTF8) and b"\n" not in data.replace(b"\r\n", b"")
    after = data[len(codecs.BOM_UTF8):].decode().split("\r\n")
    assert [line for line in after if line not in lines] == [line for line in after if line.startswith(
        ("feedback:", "updated:", "last_feedback"))] != []
    assert [line for line in lines if line not in after] == []  # every line of the person's is still there
    assert oct(os.stat(path).st_mode & 0o777) == oct(0o640)


def test_recall_prints_control_characters_escaped(tmp_path: Path) -> None:
    store = make_store(tmp_path / "store")
    # CSI and OSC as C1 characters (U+009B, U+009D), and ESC and BEL of the 7-bit forms.
    (store / "memories" / "ctl.md").write_text("# Term \u009b31m red \x1b[2J\n\ncontrolword \u009d0;pwned\x07 here\n")
    done = subprocess.run([str(EXE), "recall", "controlword", "--store", str(store)], capture_output=True,
                          text=True, env=server_env(store, tmp_path), timeout=60)
    assert done.returncode == 0, done.stderr
    assert "controlword" in done.stdout and "\\x9b31m" in done.stdout and "\\x1b[2J" in done.stdout
    assert not any(0x80 <= ord(c) <= 0x9f or (ord(c) < 0x20 and c not in "\n\t") or c == "\x7f" for c in done.stdout)
