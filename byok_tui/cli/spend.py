"""`byok-tui budget …`: spending caps that stop a send before any request leaves; and
`byok-tui usage`: what the replies cost, grouped."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from byok_tui.core.errors import ByokError
from byok_tui.core.records import ALL_PROVIDERS, Budget, budget_amount

BUDGET_EPILOG = """\
A budget caps what replies cost per day or per month (local time), for one provider or for
all of them together (`all`). Spend is counted from the replies byok-tui priced, in the app and
with `ask` alike; a reply whose price is not known counts for nothing. At 80 % `ask` and the
app say so; once it is reached a send is refused before any request: the app offers to send
anyway this once, `ask` exits with status 9 unless --over-budget.

examples:
  byok-tui budget set openai 5 --per month
  byok-tui budget set all 0.50 --per day
  byok-tui budget list
  byok-tui budget rm openai"""


def _scope(value: str) -> str:
    """A provider id or `all`."""
    from byok_tui.cli.common import provider_argument

    value = value.strip().lower()
    if value == ALL_PROVIDERS:
        return ALL_PROVIDERS
    provider = provider_argument(value)
    if not provider.needs_key and not provider.custom:
        raise argparse.ArgumentTypeError(
            f"{provider.display_name} runs on this machine and costs nothing: it is never "
            "blocked, so it takes no budget"
        )
    return provider.id


def _amount(value: str) -> float:
    try:
        return budget_amount(value)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def since_argument(value: str) -> float:
    """`30d`, `12h` or `90m` ago, as a Unix time."""
    import time

    units = {"d": 86_400, "h": 3_600, "m": 60}
    number, unit = value.strip()[:-1], value.strip()[-1:].lower()
    if unit not in units or not number.isdigit():
        raise argparse.ArgumentTypeError(f"a span such as 30d, 12h or 90m, not {value!r}")
    return time.time() - int(number) * units[unit]


def add_parsers(commands: Any) -> None:
    limits = commands.add_parser(
        "limits",
        help="the rate limits each provider last stated, per key source",
        description="What each provider's latest response said of its rate limits (requests "
        "and tokens left, when they reset), per key source, with its age. Taken only from "
        "responses to what you asked for: byok-tui never asks a provider just to know.",
    )
    limits.add_argument("--json", action="store_true", help="a JSON list of rows")
    limits.set_defaults(run=_limits)

    usage = commands.add_parser(
        "usage",
        help="requests, tokens and cost of the replies, grouped",
        description="What the replies cost, from the token counts the providers reported and "
        "the prices byok-tui recorded for them (the app's and ask's alike). A cost is left "
        "out where the price is not known: `unpriced` counts those replies.",
    )
    usage.add_argument(
        "--since", type=since_argument, default="30d", metavar="SPAN", help="30d (default), 12h"
    )
    usage.add_argument("--by", choices=("provider", "model", "bot", "key", "day"), default="model")
    usage.add_argument("--json", action="store_true", help="a JSON list of rows")
    usage.set_defaults(run=_usage_report)

    budget = commands.add_parser(
        "budget",
        help="set, list and remove spending caps per provider or for all",
        description="Spending caps in US dollars, per day or per month.",
        epilog=BUDGET_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    budget.set_defaults(run=lambda _args: _usage(budget))
    actions = budget.add_subparsers(dest="action", metavar="ACTION")

    put = actions.add_parser("set", help="set (or change) a budget")
    put.add_argument("scope", type=_scope, metavar="PROVIDER|all")
    put.add_argument("amount", type=_amount, metavar="AMOUNT", help="US dollars, e.g. 5 or 0.25")
    put.add_argument("--per", choices=("day", "month"), required=True)
    put.set_defaults(run=_set)

    actions.add_parser("list", help="every budget and what was spent").set_defaults(run=_list)

    remove = actions.add_parser("rm", help="remove a budget")
    remove.add_argument("scope", type=_scope, metavar="PROVIDER|all")
    remove.set_defaults(run=_remove)


def _limits(args: argparse.Namespace) -> int:
    import json
    import time

    from byok_tui.app_services.services import open_services
    from byok_tui.cli.progress import open_store
    from byok_tui.providers.limits import RateLimits, age_in_words

    rows = open_store(open_services()).ledger.rate_limits()
    if args.json:
        listed = [
            {"provider": p, "key": k, "seen": seen, "headers": headers}
            for p, k, seen, headers in rows
        ]
        print(json.dumps(listed, indent=2))
        return 0
    if not rows:
        print("No rate limits seen yet: they come with the providers' answers.")
        return 0
    now = time.time()
    # A long key source (`key work from command printkey.sh`) fits its column.
    widths = [max(len(p) for p, *_ in rows), max(len(k) for _, k, *_ in rows)]
    for provider, key, seen, headers in rows:
        said = RateLimits.stored(headers).describe(now - seen)
        print(
            f"{provider:<{widths[0]}}  {key:<{widths[1]}}  {said}  "
            f"(as of {age_in_words(now - seen)})"
        )
    return 0


def _usage_report(args: argparse.Namespace) -> int:
    import json

    from byok_tui.app_services.services import open_services
    from byok_tui.cli.progress import open_store
    from byok_tui.core.money import format_usd

    rows = open_store(open_services()).ledger.usage(args.since, args.by)
    if args.json:
        for row in rows:
            row.setdefault("provider", None)
            row.setdefault("model", None)
        print(json.dumps(rows, indent=2))
        return 0
    if not rows:
        print("No replies in that time.")
        return 0
    names = [name for name in rows[0] if name not in NUMBERS]
    table = [[*names, "requests", "in", "out", "cost"]]
    for row in rows:
        cost = "price unknown" if row["cost_usd"] is None else format_usd(row["cost_usd"])
        if row["cost_usd"] is not None and row["unpriced"]:
            cost += f" (+{row['unpriced']} unpriced)"
        table.append(
            [
                *(str(row[name] or "-") for name in names),
                f"{row['requests']:,}",
                f"{row['input_tokens']:,}",
                f"{row['output_tokens']:,}",
                cost,
            ]
        )
    widths = [max(len(line[i]) for line in table) for i in range(len(table[0]))]
    for line in table:
        print("  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True)))
    return 0


NUMBERS = {"requests", "input_tokens", "output_tokens", "cost_usd", "unpriced"}


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help(sys.stderr)
    return 2


def _set(args: argparse.Namespace) -> int:
    from byok_tui.app_services.services import open_services
    from byok_tui.cli.progress import open_store
    from byok_tui.spend.budgets import standing_of

    store = open_store(open_services())
    budget = Budget(args.scope, args.amount, args.per)
    before = next((b for b in store.ledger.budgets() if b.scope == budget.scope), None)
    store.ledger.set_budget(budget)
    if before is not None and before != budget:  # one budget a scope: the new one replaces it
        print(f"Budget replaced: {standing_of(store, before).describe()} is now:")
    print(f"Budget set: {standing_of(store, budget).describe()}")
    return 0


def _list(_args: argparse.Namespace) -> int:
    from byok_tui.app_services.services import open_services
    from byok_tui.cli.progress import open_store
    from byok_tui.spend.budgets import standing_of

    store = open_store(open_services())
    budgets = store.ledger.budgets()
    if not budgets:
        print("No budgets. Set one with: byok-tui budget set PROVIDER|all AMOUNT --per day|month")
        return 0
    for budget in budgets:
        standing = standing_of(store, budget)
        state = "reached" if standing.reached else "near" if standing.near else "ok"
        print(f"{budget.scope:<12} {budget.per:<6} {standing.describe()}  ({state})")
    return 0


def _remove(args: argparse.Namespace) -> int:
    from byok_tui.app_services.services import open_services
    from byok_tui.cli.progress import open_store

    store = open_store(open_services())
    if not store.ledger.remove_budget(args.scope):
        raise ByokError(
            f"there is no budget for {args.scope}; nothing was removed",
            remedy="`byok-tui budget list` shows the budgets set.",
        )
    print(f"Removed the budget for {args.scope}.")
    return 0
