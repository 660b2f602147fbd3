"""`byok-tui models`: the registry's models and those each provider's model list names. A list
is asked for with --refresh, when none is cached, and always from a local runtime; never from
a provider whose key is not set."""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any

from byok_tui.app_services.services import Services, open_services
from byok_tui.cli.common import keep_the_ledger, provider_argument, provider_client
from byok_tui.core.errors import ByokError, ErrorKind
from byok_tui.core.registry import Provider, providers
from byok_tui.keys import NoApiKeyError, UnusableKeyError, resolve_key
from byok_tui.providers.types import ListedModel


def add_parsers(commands: Any) -> None:
    models = commands.add_parser(
        "models",
        help="list models: the registry's and those discovered from providers",
        description="List the registry's models and those discovered from each provider's "
        "model list (for providers whose key is set, and Ollama). Discovered models are "
        "cached in the data folder; --refresh asks the providers again. The exit status is 1 "
        "when a provider's list could not be read (its registry models are still listed); "
        "Ollama not running is only noted, unless it is asked for with -p.",
    )
    models.add_argument(
        "named", nargs="?", type=provider_argument, metavar="ID", help="only this provider"
    )
    models.add_argument(
        "-p", "--provider", type=provider_argument, help="only this provider (as ID)"
    )
    models.add_argument("--refresh", action="store_true", help="ask the providers again")
    models.set_defaults(run=_models)


def _models(args: argparse.Namespace) -> int:
    if args.named is not None:
        if args.provider is not None and args.provider.id != args.named.id:
            raise ByokError(f"two providers named: {args.named.id} and -p {args.provider.id}")
        args.provider = args.named
    services = open_services()
    selected = (args.provider,) if args.provider else providers()
    asked_for = args.provider is not None
    return asyncio.run(_list_models(services, selected, refresh=args.refresh, asked_for=asked_for))


def _can_discover(services: Services, provider: Provider) -> bool:
    if not provider.needs_key or provider.public_model_list:
        return True
    try:
        resolve_key(provider, services.keys, environ=services.environ)
    except NoApiKeyError:
        return False
    except UnusableKeyError:
        return True  # discovery reports it, in one line
    return True


async def _list_models(
    services: Services, selected: tuple[Provider, ...], *, refresh: bool, asked_for: bool
) -> int:
    """Print every model; exit 1 when any discovery failed, with or without --refresh. A
    local runtime that is not running is how most machines are: unless it was asked for
    (-p), it is a note, not a failure."""
    from byok_tui.app_services.services import model_cache
    from byok_tui.providers.model_cache import refresh_models

    cache = model_cache(services)
    failures = 0

    async def discover(client: Any, provider: Provider) -> list[ListedModel]:
        nonlocal failures
        cached = cache.get(provider.id)
        stale = refresh or cached is None or not provider.needs_key
        if not stale or not _can_discover(services, provider):
            return cached[1] if cached else []
        try:
            return await refresh_models(client, cache, provider)
        except ByokError as error:
            not_running = not provider.needs_key and error.kind is ErrorKind.NETWORK
            if not_running and not asked_for:
                print(
                    f"byok-tui: note: {provider.display_name} is not running, so the models "
                    f"pulled into it are not listed. {provider.start_remedy}",
                    file=sys.stderr,
                )
            else:
                failures += 1
                print(f"byok-tui: {error.one_line()}", file=sys.stderr)
            return cached[1] if cached else []

    async with provider_client(services, None) as client:
        from byok_tui.cli.progress import open_store

        keep_the_ledger(client, open_store(services))
        discovered = await asyncio.gather(*(discover(client, p) for p in selected))

    rows = [("PROVIDER", "MODEL", "NAME", "NOTES")]
    for provider, found in zip(selected, discovered, strict=True):
        known = {m.id for m in provider.models}
        for model in provider.models:
            notes = ["default"] if model.id == provider.default_model else []
            notes += ["free"] if model.free else []
            if model.requests_per_minute:
                notes.append(f"{model.requests_per_minute}/min")
            rows.append((provider.id, model.id, model.display_name, ", ".join(notes)))
        for listed in sorted(found, key=lambda m: m.id):
            if listed.id in known:
                continue
            notes = ["discovered"] + (["free"] if listed.free else [])
            rows.append((provider.id, listed.id, listed.display_name, ", ".join(notes)))
    widths = [min(48, max(len(r[i]) for r in rows)) for i in range(3)]
    for row in rows:
        cells = [row[i].ljust(widths[i]) for i in range(3)] + [row[3]]
        print("  ".join(cells).rstrip())
    return 1 if failures else 0
