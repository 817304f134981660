"""The plugin's launcher (plugin/bin/memory-mcp-plugin) run as Claude Code runs it, on a copy of the
plugin as a marketplace checkout holds it, with a stand-in for `uv` on PATH: the install is real
shell work of the launcher's own (lock, copy, stamp, `current`), only the package install is a copy
of the checkout's code into the new environment, so a test takes seconds, not the 20-40 s of pip."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import ROOT

PLUGIN = ROOT / "plugin"

# `uv venv -q -p PY DIR` and `uv pip install -q -p DIR/bin/python SRC`, as the launcher calls them:
# the "install" copies SRC's package into DIR and writes bin/python and bin/memory-mcp running it.
FAKE_UV = f"""#!/bin/sh
set -eu
if [ "$1" = venv ]; then mkdir -p "$5/bin"; exit 0; fi
dir=$(dirname "$(dirname "$5")")
echo "$6" >"$dir/installed-from"
mkdir -p "$dir/site" && cp -R "$6/memory_mcp" "$dir/site/"
printf '#!/bin/sh\\nPYTHONPATH=%s exec %s -P "$@"\\n' "$dir/site" {sys.executable} >"$dir/bin/python"
printf '#!/bin/sh\\nPYTHONPATH=%s exec %s -P -m memory_mcp.cli "$@"\\n' "$dir/site" {sys.executable} >"$dir/bin/memory-mcp"
chmod +x "$dir/bin/python" "$dir/bin/memory-mcp"
"""


@pytest.fixture
def plugin(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A checkout of the plugin (symlinks resolved, as a copy holds them) and the launcher's environment."""
    checkout = tmp_path / "checkout"
    shutil.copytree(PLUGIN, checkout, ignore=shutil.ignore_patterns("__pycache__"))
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "uv").write_text(FAKE_UV)
    (fake / "uv").chmod(0o755)
    home = tmp_path / "home"
    home.mkdir()
    env = {"PATH": f"{fake}:/usr/bin:/bin", "HOME": str(home), "CLAUDE_PLUGIN_ROOT": str(checkout),
           "CLAUDE_PLUGIN_DATA": str(tmp_path / "data"), "MEMORY_MCP_AUTO_MEMORY": "off"}
    return checkout, env


def launch(env: dict[str, str], *args: str, stdin: str = "{}") -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(Path(env["CLAUDE_PLUGIN_ROOT"]) / "bin" / "memory-mcp-plugin"), *args], input=stdin,
                          capture_output=True, text=True, env=env, timeout=120)


def current(env: dict[str, str]) -> str:
    path = Path(env["CLAUDE_PLUGIN_DATA"]) / "current"
    return path.read_text().strip() if path.exists() else ""


def wait_for(env: dict[str, str], other_than: str = "") -> str:
    """The environment named current once it is one other than `other_than` and no install runs."""
    lock = Path(env["CLAUDE_PLUGIN_DATA"]) / "install.lock"
    for _ in range(600):
        now = current(env)
        if now and now != other_than and not lock.exists():
            return now
        time.sleep(0.05)
    raise AssertionError(f"no new environment; log: {(Path(env['CLAUDE_PLUGIN_DATA']) / 'install.log').read_text()}")


def test_a_code_update_of_the_checkout_reaches_the_next_start(plugin: tuple[Path, dict[str, str]]) -> None:
    """Keyed by the version only, the environment ran the old code after a `git pull` forever."""
    checkout, env = plugin
    first = launch(env, "hook", "SessionStart", stdin=json.dumps({"session_id": "s", "cwd": env["HOME"]}))
    assert first.returncode == 0 and "installing its Python environment" in first.stdout
    built = wait_for(env)
    assert launch(env, "--version").stdout.strip() == "memory-mcp 0.1.0"
    # Unchanged code: hooks and starts use the environment as it is, no rebuild.
    assert launch(env, "hook", "UserPromptSubmit").returncode == 0
    time.sleep(0.5)
    assert current(env) == built and not (Path(env["CLAUDE_PLUGIN_DATA"]) / "install.lock").exists()
    # A pull changes a source file: the next start still answers at once, from the old environment,
    # and builds the new one in the background; the start after that runs the new code.
    init = checkout / "memory_mcp" / "__init__.py"
    init.write_text(init.read_text().replace('__version__ = "0.1.0"', '__version__ = "0.1.0+pulled"'))
    assert launch(env, "--version").stdout.strip() == "memory-mcp 0.1.0"
    rebuilt = wait_for(env, other_than=built)
    assert launch(env, "--version").stdout.strip() == "memory-mcp 0.1.0+pulled"
    assert Path(built).is_dir(), "a session may still run the old environment"
    # The build read a copy: nothing of it is left in the checkout.
    assert not Path((Path(rebuilt) / "installed-from").read_text().strip()).is_relative_to(checkout)
    assert not list(checkout.glob("build")) and not list(checkout.glob("*.egg-info"))


def test_a_failed_build_is_not_tried_again_on_every_hook(plugin: tuple[Path, dict[str, str]]) -> None:
    checkout, env = plugin
    launch(env, "hook", "SessionStart")
    built = wait_for(env)
    fake_uv = Path(env["PATH"].split(":")[0]) / "uv"
    fake_uv.write_text("#!/bin/sh\nexit 1\n")
    (checkout / "memory_mcp" / "__init__.py").touch()
    launch(env, "hook", "UserPromptSubmit")
    data = Path(env["CLAUDE_PLUGIN_DATA"])
    for _ in range(200):
        if (data / "build-failed").exists() and not (data / "install.lock").exists():
            break
        time.sleep(0.05)
    assert (data / "build-failed").exists() and current(env) == built
    log = (data / "install.log").read_text()
    launch(env, "hook", "UserPromptSubmit")
    time.sleep(0.5)
    assert (data / "install.log").read_text() == log  # no second attempt until the code changes again
