"""The `byok-tui` command: starts the app, or runs a subcommand.

Heavy modules (Textual, httpx, keyring) are imported only by the path that needs them. Every
error is printed as one redacted line with its remedy; an unexpected one as a redacted crash
report without local variables.

May import every layer below it, the app (to start it) among them; nothing imports it but the
entry point (launch.py).
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, TextIO, cast

from byok_tui import __version__
from byok_tui.core.errors import ByokError, ErrorKind
from byok_tui.core.logs import LOG_ENV, configure_logging
from byok_tui.core.paths import HOME_ENV, app_paths
from byok_tui.core.registry import UnknownProviderError
from byok_tui.core.sanitize import strip_terminal_controls

if TYPE_CHECKING:
    import argparse

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130

DESCRIPTION = """\
A terminal chat client for LLM providers. Bring your own API keys: they stay on this machine
and are sent only to each provider's own endpoint.

Run without a subcommand to start the app, in a terminal (quit with ctrl+q). A message you are
writing is kept until it is sent: after a quit, a closed terminal, a crash or a kill (what was
typed a second before), the next start gives it back. From a script or a pipe: `byok-tui ask`."""

EPILOG = f"""\
where state lives:
  Config, data, the key file and logs live in your per-user folders for byok-tui.
  Set {HOME_ENV}=DIR to keep everything under DIR instead. `byok-tui keys path` shows
  where keys are kept.

environment:
  {HOME_ENV}          one folder for all state (portable installs, tests)
  BYOK_TUI_KEYSTORE      keyring | file (default: a native OS keyring if there is one,
                         else the key file)
  {LOG_ENV}           write a debug log to this file (keys are redacted), like --log
  OPENAI_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY, …
                         used when no key is stored for that provider

exit status:
  0 success, 1 error, 2 bad usage (unknown provider, missing key input), 130 interrupted;
  `byok-tui ask --help` lists the statuses for each kind of provider error

