"""What the command modules share: a provider named on the command line, a command group's
help, the provider client, and the ledger every request a command makes is written to (the
request log promise holds for commands too: every request recorded, without its key)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from byok_tui.core.errors import ByokError
from byok_tui.core.registry import Provider, get_provider

if TYPE_CHECKING:
    from byok_tui.app_services.services import Services
    from byok_tui.providers.client import ProviderClient
    from byok_tui.storage.store import Store


def provider_argument(value: str) -> Provider:
    from byok_tui.core.registry import UnknownProviderError

    try:
        return get_provider(value.strip().lower())
    except UnknownProviderError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


EXIT_NO_KEY = 3  # no API key: ask's status, and every command's

# SQLite's integers end below 2**63; no count or id the commands take comes near.
LARGEST_WHOLE_NUMBER = 2**53


def whole_number(text: str) -> int:
    """A whole number from 1 up, for an option (exit 2 and the option named, otherwise)."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if not 1 <= value <= LARGEST_WHOLE_NUMBER:
        raise argparse.ArgumentTypeError(f"{text[:40]!r} is not a whole number from 1 to 2**53")
    return value


def model_argument(value: str) -> str:
    """A model id from the command line; one that looks like a key is a usage error (it
    would be sent and stored in clear), and the message never shows it."""
    from byok_tui.core.redaction import model_id_problem

    problem = model_id_problem(value)
    if problem is not None:
        raise argparse.ArgumentTypeError(problem)
    return value


def provider_client(services: Services, timeout: float | None) -> Any:
    """The provider client the commands use; `timeout`: the read timeout asked for, if any."""
    from byok_tui.providers.client import ProviderClient, Timeouts

    timeouts = Timeouts(read=timeout, read_local=timeout) if timeout else Timeouts()
    return ProviderClient(
        services.keys, config=services.config, environ=services.environ, timeouts=timeouts
    )


def keep_the_ledger(client: ProviderClient, store: Store) -> None:
    """Every request in the log, and every response's rate limits, written at once; a write
    that fails is said on standard error and the reply goes on."""
    from byok_tui.spend.request_log import keep_what_the_client_reports

    def run(_name: str, what: str, write: Callable[[], object]) -> None:
        try:
            write()
        except ByokError as error:
            print(f"byok-tui: could not {what}: {error.one_line()}", file=sys.stderr)

    keep_what_the_client_reports(client, store, run)


def usage(parser: argparse.ArgumentParser) -> int:
    """A command group run with no action: its help, on standard error; exit status 2."""
    parser.print_help(sys.stderr)
    return 2
