"""`byok-tui keys …`: set, show (masked), list, remove and locate keys from the shell.

A key is never accepted as a command-line argument (it would land in shell history and the
process list): `set` reads it with hidden input on a terminal, or one line from standard input.
"""

from __future__ import annotations

import argparse
import getpass
import os
import sys
from typing import Any

from byok_tui.cli.chat import provider_argument
from byok_tui.errors import ByokError
from byok_tui.keys import KeyStore, entry_name, mask_key, normalize_key, open_key_store
from byok_tui.keys.overview import key_overview
from byok_tui.paths import app_paths
from byok_tui.registry import (
    Provider,
    provider_ids,
    providers,
    providers_matching_key_shape,
)


def add_parser(commands: Any) -> None:
    ids = ", ".join(provider_ids())
    keys = commands.add_parser(
        "keys",
        help="set, read, remove and list stored API keys",
        description=(
            "Manage stored API keys. Entries are named app-apikey-<provider>, as in the browser "
            f"app this mirrors. Providers: {ids}."
        ),
    )
    keys.set_defaults(run=lambda _args: _usage(keys))
    actions = keys.add_subparsers(dest="action", metavar="ACTION")

    set_key = actions.add_parser(
        "set",
        help="store a key (hidden prompt, or one line from standard input)",
        description=(
            "Store the key for PROVIDER. On a terminal it asks with hidden input; otherwise it "
            "reads one line from standard input. Surrounding white space is removed; the key "
            "is not checked (an invalid key shows up on the first message)."
        ),
    )
    set_key.add_argument("provider", type=provider_argument, metavar="PROVIDER")
    set_key.set_defaults(run=_set)

    get_key = actions.add_parser("get", help="print the stored key alone (for scripts)")
    get_key.add_argument("provider", type=provider_argument, metavar="PROVIDER")
    get_key.set_defaults(run=_get)

    remove_key = actions.add_parser("rm", help="remove the stored key; the provider becomes unset")
    remove_key.add_argument("provider", type=provider_argument, metavar="PROVIDER")
    remove_key.set_defaults(run=_remove)

    list_keys = actions.add_parser(
        "list", help="every provider: entry, set or unset, source, masked key"
    )
    list_keys.set_defaults(run=_list)

    path = actions.add_parser("path", help="print where keys are kept")
    path.set_defaults(run=_path)


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help(sys.stderr)
    return 2


def _store() -> KeyStore:
    return open_key_store(app_paths())


def _print_notices(store: KeyStore) -> None:
    for notice in store.notices:
        print(f"byok-tui: {notice}", file=sys.stderr)


def _needs_key(provider: Provider) -> None:
    if not provider.needs_key:
        raise ByokError(
            f"{provider.display_name} is a local runtime and needs no key",
            remedy="Nothing to store: byok-tui talks to it without one.",
        )


def _entry_of(args: argparse.Namespace) -> tuple[KeyStore, str]:
    """The key store and the entry of the provider named on the command line."""
    provider: Provider = args.provider
    _needs_key(provider)
    return _store(), entry_name(provider.id)


def read_key(what: str) -> str:
    """A key from the user: hidden input on a terminal, else one line of standard input."""
    if sys.stdin.isatty():
        return getpass.getpass(f"{what} (input hidden): ")
    return sys.stdin.readline()


def _set(args: argparse.Namespace) -> int:
    provider: Provider = args.provider
    _needs_key(provider)
    key = normalize_key(read_key(f"API key for {provider.display_name}"))
    if not key:
        raise ByokError("no key was given; nothing was changed")
    store = _store()
    entry = entry_name(provider.id)
    store.set(entry, key)
    _print_notices(store)
    print(f"Saved {entry} in {store.location}: {mask_key(key)}")
    lookalikes = [p for p in providers_matching_key_shape(key) if p.id != provider.id]
    if lookalikes and not provider.key_shape_matches(key):
        names = ", ".join(p.display_name for p in lookalikes)
        print(
            f"byok-tui: warning: this key looks like a key for {names}, not "
            f"{provider.display_name}. Saved anyway.",
            file=sys.stderr,
        )
    return 0


def _get(args: argparse.Namespace) -> int:
    store, entry = _entry_of(args)
    value = store.get(entry)
    _print_notices(store)
    if value is None:
        print(f"byok-tui: no key is stored in {entry}", file=sys.stderr)
        return 1
    print(value)
    return 0


def _remove(args: argparse.Namespace) -> int:
    store, entry = _entry_of(args)
    removed = store.delete(entry)
    _print_notices(store)
    print(f"Removed {entry}." if removed else f"{entry} was not set; nothing to remove.")
    return 0


def _list(_args: argparse.Namespace) -> int:
    store = _store()
    overview = key_overview(providers(), store, os.environ)
    for notice in overview.notices:
        print(f"byok-tui: {notice}", file=sys.stderr)
    header = ("PROVIDER", "ENTRY", "STORED", "USED FOR CALLS", "KEY")
    rows = [
        (
            s.provider_id,
            s.entry or "-",
            "local" if s.entry is None else ("set" if s.stored else "unset"),
            s.describe(),
            s.masked or "-",
        )
        for s in overview.statuses
    ]
    widths = [max(len(row[i]) for row in (header, *rows)) for i in range(len(header))]
    for row in (header, *rows):
        cells = (cell.ljust(width) for cell, width in zip(row, widths, strict=True))
        print("  ".join(cells).rstrip())
    print(f"\nKeys are kept in {overview.location}.")
    if overview.error is not None:
        print(f"byok-tui: {overview.error.one_line()}", file=sys.stderr)
        return 1
    return 0


def _path(_args: argparse.Namespace) -> int:
    from byok_tui.keys.file_store import FileKeyStore

    store = _store()
    print(store.path if isinstance(store, FileKeyStore) else store.location)
    return 0
