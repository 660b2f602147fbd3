"""`byok-tui mcp …`: add, list and remove MCP servers (tool servers), and list a server's tools.

A server is kept as [mcp.servers.<name>] in the config file. Nothing starts or contacts it
but `mcp tools NAME` and, once a bot uses it, a message that bot sends.
"""

from __future__ import annotations

import argparse
import asyncio
from typing import Any

from byok_tui.cli.common import usage
from byok_tui.core.errors import ByokError
from byok_tui.core.paths import app_paths

EXAMPLES = """\
examples:
  byok-tui mcp add files -- npx -y @modelcontextprotocol/server-filesystem ~/notes
  byok-tui mcp add search --url https://mcp.example.com/mcp \
      --header 'Authorization=Bearer {key:openrouter}'
  byok-tui mcp add notes --env 'NOTES_DIR=/home/me/notes' -- notes-mcp-server
  byok-tui mcp list
  byok-tui mcp tools files          starts the server, lists its tools, ends it
  byok-tui mcp rm files

What a server is given: a stdio server gets PATH, HOME, USER, LOGNAME, SHELL, LANG, LC_ALL,
TERM and TMPDIR of your environment, and the variables its --env names; never a provider's
key or any other variable of yours. One of your stored keys reaches it only through a
reference its own config holds, {key:PROVIDER}, shown by `mcp list` as a reference."""


def add_parsers(commands: Any) -> None:
    mcp = commands.add_parser(
        "mcp",
        help="add, list and remove MCP servers (tools for models)",
        description=(
            "MCP servers give models tools. Each is kept as [mcp.servers.<name>] in the "
            "config file; a stdio server is a command byok-tui starts, a streamable HTTP one "
            "an address it contacts."
        ),
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    mcp.set_defaults(run=lambda _args: usage(mcp))
    actions = mcp.add_subparsers(dest="action", metavar="ACTION")

    add = actions.add_parser(
        "add",
        help="add a server: NAME -- COMMAND [ARGS...], or NAME --url URL",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add.add_argument("name", metavar="NAME", help="letters, digits, - and _ (up to 40)")
    add.add_argument("--url", default="", help="a streamable HTTP server's address")
    add.add_argument(
        "--env",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a variable the stdio server is given (repeatable; VALUE may be {key:PROVIDER})",
    )
    add.add_argument(
        "--header",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a header sent to the HTTP server (repeatable; VALUE may be {key:PROVIDER})",
    )
    add.add_argument("--cwd", default=None, help="the stdio server's working folder")
    add.add_argument(
        "--timeout", type=float, default=None, metavar="SECONDS", help="longest a call may take"
    )
    add.add_argument(
        "server_command", nargs="*", metavar="-- COMMAND", help="-- COMMAND [ARGS...] (stdio)"
    )
    add.set_defaults(run=_add)

    listing = actions.add_parser("list", help="list the servers and what each is given")
    listing.set_defaults(run=_list)

    remove = actions.add_parser("rm", help="remove a server")
    remove.add_argument("name", metavar="NAME")
    remove.set_defaults(run=_remove)

    tools = actions.add_parser(
        "tools", help="start or contact a server and list its tools (then end it)"
    )
    tools.add_argument("name", metavar="NAME")
    tools.set_defaults(run=_tools)


def split_server_command(arguments: list[str]) -> tuple[list[str], list[str] | None]:
    """`mcp add NAME [OPTIONS] -- COMMAND [ARGS...]`: the arguments before `--`, and the
    server's command line after it (None for any other command). argparse cannot be given it
    whole: through the subcommands, an argument of the server's own (`-m`, `--port`) would be
    read as an option of byok-tui's."""
    for at in range(len(arguments) - 1):
        if arguments[at : at + 2] == ["mcp", "add"] and "--" in arguments[at:]:
            cut = arguments.index("--", at)
            return arguments[:cut], arguments[cut + 1 :]
        if not arguments[at].startswith("-"):
            break  # another command
    return arguments, None


def _pairs(given: list[str], what: str) -> dict[str, str]:
    found = {}
    for pair in given:
        name, equals, value = pair.partition("=")
        if not equals or not name.strip():
            raise ByokError(f"--{what} {pair!r} is not NAME=VALUE")
        found[name.strip()] = value
    return found


def _refuse_keys(given: dict[str, str]) -> None:
    """A key written out in --env or --header would sit in the config file in clear: one of
    the user's stored keys, or anything shaped like a provider's, is refused; a reference,
    {key:PROVIDER}, is what puts a stored key there."""
    from byok_tui.app_services.services import open_services, remember_every_key
    from byok_tui.core.redaction import redact_keys
    from byok_tui.tools.servers import KEY_REFERENCE

    remember_every_key(open_services())
    for name, value in given.items():
        if redact_keys(KEY_REFERENCE.sub("", value)) != KEY_REFERENCE.sub("", value):
            raise ByokError(
                f"{name} holds a key written out: it would be kept in the config file in clear",
                remedy="Give a stored key by reference instead, {key:PROVIDER} "
                "(`byok-tui keys set PROVIDER` stores it); nothing was added.",
            )


def _add(args: argparse.Namespace) -> int:
    from byok_tui.tools.servers import ToolServer, add_server

    command = list(args.server_command)
    if bool(args.url) == bool(command):
        raise ByokError(
            "give either a command after -- (stdio) or --url (streamable HTTP)",
            remedy="byok-tui mcp add NAME -- COMMAND [ARGS...], or byok-tui mcp add NAME --url URL",
        )
    env, headers = _pairs(args.env, "env"), _pairs(args.header, "header")
    _refuse_keys({**env, **headers})
    server = ToolServer(
        args.name,
        command[0] if command else "",
        tuple(command[1:]),
        env,
        args.cwd,
        args.url,
        headers,
        args.timeout,
    )
    path = app_paths().config_file
    add_server(path, server)
    print(f"Added MCP server {server.name} to {path}.")
    print("No bot uses it until you choose it for one; nothing has been started.")
    return 0


def _list(_args: argparse.Namespace) -> int:
    from byok_tui.core.config import load_config
    from byok_tui.tools.servers import configured_servers

    path = app_paths().config_file
    servers = configured_servers(load_config(path))
    if not servers:
        print(f"No MCP servers yet ({path}). Add one with `byok-tui mcp add`.")
    for server in servers:
        print(server.describe())
    return 0


def _remove(args: argparse.Namespace) -> int:
    from byok_tui.tools.servers import remove_server

    path = app_paths().config_file
    remove_server(path, args.name)
    print(f"Removed MCP server {args.name} from {path}.")
    return 0


def _tools(args: argparse.Namespace) -> int:
    from byok_tui.app_services.services import open_services, remember_every_key
    from byok_tui.app_services.tool_box import connection
    from byok_tui.tools.client import list_tools
    from byok_tui.tools.servers import find_server

    services = open_services()
    server = find_server(services.config, args.name)
    remember_every_key(services)  # before a server's words are shown
    connect = connection(services, server)
    print(f"Starting {server.name}..." if not server.url else f"Contacting {server.name}...")
    tools = asyncio.run(list_tools(server, **connect))
    if not tools:
        print(f"{server.name} offers no tools.")
    for tool in tools:
        hints = [
            word
            for word, declared in (("read-only", tool.read_only), ("destructive", tool.destructive))
            if declared
        ]
        said = f"  [{', '.join(hints)}, as the server says]" if hints else ""
        description = " ".join(tool.spec.description.split())[:160]
        print(f"{tool.spec.name}{said}\n    {description}")
    return 0
