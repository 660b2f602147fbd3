"""`byok-tui search`: every message and title that matches, newest first, one line each."""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from byok_tui.app_services.services import open_services
from byok_tui.cli.common import whole_number
from byok_tui.cli.progress import open_store
from byok_tui.core.records import MATCH_END, MATCH_START, SearchHit

HOW_TO_SEARCH = """\
what matches:
  every word must be found; word* is a prefix; "two words" is a phrase. Upper and lower case
  and accents are ignored. Titles first, then messages, newest first.

examples:
  byok-tui search retry after          both words, anywhere in a message
  byok-tui search '"retry after"'      the phrase
  byok-tui search 'stream*' --bot Coder
  byok-tui search kumquat --json | jq '.[].conversation_id'"""


def add_parsers(commands: Any) -> None:
    search = commands.add_parser(
        "search",
        help="find messages and conversation titles in every conversation",
        description="Search every message (every branch) and every conversation title. "
        "Prints one line per hit: conversation id and title, the message's role and time, "
        "and the words around the match.",
        epilog=HOW_TO_SEARCH,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    search.add_argument("query", nargs="+", metavar="QUERY", help='words, word*, "a phrase"')
    search.add_argument("--bot", metavar="NAME", help="only this bot's conversations")
    search.add_argument("--json", action="store_true", help="a JSON list of hits")
    search.add_argument(
        "--limit", type=whole_number, default=50, metavar="N", help="at most N hits (default 50)"
    )
    search.set_defaults(run=_search)


def _search(args: argparse.Namespace) -> int:
    store = open_store(open_services())
    bot_id = store.bot(args.bot).id if args.bot else None
    hits = store.search.search(" ".join(args.query), bot_id=bot_id, limit=args.limit)
    if args.json:
        print(json.dumps([_as_json(hit) for hit in hits], indent=2, ensure_ascii=False))
        return 0
    if not hits:
        print("nothing found", file=sys.stderr)
        return 1
    for hit in hits:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(hit.created))
        snippet = _plain(hit.snippet)
        print(f"#{hit.conversation_id} {hit.title} · {hit.role} · {when} · {snippet}")
    return 0


def _plain(snippet: str) -> str:
    return snippet.replace(MATCH_START, "").replace(MATCH_END, "")


def _matches(snippet: str) -> list[list[int]]:
    """Where each match is in the plain snippet: [start, end) character offsets."""
    spans: list[list[int]] = []
    plain = 0
    for character in snippet:
        if character == MATCH_START:
            spans.append([plain, plain])
        elif character == MATCH_END and spans:
            spans[-1][1] = plain
        else:
            plain += 1
    return spans


def _as_json(hit: SearchHit) -> dict[str, object]:
    return {
        "conversation_id": hit.conversation_id,
        "title": hit.title,
        "bot": hit.bot_name,
        "message_id": hit.message_id,
        "role": hit.role,
        "created": time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(hit.created)),
        "snippet": _plain(hit.snippet),
        "matches": _matches(hit.snippet),
    }
