"""`byok-tui keys …`: set, show (masked), list, remove and locate keys from the shell; keys
printed by a command (a password manager); labelled keys; failover between them.

A key is never accepted as a command-line argument (it would land in shell history and the
process list): `set` reads it with hidden input on a terminal, or one line from standard input.
A command is stored, never the key it prints.
"""

from __future__ import annotations

import argparse
import getpass
import os
import sys
from typing import Any

from byok_tui.cli.common import provider_argument, usage
from byok_tui.core.errors import ByokError
from byok_tui.core.paths import app_paths
from byok_tui.core.registry import (
    Provider,
    key_mismatch_warning,
    provider_ids,
    providers,
)
from byok_tui.keys import KeyStore, entry_name, mask_key, normalize_key, open_key_store
from byok_tui.keys.base import DEFAULT_LABEL, check_label
from byok_tui.keys.index import (
    check_command,
    read_index,
    remove_key,
    save_key,
    set_failover,
    slot_of,
)
from byok_tui.keys.overview import key_overview


def add_parser(commands: Any) -> None:
    ids = ", ".join(provider_ids())
    keys = commands.add_parser(
        "keys",
        help="set, read, remove and list stored API keys",
        description=(
            "Manage stored API keys. Entries are named app-apikey-<provider>, as in the browser "
            "app this mirrors; a labelled key app-apikey-<provider>:<label>. A key can instead "
            "come from a command (a password manager): the command is stored, never the key. "
            f"Providers: {ids}."
        ),
    )
    keys.set_defaults(run=lambda _args: usage(keys))
    actions = keys.add_subparsers(dest="action", metavar="ACTION")

    set_key = actions.add_parser(
        "set",
        help="store a key (hidden prompt, or one line from standard input)",
        description=(
            "Store the key for PROVIDER. On a terminal it asks with hidden input; otherwise it "
            "reads one line from standard input. Surrounding white space is removed; the key "
            "is not checked (an invalid key shows up on the first message). With --command, "
            "the command is stored instead and run when the key is needed: without a shell, "
            "with no provider key in its environment, for at most 15 s; the first line it "
            "prints is the key, held in memory for [keys] command_cache_minutes (default 10) "
            "and written nowhere. 'op://vault/item/field' stands for 'op read op://…'."
        ),
        epilog="examples:\n"
        "  byok-tui keys set openai --command 'pass show api/openai'\n"
        "  byok-tui keys set anthropic --command op://Private/Anthropic/credential\n"
        "  byok-tui keys set openai --label work          a second key, asked for\n"
        "  byok-tui keys set openai --label ci --command 'rbw get openai-ci'",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    set_key.add_argument("provider", type=provider_argument, metavar="PROVIDER")
    _label_option(set_key)
    set_key.add_argument(
        "--command",
        dest="key_command",  # `command` names the subcommand
        metavar="COMMAND",
        help="a command that prints the key (stored instead)",
    )
    set_key.set_defaults(run=_set)

    get_key = actions.add_parser("get", help="print the stored key alone (for scripts)")
    get_key.add_argument("provider", type=provider_argument, metavar="PROVIDER")
    _label_option(get_key)
    get_key.set_defaults(run=_get)

    remove_key = actions.add_parser(
        "rm", help="remove a stored key or command; the provider becomes unset"
    )
    remove_key.add_argument("provider", type=provider_argument, metavar="PROVIDER")
    _label_option(remove_key)
    remove_key.set_defaults(run=_remove)

    list_keys = actions.add_parser(
        "list",
        help="every key: label, entry, source, masked key or command, health, last used, set",
    )
    list_keys.set_defaults(run=_list)

    failover = actions.add_parser(
        "failover",
        help="turn failover between a provider's keys on or off (off by default)",
        description="When on, a request refused with 401, 402, 429 or insufficient_quota "
        "before any text arrived is sent once with each other usable key of the provider, in "
        "order (default, then labelled keys as added), with a notice. Never on 400 or 403. A "
        "conversation stays on the key that last answered it. Without on/off: show the state.",
    )
    failover.add_argument("provider", type=provider_argument, metavar="PROVIDER")
    failover.add_argument("state", nargs="?", choices=("on", "off"), metavar="on|off")
    failover.set_defaults(run=_failover)

    path = actions.add_parser("path", help="print where keys are kept")
    path.set_defaults(run=_path)


def _label_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--label",
        type=_label_argument,
        default=DEFAULT_LABEL,
        metavar="LABEL",
        help="a labelled key beside the default one (letters, digits, - and _)",
    )


def _label_argument(value: str) -> str:
    try:
        return check_label(value)
    except ByokError as error:
        raise argparse.ArgumentTypeError(error.message) from None


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
    """The key store and the entry of the provider (and label) named on the command line."""
    provider: Provider = args.provider
    _needs_key(provider)
    return _store(), entry_name(provider.id, args.label)


def read_key(what: str) -> str:
    """A key from the user: hidden input on a terminal, else one line of standard input."""
    if sys.stdin.isatty():
        return getpass.getpass(f"{what} (input hidden): ")
    return sys.stdin.readline()


