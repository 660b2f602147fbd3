"""`byok-tui provider …`: add, list and remove the user's own OpenAI-compatible providers.

A definition goes in the config file and never holds a key; the key is set as for any
provider (`byok-tui keys set ID`) and only ever goes to that provider's own base URL.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from byok_tui.cli.common import usage
from byok_tui.core.config import load_config
from byok_tui.core.errors import ByokError
from byok_tui.core.paths import app_paths

if TYPE_CHECKING:
    from byok_tui.providers.custom import CustomDefinition

EXAMPLES = """\
examples:
  byok-tui provider add lmstudio --base-url http://127.0.0.1:1234/v1 --no-key
  byok-tui provider add together --base-url https://api.together.xyz/v1 --name Together \\
      --model meta-llama/Llama-3.3-70B-Instruct-Turbo
  byok-tui keys set together        then its key, as for any provider
  byok-tui ask -p lmstudio "Hello"

The base URL is where `/chat/completions` and `/models` are found (usually ending in /v1).
It must be https, unless it is a loopback address (127.0.0.1, ::1, localhost) or the provider
takes no key (--no-key). Models come from --model and from the server's own list
(`byok-tui models ID --refresh`)."""


def add_parsers(commands: Any) -> None:
    provider = commands.add_parser(
        "provider",
        help="add, list and remove your own OpenAI-compatible providers",
        description=(
            "Your own providers: any server that speaks OpenAI's chat completions API (LM "
            "Studio, vLLM, llama.cpp's server, LiteLLM, Together, Fireworks...). Each is "
            "kept as [providers.<id>] in the config file, without its key."
        ),
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    provider.set_defaults(run=lambda _args: usage(provider))
    actions = provider.add_subparsers(dest="action", metavar="ACTION")

    add = actions.add_parser(
        "add",
        help="define a provider",
        description="Define an OpenAI-compatible provider. Its key, if it takes one, is set "
        "with `byok-tui keys set ID` (or in Settings) and is sent only to this base URL.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add.add_argument("id", metavar="ID", help="its id: lower-case letters, digits, - or _")
    add.add_argument("--base-url", required=True, metavar="URL", help="e.g. https://host/v1")
    add.add_argument("--name", default="", help="the name shown (default: the id)")
    add.add_argument(
        "--model",
        dest="models",
        action="append",
        default=[],
        metavar="MODEL",
        help="a model it serves (repeatable; the first is the default)",
    )
    keys = add.add_mutually_exclusive_group()
    keys.add_argument(
        "--no-key", action="store_true", help="it takes no key (no Authorization header)"
    )
    keys.add_argument(
        "--optional-key",
        action="store_true",
        help="a key is sent when one is set, and none when not",
    )
    add.set_defaults(run=_add)

    listing = actions.add_parser("list", help="list the providers you defined")
    listing.set_defaults(run=_list)

    remove = actions.add_parser(
        "rm",
        help="remove a provider you defined",
        description="Remove a provider's definition from the config file. Its stored key is "
        "left alone (remove it with `byok-tui keys rm ID`), but a provider defined again "
        "under that id, by `provider add` or an import, never inherits it.",
    )
    remove.add_argument("id", metavar="ID")
    remove.set_defaults(run=_remove)


def _add(args: argparse.Namespace) -> int:
    from byok_tui.core.registry import KeyUse
    from byok_tui.providers.custom import CustomDefinition, add_definition

    path = app_paths().config_file
    key: KeyUse = "none" if args.no_key else "optional" if args.optional_key else "required"
    definition = CustomDefinition(
        id=args.id.strip().lower(),
        base_url=args.base_url.strip(),
        name=args.name.strip(),
        models=tuple((m.strip(), m.strip()) for m in args.models if m.strip()),
        key=key,
    )
    _check_arguments(definition)
    add_definition(path, definition)
    print(f"Added {definition.name or definition.id} ({definition.id}) to {path}.")
    _forget_earlier_keys(definition.id)
    if key == "none":
        print("It takes no key: requests to it carry no Authorization header.")
    else:
        print(
            f"Set its key with `byok-tui keys set {definition.id}` (or in Settings); "
            "it is sent only to this base URL."
        )
    if not definition.models:
        print(f"List its models with `byok-tui models {definition.id} --refresh`.")
    return 0


def _check_arguments(definition: CustomDefinition) -> None:
    """The definition the arguments make, checked before the config file is read: a problem
    is a usage error (exit 2) naming the option, not the file, which is not written."""
    from byok_tui.core.config import ConfigError
    from byok_tui.providers.custom import parse_definition

    origin = "provider add"
    where = f"{origin}: providers.{definition.id}"
    try:
        parse_definition(definition.id, definition.table(), origin)
    except ConfigError as error:
        said = error.message.replace(f"{where}.base_url", "--base-url")
        said = said.replace(f"{where}.models", "--model").replace(f"{where}.name", "--name")
        said = said.replace(f"{where}: ", f"ID {definition.id!r}: ").replace(where, "ID")
        raise ByokError(
            said, remedy="Nothing was written. See `byok-tui provider add --help`."
        ) from None


def _forget_earlier_keys(provider_id: str) -> None:
    """A provider defined anew inherits no key that was set for an earlier one of its id."""
    from byok_tui.app_services.services import forget_keys_of, open_services
    from byok_tui.cli.progress import open_store

    opened = open_services()
    forgotten = forget_keys_of(opened, open_store(opened), provider_id)
    if forgotten:
        print(
            f"Forgot what was kept for an earlier provider named {provider_id}: "
            f"{'; '.join(forgotten)}. They were set for another address: set its key again."
        )


def _list(_args: argparse.Namespace) -> int:
    from byok_tui.providers.custom import definitions

    path = app_paths().config_file
    found = definitions(load_config(path))
    if not found:
        print(f"No providers of your own yet ({path}). Add one with `byok-tui provider add`.")
        return 0
    for definition in found:
        models = ", ".join(m for m, _ in definition.models) or "from its /models list"
        print(f"{definition.id}\t{definition.name or definition.id}\t{definition.base_url}")
        print(f"\tkey: {definition.key}\tmodels: {models}")
    return 0


def _remove(args: argparse.Namespace) -> int:
    from byok_tui.providers.custom import remove_definition

    path = app_paths().config_file
    provider_id = args.id.strip().lower()
    remove_definition(path, provider_id)
    print(f"Removed {provider_id} from {path}.")
    print(f"Its key, if one was stored, is kept: `byok-tui keys rm {provider_id}` removes it.")
    return 0
