"""`byok-tui export` and `byok-tui import`: every bot and conversation as JSON or Markdown,
and back (ours, ChatGPT's or Claude's); never any key."""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from byok_tui.app_services.services import (
    Services,
    known_keys,
    remember_every_key,
)
from byok_tui.cli.common import whole_number
from byok_tui.cli.progress import open_with_default_bot
from byok_tui.core.errors import ByokError
from byok_tui.core.paths import read_bounded
from byok_tui.storage.db import Progress
from byok_tui.storage.store import Store

MAX_IMPORT_BYTES = 512 * 1024 * 1024


def add_parsers(commands: Any) -> None:

    export = commands.add_parser(
        "export",
        help="Export All Data: bots, conversations, settings, budgets and the request log "
        "as JSON, never any key",
        description="Write every bot, conversation, message and setting as one JSON document. "
        "No key of any kind is included: not per-bot keys, not stored keys, not environment "
        "keys. Without FILE the JSON goes to standard output. With --markdown: the "
        "conversations as a Markdown document to read or share (title, then each turn with "
        "who wrote it, the model and the time; the branch on screen of each, a reply's "
        "alternatives named under it with their model, tokens and cost).",
    )
    export.add_argument("file", nargs="?", type=Path, metavar="FILE")
    export.add_argument(
        "--markdown", action="store_true", help="write Markdown, not JSON (keys redacted)"
    )
    which = export.add_mutually_exclusive_group()
    which.add_argument(
        "--conversation",
        type=whole_number,
        metavar="ID",
        help="with --markdown: only this conversation (its #id: `byok-tui search`)",
    )
    which.add_argument(
        "--all", action="store_true", help="with --markdown: every conversation (the default)"
    )
    export.set_defaults(run=_export)

    restore = commands.add_parser(
        "import",
        help="import a byok-tui export, or ChatGPT's or Claude's (merges; never any key)",
        description="Restore bots and conversations from an export. Importing the same file "
        "twice changes nothing the second time. A file that is not a valid export changes "
        "nothing at all. With --from chatgpt or --from claude: the conversations.json of "
        "ChatGPT's or Claude's data export (or the zip it came in), into a bot of that name; "
        "every branch of a ChatGPT conversation is kept, the others as alternatives. What "
        "cannot be imported (tool calls, images, empty messages) is skipped, and counted.",
    )
    restore.add_argument("file", type=Path, metavar="FILE")
    restore.add_argument(
        "--from",
        dest="source",
        choices=("chatgpt", "claude"),
        help="the file is ChatGPT's or Claude's data export, not byok-tui's",
    )
    restore.set_defaults(run=_import)


def _export(args: argparse.Namespace) -> int:
    from byok_tui.providers.custom import provider_tables
    from byok_tui.storage.transfer import export_all

    if not args.markdown and (args.conversation is not None or args.all):
        raise ByokError(
            "--conversation and --all choose what --markdown exports",
            remedy="Add --markdown; the JSON export always holds everything.",
        )
    services, store = open_with_default_bot()
    if args.markdown:
        return _export_markdown(services, store, args)
    data = export_all(store, known_keys(services), provider_tables(services.config))
    if args.file is None:
        sys.stdout.buffer.write(data)
        return 0
    _write_private(args.file, data)
    print(f"Exported to {args.file} (no keys included).", file=sys.stderr)
    return 0


def _export_markdown(services: Services, store: Store, args: argparse.Namespace) -> int:
    from byok_tui.storage.markdown_export import export_markdown

    if args.conversation is None and not any(store.conversations(b.id) for b in store.bots()):
        print("byok-tui: there is no conversation to export yet", file=sys.stderr)
        return 1
    remember_every_key(services, store)  # a key of yours is redacted whatever its shape
    text = export_markdown(store, args.conversation)
    if args.file is None:
        sys.stdout.write(text)
        return 0
    _write_private(args.file, text.encode("utf-8"))
    print(f"Exported to {args.file} (no keys included).", file=sys.stderr)
    return 0


def _write_private(path: Path, data: bytes) -> None:
    """Write `data` to `path`, readable by the user alone."""
    from byok_tui.core.paths import write_private

    try:
        write_private(path, data)
    except OSError as error:
        raise ByokError(f"cannot write {path}: {error.strerror}") from None


def _import_foreign(args: argparse.Namespace) -> int:
    from byok_tui.storage.foreign import import_foreign, read_export

    print(f"byok-tui: reading {args.file}…", file=sys.stderr)
    raw = read_export(args.file)
    _services, store = open_with_default_bot()
    with _progress_bar("Importing conversations") as progress:
        summary = import_foreign(store, raw, args.source, progress)
    print(
        f"Imported {summary.conversations_added:,} conversations and "
        f"{summary.messages_added:,} messages from {summary.name} into the bot "
        f"{summary.bot_name!r} ({summary.conversations_in_file:,} conversations in the file)."
    )
    for what, reasons in (
        ("conversations", summary.skipped_conversations),
        ("messages", summary.skipped_messages),
    ):
        if reasons:
            told = ", ".join(f"{count:,} {why}" for why, count in sorted(reasons.items()))
            total = sum(reasons.values())
            print(f"Skipped {total:,} {what if total != 1 else what[:-1]}: {told}.")
    return 0


@contextlib.contextmanager
def _progress_bar(what: str) -> Iterator[Progress]:
    """A progress bar on standard error while it is a terminal (nothing otherwise)."""
    if not sys.stderr.isatty():
        yield lambda _done, _total: None
        return
    from rich.console import Console
    from rich.progress import Progress as Bar

    with Bar(console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task(what, total=None)

        def advance(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        yield advance


def _import(args: argparse.Namespace) -> int:
    from byok_tui.app_services.services import keys_kept_for
    from byok_tui.providers.custom import import_with_definitions
    from byok_tui.storage.transfer import import_all

    if args.source is not None:
        return _import_foreign(args)
    path: Path = args.file
    try:
        raw = read_bounded(path, MAX_IMPORT_BYTES)
    except OSError as error:
        raise ByokError(f"cannot read {path}: {error.strerror}") from None
    services, store = open_with_default_bot()
    summary, adopted = import_with_definitions(
        services.paths.config_file,
        services.config,
        raw,
        lambda: import_all(store, raw),
        lambda provider_id: keys_kept_for(services, store, provider_id),
    )
    print(
        f"Imported {summary.bots_added} bots, {summary.conversations_added} conversations, "
        f"{summary.messages_added} messages, {summary.requests_added} logged requests "
        "(no keys are ever imported)."
    )
    for definition in adopted.added:
        print(
            f"Defined the provider {definition.id} at {definition.base_url} (from the export; "
            f"no key: set one with `byok-tui keys set {definition.id}` if you trust it)."
        )
    for provider_id in adopted.kept:
        print(f"byok-tui: kept your own definition of {provider_id}", file=sys.stderr)
    for definition, kept in adopted.refused:
        print(
            f"byok-tui: not defined: {definition.id} at {definition.base_url}, since keys are "
            f"kept here under that id ({'; '.join(kept)}) and would go there; add it yourself "
            f"if you trust it (`byok-tui provider add {definition.id} --base-url "
            f"{definition.base_url}`, which forgets them)",
            file=sys.stderr,
        )
    if summary.dropped_fields:
        print(f"byok-tui: ignored fields: {', '.join(summary.dropped_fields)}", file=sys.stderr)
    return 0