def _set(args: argparse.Namespace) -> int:
    provider: Provider = args.provider
    _needs_key(provider)
    label: str = args.label
    what = f"API key for {provider.display_name}" + (
        f" labelled {label}" if label != DEFAULT_LABEL else ""
    )
    command = check_command(args.key_command) if args.key_command is not None else None
    key = "" if command else normalize_key(read_key(what))
    if not command and not key:
        raise ByokError("no key was given; nothing was changed")
    store = _store()
    entry = entry_name(provider.id, label)
    save_key(store, entry, provider.id, label, key=key, command=command or "")
    _note_set(provider.id, label)
    _print_notices(store)
    if command:
        print(f"Saved the command for {entry} in {store.location}; the key it prints is not.")
        _try_command(provider, command)
        return 0
    print(f"Saved {entry} in {store.location}: {mask_key(key)}")
    _warn_if_another_providers(provider, key)
    return 0


def _try_command(provider: Provider, command: str) -> None:
    """Run a command just saved, once, to say whether it prints a key (it is kept either
    way: the password manager may be locked now)."""
    from byok_tui.core.child_env import child_environment
    from byok_tui.keys.command import KeyCommands

    try:
        key = KeyCommands(child_environment(), cache_seconds=0).run(
            command, f"the {provider.display_name} key"
        )
    except ByokError as error:
        print(f"byok-tui: warning: {error.one_line()}", file=sys.stderr)
        return
    print(f"It prints a key: {mask_key(key)}")
    _warn_if_another_providers(provider, key)


def _warn_if_another_providers(provider: Provider, key: str) -> None:
    """The same warning for a key pasted and a key a command printed; never a refusal."""
    warning = key_mismatch_warning(provider, key)
    if warning:
        print(f"byok-tui: warning: {warning} Saved anyway.", file=sys.stderr)


def _note_set(provider_id: str, label: str) -> None:
    """When the key was set, for `keys list` (a database that cannot be opened only loses
    that date)."""
    from byok_tui.app_services.services import open_services
    from byok_tui.cli.progress import open_store

    try:
        open_store(open_services()).key_health.mark_set(provider_id, label)
    except ByokError as error:
        print(f"byok-tui: note: when it was set is not kept: {error.one_line()}", file=sys.stderr)


def _get(args: argparse.Namespace) -> int:
    store, entry = _entry_of(args)
    value = store.get(entry)
    _print_notices(store)
    command = read_index(store).command(args.provider.id, slot_of(args.label))
    if value is None and command:
        print(
            f"byok-tui: {entry} comes from a command, which byok-tui runs when the key is "
            "needed; the key is not stored",
            file=sys.stderr,
        )
        return 1
    if value is None:
        print(f"byok-tui: no key is stored in {entry}", file=sys.stderr)
        return 1
    print(value)
    return 0


def _remove(args: argparse.Namespace) -> int:
    store, entry = _entry_of(args)
    removed = remove_key(store, entry, args.provider.id, args.label)
    _print_notices(store)
    print(f"Removed {entry}." if removed else f"{entry} was not set; nothing to remove.")
    return 0


def _list(_args: argparse.Namespace) -> int:
    import time

    from byok_tui.app_services.services import open_services
    from byok_tui.cli.progress import open_store
    from byok_tui.spend.key_report import HEADINGS, key_rows

    services = open_services()
    store = services.keys
    overview = key_overview(providers(), store, os.environ)
    for notice in overview.notices:
        print(f"byok-tui: {notice}", file=sys.stderr)
    try:
        book = open_store(services).key_health
        health, set_times = book.all(), book.set_times()
    except ByokError as error:  # the keys are still listed, without their health
        print(f"byok-tui: health not shown: {error.one_line()}", file=sys.stderr)
        health, set_times = {}, {}
    reminder = services.config.key_reminder_days()
    rows = [r.cells() for r in key_rows(overview, health, set_times, time.time(), reminder)]
    widths = [max(len(row[i]) for row in (HEADINGS, *rows)) for i in range(len(HEADINGS))]
    for row in (HEADINGS, *rows):
        cells = (cell.ljust(width) for cell, width in zip(row, widths, strict=True))
        print("  ".join(cells).rstrip())
    print(f"\nKeys are kept in {overview.location}.")
    if overview.failover:
        print(f"Failover between keys is on for: {', '.join(overview.failover)}.")
    if overview.error is not None:
        print(f"byok-tui: {overview.error.one_line()}", file=sys.stderr)
        return 1
    return 0


def _failover(args: argparse.Namespace) -> int:
    provider: Provider = args.provider
    _needs_key(provider)
    store = _store()
    if args.state is not None:
        set_failover(store, provider.id, args.state == "on")
    index = read_index(store)
    on = index.failover_on(provider.id)
    keys = 1 + len(index.labels_of(provider.id))
    print(f"Failover between {provider.display_name}'s keys is {'on' if on else 'off'}.")
    if on and keys < 2:
        print(
            f"byok-tui: note: {provider.display_name} has one key; add another with "
            f"`byok-tui keys set {provider.id} --label NAME`",
            file=sys.stderr,
        )
    return 0


def _path(_args: argparse.Namespace) -> int:
    from byok_tui.keys.file_store import FileKeyStore

    store = _store()
    print(store.path if isinstance(store, FileKeyStore) else store.location)
    return 0
