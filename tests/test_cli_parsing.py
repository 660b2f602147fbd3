"""The command line reads its arguments with only the subcommand they name made whole
(`parse_arguments`): what it reads, the help it prints and the usage errors it says are the
whole command line's, word for word."""

from __future__ import annotations

import argparse
import contextlib
import io

import pytest

from byok_tui.cli import build_parser, parse_arguments

# The README's examples, each subcommand and action, and the top level's own options.
READ_ALIKE = [
    ["ask", "-p", "groq", "Explain SSE in one line"],
    ["ask", "-p", "anthropic", "--system", "Review this diff"],
    ["--log", "debug.log", "ask", "-p", "openai", "hi"],
    ["--log=debug.log", "keys", "list"],
    ["--lo", "bots", "keys", "list"],  # a prefix of --log, whose FILE is named as a command is
    ["--", "keys", "list"],
    ["models", "--refresh"],
    ["keys", "set", "openai"],
    ["keys", "list"],
    ["keys", "path"],
    ["search", '"retry after"'],
    ["provider", "add", "lmstudio", "--base-url", "http://127.0.0.1:1234/v1", "--no-key"],
    ["bots"],
    ["bot", "tools", "Default", "files"],
    ["spend"],
    ["budget", "set", "openai", "5"],
    ["export", "out.json"],
    ["mcp", "list"],
]


def every_command_line() -> list[list[str]]:
    """Every subcommand, and every action of each, as the whole parser knows them."""
    lines: list[list[str]] = []

    def walk(parser: argparse.ArgumentParser, words: list[str]) -> None:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    lines.append([*words, name])
                    walk(sub, [*words, name])

    walk(build_parser(), [])
    return lines


def said(arguments: list[str], parse: object) -> tuple[object, str, str]:
    """What parsing `arguments` gives: the arguments read (a subcommand's function by its
    name) or the exit status, then what it printed on each stream."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            args = parse(arguments)  # type: ignore[operator]
        except SystemExit as exit:
            return ("exit", exit.code), out.getvalue(), err.getvalue()
    read = {k: getattr(v, "__qualname__", v) for k, v in vars(args).items()}
    return read, out.getvalue(), err.getvalue()


def whole(arguments: list[str]) -> argparse.Namespace:
    return build_parser().parse_args(arguments)


@pytest.mark.parametrize("arguments", READ_ALIKE, ids=" ".join)
def test_a_command_line_is_read_as_the_whole_parser_reads_it(arguments: list[str]) -> None:
    assert said(arguments, parse_arguments) == said(arguments, whole)


def test_every_subcommand_s_help_and_a_mistyped_word_are_said_as_the_whole_parser_says_them() -> (
    None
):
    lines = every_command_line()
    assert len(lines) > 20 and ["keys", "set"] in lines
    for words in [[], *lines]:
        for arguments in ([*words, "--help"], [*words, "--no-such-option"], [*words, "oops"]):
            assert said(arguments, parse_arguments) == said(arguments, whole), arguments
    for arguments in (["keyz", "list"], ["--help"], ["--version"], [], ["--log"]):
        assert said(arguments, parse_arguments) == said(arguments, whole), arguments


def test_only_the_subcommand_named_is_made_whole() -> None:
    """The others are named in the list of subcommands, with their help, and nothing more."""
    parser = build_parser(only="keys")
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    assert set(commands.choices) == set(every_subcommand())
    made = {name: len(sub._actions) for name, sub in commands.choices.items()}
    assert made["keys"] > 1
    assert {count for name, count in made.items() if name != "keys"} == {0}


def every_subcommand() -> list[str]:
    return [words[0] for words in every_command_line() if len(words) == 1]
