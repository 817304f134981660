"""`memory-mcp where [FOLDER]`: the stores a folder uses and why, by the one rule the plugin, the
hooks, the CLI, the server and every installer follow (roots.chosen_scopes). Opens no store and
creates none."""

from __future__ import annotations

import argparse
from pathlib import Path

from memory_mcp.adapters.cli.registry import command
from memory_mcp.truth import roots
from memory_mcp.truth.layout import default_root
from memory_mcp.truth.visible import shown


def _options(p: argparse.ArgumentParser) -> None:
    p.add_argument("folder", nargs="?", type=Path, help="the folder to ask about (default: this one)")


@command("where", "the stores this folder uses, and why", _options, user_store=True)
def where(args: argparse.Namespace) -> int:
    folder = args.folder.expanduser() if args.folder is not None else roots.working_folder()
    chosen = roots.chosen_scopes(args.store, args.user_store, folder)
    print("\n".join(shown(line) for line in lines(folder, chosen)))
    return 0


def lines(folder: Path | None, chosen: roots.Chosen) -> list[str]:
    """What `where` prints: the folder, its project (identity and remote), each store and why."""
    out = [f"folder         {folder.resolve() if folder is not None else '(none: the working folder is gone)'}"]
    located = chosen.located
    if located is not None and located.repository is not None:
        repo = located.repository
        out.append(f"repository     {repo.common_dir} (its common git directory: the project's identity)")
        if repo.work_tree != repo.root or repo.main_tree is None:
            out.append(f"work tree      {repo.work_tree}")
        out.append(f"remote         {located.remote or '(none recorded in its git config)'}")
    project = (chosen.config.project or default_root()).expanduser()
    out.append(f"project store  {project}{'' if project.exists() else ' (not made yet)'}")
    out.append(f"  why          {chosen.why}")
    if located is not None:
        out += _team_lines(located, chosen.config.team)
    if chosen.config.user is not None:
        out.append(f"user store     {chosen.config.user}")
    else:
        out.append("user store     (none: one store is served; --user-store or $MEMORY_MCP_USER_ROOT adds it)")
    if located is not None:
        for other in roots.other_stores(located):
            out.append(f"also           {other}: another store of this project, not used (move its memories with "
                       f"`memory-mcp --store {other} export` and `import`, or name it with --store)")
    return out


def _team_lines(located: roots.Located, used: Path | None) -> list[str]:
    """The team store the project's pointer file names: where its clone is, whether it is used."""
    team = roots.team(located)
    if team is None:
        return []
    if team.error:
        return [f"team store     (refused) {team.error}"]
    if used is not None:
        return [f"team store     {used}", f"  why          joined here; {team.pointer.name} names {team.remote}"]
    return [f"team store     {team.store} (not joined on this machine: nothing is fetched from it)",
            f"  why          {team.pointer.name} names {team.remote}; `memory-mcp team join` clones it there"]
