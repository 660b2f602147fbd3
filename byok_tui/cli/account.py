"""`byok-tui requests`: the log of every request byok-tui made, with which key (its source
and last four characters, never the key) and how it ended."""

from __future__ import annotations

import argparse
from typing import Any

from byok_tui.cli.spend import since_argument

REQUESTS_EPILOG = """\
Every request is recorded as it ends: chats, model lists, key tests, balance checks and the
local runtime probe. Kept: when, provider, why, method, host and path (never the query string),
the key's source and last four characters, status, duration, tokens and cost. Never a key or
a body. byok-tui makes no request you did not ask for: starting it and quitting makes none.

examples:
  byok-tui requests
  byok-tui requests --since 1d --json"""


def add_parsers(commands: Any) -> None:
    requests = commands.add_parser(
        "requests",
        help="every request made to a provider: when, where, which key, how it ended",
        description="The request log, newest first.",
        epilog=REQUESTS_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    requests.add_argument(
        "--since", type=since_argument, default="30d", metavar="SPAN", help="30d (default), 1d"
    )
    requests.add_argument("--json", action="store_true", help="a JSON list of objects")
    requests.set_defaults(run=_requests)


def _requests(args: argparse.Namespace) -> int:
    import json

    from byok_tui.request_log import REQUEST_HEADINGS, request_cells
    from byok_tui.services import open_services, open_store

    rows = open_store(open_services()).ledger.requests(args.since)
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    if not rows:
        print("No requests in that time.")
        return 0
    table = [REQUEST_HEADINGS, *(request_cells(row) for row in rows)]
    widths = [max(len(line[i]) for line in table) for i in range(len(REQUEST_HEADINGS))]
    for line in table:
        print("  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip())
    return 0
