"""What the app's opening thread does once the first frame is on the terminal: open the
database and clients, read the keys if they were left until then, and read what the chat
screen opens on. Blocking: run in a thread."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, NamedTuple

from byok_tui.app_services.app_data import AppData
from byok_tui.app_services.services import AppContext, Backend, Services, open_services
from byok_tui.core.errors import ByokError
from byok_tui.core.key_records import KeyOverview
from byok_tui.core.registry import providers
from byok_tui.keys.overview import KeySnapshot, read_keys

if TYPE_CHECKING:
    from byok_tui.app_services.chat_state import ChatState
    from byok_tui.storage.db import Progress


class Opening(NamedTuple):
    """What the opening thread made, for the chat screen."""

    context: AppContext
    data: AppData
    overview: KeyOverview | None
    """Every provider's key state, as the first chat state shows it."""
    first_state: ChatState | None
    """What the chat screen opens on (None: the read failed; the screen reads it again)."""


def open_app(
    services: Services | None,
    environ: Mapping[str, str],
    backend: Backend | None = None,
    progress: Progress | None = None,
    keys_read: tuple[KeyOverview, KeySnapshot] | None = None,
) -> Opening:
    """`services` None: opened here, and every key read; `keys_read`: the keys as read before
    the first frame, if they were; `progress`: told how far a long upgrade of the database is.

    The chat state is read here rather than in a thread of the chat screen: read there while
    the screen draws, its two dozen reads of a few milliseconds each took ~300 ms (each
    waiting for the busy event loop to let go of the interpreter), and a message sent on the
    start screen waited for them. The HTTP client is made here too, for the same reason (the
    local runtime's probe would make it at once anyway)."""
    if services is None:
        services = open_services(environ)
        keys_read = read_keys(providers(), services.keys, services.environ)
    context = AppContext.open(services, backend, progress)
    context.client.prepare()
    data = AppData(context, keys_read)
    try:
        first: ChatState | None = data.chat_state()
    except ByokError:  # the chat screen reads it again, and shows the error
        first = None
    return Opening(context, data, keys_read[0] if keys_read else None, first)
