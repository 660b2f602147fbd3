"""`byok-tui requests`: the log of every request byok-tui made, with which key (its source
and last four characters, never the key) and how it ended; `byok-tui balance`: the credit a
provider says is left on a key, asked for now."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from byok_tui.cli.common import EXIT_NO_KEY, provider_argument
from byok_tui.cli.spend import since_argument

if TYPE_CHECKING:
    from byok_tui.app_services.services import Services
    from byok_tui.core.registry import Provider

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

    balance = commands.add_parser(
        "balance",
        help="the credit left on a key, as the provider states it (OpenRouter, DeepSeek)",
        description="Ask the provider, now, what is left on the key byok-tui would use: "
        "OpenRouter's key limit, what is left of it and its usage today and this month; "
        "DeepSeek's balance. One request per provider, recorded in the request log.",
    )
    balance.add_argument(
        "provider",
        nargs="?",
        type=provider_argument,
        metavar="PROVIDER",
        help="one provider (default: each that states a balance and has a key)",
    )
    balance.add_argument("--json", action="store_true", help="a JSON list of objects")
    balance.set_defaults(run=_balance)


def _requests(args: argparse.Namespace) -> int:
    import json

    from byok_tui.app_services.services import open_services
    from byok_tui.cli.progress import open_store
    from byok_tui.spend.request_log import REQUEST_HEADINGS, request_cells

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


def _balance(args: argparse.Namespace) -> int:
    import asyncio

    from byok_tui.app_services.services import first_usable_provider, open_services
    from byok_tui.core.errors import ByokError, ErrorKind
    from byok_tui.core.registry import providers

    services = open_services()
    if args.provider is not None:
        chosen = [args.provider]
    else:
        stated = [p for p in providers() if p.balance_path]
        chosen = [p for p in stated if first_usable_provider(services, [p]) is not None]
        if not chosen:
            names = " or ".join(p.display_name for p in stated)
            error = ByokError(
                f"no key is set for {names}, the providers that state a balance",
                remedy=f"Set one with `byok-tui keys set {stated[0].id}` or in Settings.",
            )
            error.kind = ErrorKind.NO_KEY  # exit 3, as ask's
            raise error
    return asyncio.run(_ask_balances(services, chosen, as_json=args.json))


async def _ask_balances(services: Services, chosen: list[Provider], *, as_json: bool) -> int:
    import json
    import sys
    import time

    from byok_tui.app_services.services import provider_client
    from byok_tui.cli.common import keep_the_ledger
    from byok_tui.cli.progress import open_store
    from byok_tui.core.errors import ByokError, ErrorKind

    failed, no_key = 0, 0
    found = []
    async with provider_client(services) as client:
        keep_the_ledger(client, open_store(services))
        for provider in chosen:
            try:
                balance = await client.balance(provider)
            except ByokError as error:
                failed += 1
                no_key += error.kind is ErrorKind.NO_KEY
                print(f"byok-tui: {error.one_line()}", file=sys.stderr)
                continue
            found.append(balance)
    if as_json:
        rows = [
            {"provider": b.provider_id, "checked": b.checked, "summary": b.summary, **b.figures}
            for b in found
        ]
        print(json.dumps(rows, indent=2))
    for balance in [] if as_json else found:
        when = time.strftime("%H:%M:%S", time.localtime(balance.checked))
        print(f"{balance.provider_id:<12} {balance.summary}  (as of {when})")
    return (EXIT_NO_KEY if no_key == failed else 1) if failed else 0