examples:
  byok-tui ask -p groq "Explain SSE in one line"
  git diff | byok-tui ask -p anthropic --system "Review this diff"
  byok-tui models --refresh         registry models plus those your keys can use
  byok-tui keys set openai          asks for the key (hidden input)
  pbpaste | byok-tui keys set groq  reads the key from standard input
  byok-tui keys list                every provider, its key state and source
  byok-tui search '"retry after"'  every conversation, newest hits first
  byok-tui provider add lmstudio --base-url http://127.0.0.1:1234/v1 --no-key
                                    any OpenAI-compatible server as a provider"""


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The whole command line; with `only`, its subcommand `only` whole and the others by name
    and help alone (what the command list in `--help` shows). Making every subcommand's
    arguments was most of a command's first parse (17.1 ms of CPU against 9.9 ms for
    `keys list` alone), much of it argparse asking gettext for a translation of each help
    text it adds (a search of the disk each time)."""
    import argparse  # plain `byok-tui` starts the app without it

    from byok_tui.cli import account, bots, chat, data, keys, mcp, models, provider, search, spend
    from byok_tui.core.bindings import help_text

    parser = argparse.ArgumentParser(
        prog="byok-tui",
        description=DESCRIPTION,
        epilog=f"{EPILOG}\n\n{help_text()}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"byok-tui {__version__}")
    parser.add_argument(
        "--log",
        metavar="FILE",
        type=Path,
        default=None,
        help=f"write a debug log to FILE, keys redacted (also: {LOG_ENV})",
    )
    every = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands = every if only is None else _OnlyOne(every, only)
    keys.add_parser(commands)
    chat.add_parsers(commands)
    models.add_parsers(commands)
    data.add_parsers(commands)
    bots.add_parsers(commands)
    spend.add_parsers(commands)
    account.add_parsers(commands)
    provider.add_parsers(commands)
    mcp.add_parsers(commands)
    search.add_parsers(commands)
    return parser


class _OnlyOne:
    """The subcommands' list, to which only the one chosen is added whole."""

    def __init__(self, commands: argparse._SubParsersAction[argparse.ArgumentParser], chosen: str):
        self._commands, self._chosen = commands, chosen

    def add_parser(self, name: str, **options: Any) -> object:
        if name == self._chosen:
            return self._commands.add_parser(name, **options)
        self._commands.add_parser(name, help=options.get("help"), add_help=False)
        return _NotMade()


class _NotMade:
    """A subcommand not chosen: whatever is added to it is dropped."""

    def __getattr__(self, _name: str) -> Callable[..., _NotMade]:
        return lambda *_args, **_options: self


def _command_named(arguments: Sequence[str]) -> str | None:
    """The subcommand `arguments` name: the first word that is neither an option of the
    command line itself nor the FILE of `--log` (or of a prefix of it, as argparse reads
    one), if any."""
    words = iter(arguments)
    for word in words:
        if word == "--":
            return next(words, None)
        if not word.startswith("-"):
            return word
        if len(word) > 2 and "--log".startswith(word):
            next(words, None)  # its FILE
    return None


def parse_arguments(arguments: Sequence[str]) -> argparse.Namespace:
    """`arguments` read by the parser of the subcommand they name, made alone, else by the
    whole command line. Either says a usage error and a help alike: a subcommand's own
    arguments are made whole, the top level's list of subcommands names every one."""
    chosen = _command_named(arguments)
    if chosen is not None:
        args = build_parser(only=chosen).parse_args(arguments)
        if args.command == chosen:
            return args
    return build_parser().parse_args(arguments)


def _use_config_providers() -> None:
    """The providers the config file defines, known before the arguments are read (`-p ID`
    names one). A definition in error is said by the command that needs it, not here: `provider
    rm` must still be able to remove it."""
    from byok_tui.app_services.services import use_config_providers
    from byok_tui.core.config import ConfigError, load_config

    with contextlib.suppress(ConfigError):
        use_config_providers(load_config(app_paths().config_file))


def _run_app() -> int:
    from byok_tui.core.startup import prepare_app

    prepare_app()  # again, for a start with options (`--log FILE`): before Textual loads
    from byok_tui.app import run_app

    return run_app()


class _TerminalSafe(io.TextIOBase):
    """A command's output stream, as a last check: no terminal control from outside text
    (a model id, a name, a provider's message) reaches the terminal. Newlines, tabs and
    printable text, Unicode included, pass as they are."""

    def __init__(self, stream: TextIO) -> None:
        super().__init__()
        self._stream = stream

    def write(self, text: str) -> int:
        self._stream.write(strip_terminal_controls(text))
        return len(text)

    def flush(self) -> None:
        self._stream.flush()

    def isatty(self) -> bool:
        return self._stream.isatty()

    def fileno(self) -> int:
        return self._stream.fileno()

    @property
    def buffer(self) -> BinaryIO:  # export writes its JSON document's bytes here
        return self._stream.buffer


def _guard_output() -> None:
    """A subcommand's output: a character the terminal's encoding cannot hold is replaced
    ('?'), never a crash; and every line crosses the terminal-safe check."""
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="replace")
        setattr(sys, name, cast(TextIO, _TerminalSafe(stream)))


def main(argv: Sequence[str] | None = None) -> int:
    arguments = sys.argv[1:] if argv is None else list(argv)
    if arguments:
        from byok_tui.cli.mcp import split_server_command

        _use_config_providers()
        arguments, server_command = split_server_command(arguments)
        args = parse_arguments(arguments)
        if server_command is not None:
            args.server_command = server_command
        command, log_file = args.command, args.log
    else:  # plain `byok-tui`: start the app without loading every subcommand's modules
        command, log_file = None, None
    if log_file is None and os.environ.get(LOG_ENV):
        log_file = Path(os.environ[LOG_ENV])
    configure_logging(log_file, stderr_warnings=command is not None)
    try:
        if command is None:
            return _run_app()
        _guard_output()
        code: int = args.run(args)
        sys.stdout.flush()  # here, where a reader gone away is caught below
        return code
    except ByokError as error:
        print(f"byok-tui: {error.one_line()}", file=sys.stderr)
        if error.kind is ErrorKind.NO_KEY:
            from byok_tui.cli.common import EXIT_NO_KEY

            return EXIT_NO_KEY  # as ask says it
        return EXIT_USAGE if error.kind is ErrorKind.USAGE else EXIT_ERROR
    except UnknownProviderError as error:  # a bot's provider, removed from the config file
        print(f"byok-tui: {error}. {error.remedy}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("byok-tui: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # The reader went away (`byok-tui keys list | head -1`): not an error of ours. What
        # is left unwritten goes nowhere, so the interpreter's last flush cannot fail again.
        with contextlib.suppress(OSError, ValueError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK
    except Exception as error:
        from byok_tui.core.crash import report_crash

        print(report_crash(error, app_paths().crash_dir), file=sys.stderr)
        return EXIT_ERROR
