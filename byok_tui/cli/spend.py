"""`byok-tui budget …`: spending caps that stop a send before any request leaves."""

from __future__ import annotations

import argparse
import math
import sys
from typing import Any

from byok_tui.errors import ByokError
from byok_tui.records import ALL_PROVIDERS, Budget

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
    from byok_tui.cli.chat import provider_argument

    value = value.strip().lower()
    return ALL_PROVIDERS if value == ALL_PROVIDERS else provider_argument(value).id


def _amount(value: str) -> float:
    try:
        amount = float(value.strip().lstrip("$"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an amount in US dollars: {value!r}") from None
    if not math.isfinite(amount) or amount < 0:
        raise argparse.ArgumentTypeError(f"a budget is 0 or more US dollars, not {value!r}")
    return amount


def add_parsers(commands: Any) -> None:
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


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help(sys.stderr)
    return 2


def _set(args: argparse.Namespace) -> int:
    from byok_tui.budgets import standing_of
    from byok_tui.services import open_services, open_store

    store = open_store(open_services())
    budget = Budget(args.scope, args.amount, args.per)
    store.set_budget(budget)
    print(f"Budget set: {standing_of(store, budget).describe()}")
    return 0


def _list(_args: argparse.Namespace) -> int:
    from byok_tui.budgets import standing_of
    from byok_tui.services import open_services, open_store

    store = open_store(open_services())
    budgets = store.budgets()
    if not budgets:
        print("No budgets. Set one with: byok-tui budget set PROVIDER|all AMOUNT --per day|month")
        return 0
    for budget in budgets:
        standing = standing_of(store, budget)
        state = "reached" if standing.reached else "near" if standing.near else "ok"
        print(f"{budget.scope:<12} {budget.per:<6} {standing.describe()}  ({state})")
    return 0


def _remove(args: argparse.Namespace) -> int:
    from byok_tui.services import open_services, open_store

    store = open_store(open_services())
    if not store.remove_budget(args.scope):
        raise ByokError(
            f"there is no budget for {args.scope}; nothing was removed",
            remedy="`byok-tui budget list` shows the budgets set.",
        )
    print(f"Removed the budget for {args.scope}.")
    return 0
