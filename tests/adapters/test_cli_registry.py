"""One command table: every `memory-mcp` command is one entry of adapters/cli/registry.py, its
function and its options in one module of adapters/cli/, and the parser offers exactly those.
Until issue 29 there were two tables (cli._COMMANDS taking (args), commands.COMMANDS taking
(args, opener)) and parsers added in three places."""

from __future__ import annotations

import argparse

from memory_mcp.adapters.cli import registry
from memory_mcp.adapters.cli.parser import parser


def _subcommands(p: argparse.ArgumentParser) -> set[str]:
    sub = next(a for a in p._actions if isinstance(a, argparse._SubParsersAction))
    return set(sub.choices)


def test_the_parser_offers_exactly_the_command_table() -> None:
    assert _subcommands(parser()) == set(registry.load())


def test_a_command_line_builds_its_commands_page_and_help_before_it_lists_them_all() -> None:
    everything = set(registry.load())
    assert _subcommands(parser(["--store", "remember", "remember", "some text"])) == {"remember"}
    assert _subcommands(parser(["recall", "--help"])) == {"recall"}
    assert _subcommands(parser(["--help", "recall"])) == everything
    assert _subcommands(parser(["-h"])) == everything
    assert _subcommands(parser(["no-such-command"])) == everything
    assert _subcommands(parser(["--version"])) == everything  # serve, the default, is not named


def test_each_command_is_one_function_and_its_options_in_one_cli_module() -> None:
    for name, cmd in registry.load().items():
        module = cmd.run.__module__
        assert module.startswith("memory_mcp.adapters.cli."), f"{name} runs from {module}"
        if cmd.options is not None:
            assert cmd.options.__module__ == module, f"{name}'s options live in {cmd.options.__module__}, not {module}"


def test_a_command_registered_twice_is_refused() -> None:
    registry.load()
    try:
        registry.command("status", "again")(lambda args: 0)
    except ValueError as e:
        assert "status" in str(e)
    else:
        raise AssertionError("a second 'status' was accepted")
