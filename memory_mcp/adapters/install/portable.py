"""What a registration writes for the command and the stores, so that a project-scope file (meant
to be committed: .mcp.json, .claude/settings.json, .codex/config.toml, .gemini/settings.json,
.cursor/mcp.json) carries no path of this machine.

Without a store named, nothing is written for the stores at all: the server and the hooks find the
project from the folder the agent starts them in, by the rule every path uses (roots.chosen_scopes).
A store the person names is written relative to the project, or to the home folder through a
variable the agent expands; what an agent cannot expand stays an absolute path, and the installer
says so. Each agent's documented expansion:

- Claude Code: `${VAR}` and `${VAR:-default}` in .mcp.json's command, args and env; hook commands
  run in a shell with $CLAUDE_PROJECT_DIR set.
- Gemini CLI: `$VAR` and `${VAR}` in every string of settings.json.
- Cursor: `${userHome}`, `${workspaceFolder}` and `${env:NAME}` in mcp.json.
- Codex: none in config.toml (its `env` values are literal).
"""

from __future__ import annotations

import shlex
import shutil
from dataclasses import dataclass, field
from pathlib import Path

COMMAND = "memory-mcp"
HOME_VARIABLE = {"claude-code": "${HOME}", "gemini": "${HOME}", "cursor": "${userHome}"}
# Cursor's stdio servers get no documented working folder; its workspace variable names the project.
PROJECT_ENV = {"cursor": {"MEMORY_MCP_PROJECT_DIR": "${workspaceFolder}"}}


@dataclass
class Naming:
    """How one registration names things: `portable` for a project-scope file. `notes` collects what
    could not be made portable, for the installer's output."""

    client: str
    portable: bool
    project: Path
    home: Path
    notes: list[str] = field(default_factory=list)

    def command(self, installed: str) -> str:
        """The executable: this installation's (`installed`) in a file of this machine, `memory-mcp`
        from PATH in a committed one (said when PATH here finds another or none)."""
        if not self.portable:
            return installed
        found = shutil.which(COMMAND)
        if found is None or Path(found).resolve() != Path(installed).resolve():
            self.notes.append(f"the project file runs `{COMMAND}` from PATH, which here is "
                              f"{found or 'not found'} (this one is {installed}): put it on PATH (pipx, or the "
                              "venv's bin folder) on every machine that uses the file")
        return COMMAND

    def path(self, path: Path) -> str:
        """A store path for the server's environment or arguments."""
        if not self.portable:
            return str(path)
        if path.is_relative_to(self.project):
            # Relative: the agent starts the server in the project (a subfolder only when started there).
            return path.relative_to(self.project).as_posix() or "."
        variable = HOME_VARIABLE.get(self.client)
        if variable and path.is_relative_to(self.home):
            return f"{variable}/{path.relative_to(self.home).as_posix()}"
        self._absolute(path)
        return str(path)

    def shell_path(self, path: Path) -> str:
        """A store path in a hook's shell command (Claude Code sets $CLAUDE_PROJECT_DIR for hooks)."""
        if not self.portable:
            return shlex.quote(str(path))
        for base, variable in ((self.project, "$CLAUDE_PROJECT_DIR"), (self.home, "$HOME")):
            if path.is_relative_to(base):
                rest = path.relative_to(base).as_posix()
                return f'"{variable}"' + (f"/{shlex.quote(rest)}" if rest != "." else "")
        self._absolute(path)
        return shlex.quote(str(path))

    def _absolute(self, path: Path) -> None:
        why = ("Codex expands no variables in config.toml" if self.client == "codex"
               else "it is neither in the project nor in the home folder")
        self.notes.append(f"the project file names {path}, a path of this machine ({why}); leave out --store and "
                          "--user-store to let each machine find its stores, or commit the file only where the path holds")

    def project_env(self) -> dict[str, str]:
        """What tells the server its project where the agent gives no working folder (Cursor)."""
        return dict(PROJECT_ENV.get(self.client, {}))
