"""The app's one way to its data: named reads and writes of the key store and the database.

Screens and widgets call these and never touch a store. Two promises are kept here, so that
no screen has to:

- Every failed write reaches the user. A write whose result nobody waits for (a key typed, a
  config edited, a rename) reports its failure through `on_failure`, which the app shows; a
  write whose result is needed (a new bot, a new conversation) raises, and its caller shows it.
- What was just written is what is read. Writes run on one background thread in the order
  given (several queued for the same thing keep only the newest: a key typed character by
  character); every read first waits for the writes queued before it, so a key rotated and
  sent at once is the key the request carries.

Reads and the blocking writes run in the caller's thread: a worker thread, never the UI's.
Three parts keep the same promises through the same writer (data_part.py): `keys`, the keys as
the screens save and list them (key_data.py); `spending`, spend, budgets, limits and the
request log (spend_data.py); and `drafts`, the composer's draft kept for the next start and
those of ended runs given back (draft_data.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import threading
from collections.abc import AsyncGenerator, Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from byok_tui.app_services.chat_state import (
    ChatState,
    KeyInUse,
    key_in_use,
    read_state,
)
from byok_tui.app_services.compare_data import CompareData
from byok_tui.app_services.draft_data import DraftData
from byok_tui.app_services.export_data import ExportData
from byok_tui.app_services.key_data import KeyData
from byok_tui.app_services.spend_data import SpendData
from byok_tui.core.errors import ByokError
from byok_tui.core.redaction import redact
from byok_tui.core.registry import get_provider
from byok_tui.spend.request_log import keep_what_the_client_reports

if TYPE_CHECKING:
    from byok_tui.app_services.services import AppContext
    from byok_tui.app_services.tool_box import Approve
    from byok_tui.chat.outgoing import ListTools, Outgoing
    from byok_tui.chat.reply_events import ReplyEvent
    from byok_tui.core.attachments import Attachment
    from byok_tui.core.records import (
        Bot,
        BotConfig,
        Conversation,
        KeyOverview,
        SearchHit,
        TranscriptPage,
    )
    from byok_tui.core.registry import KeyUse, Provider
    from byok_tui.keys.overview import KeySnapshot
    from byok_tui.providers.balance import Balance
    from byok_tui.providers.types import ListedModel

log = logging.getLogger(__name__)
T = TypeVar("T")


def _said(error: Exception) -> str:
    return error.one_line() if isinstance(error, ByokError) else redact(str(error))


class AppData:
    def __init__(
        self, context: AppContext, keys_read: tuple[KeyOverview, KeySnapshot] | None = None
    ) -> None:
        """`keys_read`: the keys as read for the first frame; the first chat state starts
        from them instead of reading every key again."""
        self._context = context
        self._keys_read = keys_read
        self._writer = context.writer
        self.keys = KeyData(context, self._submit, self._run, self._settled)
        self.spending = SpendData(context, self._submit, self._run, self._settled)
        self.drafts = DraftData(context, self._submit, self._run, self._settled)
        self.exports = ExportData(context, self._submit, self._run, self._settled)
        self.compare = CompareData(context, self._submit, self._run, self._settled)
        # Set by the app to show the message; until then (and in tests) it is logged.
        self.on_failure: Callable[[str], None] = lambda said: log.error("%s", said)
        keep_what_the_client_reports(context.client, context.db, self._submit)

    # Writes whose result nobody waits for ------------------------------------------------

    def _submit(self, name: str, what: str, write: Callable[[], object]) -> None:
        def failed(error: Exception) -> None:
            self.on_failure(f"Could not {what}: {_said(error)}")

        self._writer.submit(name, write, failed)

    def save_bot_config(self, bot_id: int, config: BotConfig) -> None:
        db = self._context.db
        self._submit(f"bot:{bot_id}", "save the bot", lambda: db.update_bot(bot_id, config))

    def set_bot_tools(self, bot_id: int, tools: tuple[str, ...]) -> None:
        """The MCP servers (or `server:tool`s) the bot may use; none: no tool."""
        write = functools.partial(self._context.db.set_bot_tools, bot_id, tools)
        self._submit(f"tools:{bot_id}", "save the bot's tools", write)

    async def list_server_tools(self, servers: tuple[str, ...]) -> dict[str, tuple[str, ...] | str]:
        """Each server's tools by name, or why they could not be listed: the user asked
        (it starts or contacts the servers, held then for the bot's next message)."""
        from byok_tui.app_services.tool_box import list_servers

        return await list_servers(self._context, servers)

    def rename_conversation(self, conversation_id: int, title: str) -> None:
        db = self._context.db
        self._submit(
            f"rename:{conversation_id}",
            "rename the conversation",
            lambda: db.rename_conversation(conversation_id, title),
        )

    def delete_conversation(self, conversation_id: int) -> None:
        db = self._context.db
        self._submit(
            f"delete:{conversation_id}",
            "delete the conversation",
            lambda: db.delete_conversation(conversation_id),
        )

    def keep_unsent(self, text: str) -> None:
        """Keep aside a message whose conversation is still opening ("" once it is stored)."""
        db = self._context.db
        what = "keep the message aside" if text else "clear the message kept aside"
        self._submit("unsent", what, lambda: db.set_unsent_message(text))

    def remember_opened(self, bot_id: int, conversation_id: int | None) -> None:
        """The bot and conversation on screen: the next start opens them again."""
        db = self._context.db
        self._submit(
            "last-opened",
            "remember the conversation opened",
            lambda: db.set_last_opened(bot_id, conversation_id),
        )

    # Writes whose result is needed: in order with the others; a failure is raised ----------

    def _run(self, name: str, write: Callable[[], T]) -> T:
        done = threading.Event()
        outcome: list[T] = []
        failure: list[Exception] = []

        def job() -> None:
            try:
                outcome.append(write())
            except Exception as error:
                failure.append(error)
            finally:
                done.set()

        self._writer.submit(f"{name}:{id(done)}", job)
        done.wait()
        if failure:
            raise failure[0]
        return outcome[0]

    def create_bot(self, config: BotConfig) -> Bot:
        db = self._context.db
        return self._run("create-bot", lambda: db.create_bot(config))

    def delete_bot(self, bot_id: int) -> None:
        db = self._context.db
        self._run("delete-bot", lambda: db.delete_bot(bot_id))

    def create_conversation(self, bot_id: int, title: str) -> Conversation:
        db = self._context.db
        return self._run("create-conversation", lambda: db.create_conversation(bot_id, title))

    def add_provider(
        self,
        provider_id: str,
        *,
        name: str,
        base_url: str,
        models: tuple[str, ...] = (),
        key: KeyUse = "required",
    ) -> Provider:
        """Define an OpenAI-compatible provider in the config file; from now on it is a
        provider like the others. Raises ConfigError when it cannot be one."""
        from byok_tui.app_services.services import forget_keys_of
        from byok_tui.providers.custom import CustomDefinition, add_definition

        definition = CustomDefinition(
            id=provider_id.strip().lower(),
            base_url=base_url.strip(),
            name=name.strip(),
            models=tuple((m, m) for m in models),
            key=key,
        )
        context = self._context

        def define() -> None:
            add_definition(context.services.paths.config_file, definition)
            # Defined anew: no key set for an earlier provider of this id goes to its address.
            forget_keys_of(context.services, context.db, definition.id)

        self._run("config", define)
        self._reload_config()
        return get_provider(definition.id)

    def remove_provider(self, provider_id: str) -> None:
        """Take a provider the user defined out of the config file (its key stays stored, and
        a provider defined again under its id forgets it)."""
        from byok_tui.providers.custom import remove_definition

        path = self._context.services.paths.config_file
        self._run("config", lambda: remove_definition(path, provider_id))
        self._reload_config()

    def reload_config(self) -> None:
        """Read the config file again: a provider may have been added or removed from the
        shell while the app ran. Raises ConfigError when it is not valid."""
        self._settled()
        self._reload_config()

    def _reload_config(self) -> None:
        from byok_tui.app_services.services import reload_config

        self._context.services = reload_config(self._context.services)

    # Reads: each after the writes queued before it -----------------------------------------

    def _settled(self) -> None:
        self._writer.wait_idle()

    def chat_state(
        self, bot_id: int | None = None, conversation_id: int | None = None
    ) -> ChatState:
        self._settled()
        keys_read, self._keys_read = self._keys_read, None
        drafts_for = self.drafts.claiming_for
        return read_state(self._context, bot_id, conversation_id, keys_read, drafts_for)

    def read_ahead(self, bot_id: int, conversation_id: int) -> None:
        """Read what the bot's next send in the conversation carries, ahead of it (a local
        read, no request): that send then reads only what is added meanwhile. Only a head
        start: a read that fails here is the send's to say."""
        import sqlite3

        self._settled()
        with contextlib.suppress(ByokError, sqlite3.Error):
            config = self._context.db.bot(bot_id).config
            self._context.conversations.history(conversation_id, config)

    def key_in_use(self, bot_id: int, conversation_id: int | None = None) -> KeyInUse:
        """Which key the next message of this bot (in this conversation) uses, in words."""
        self._settled()
        try:
            bot = self._context.db.bot(bot_id)
            return key_in_use(self._context, bot, conversation_id=conversation_id)
        except ByokError as error:
            return KeyInUse(error.one_line(), found=False)

    def key_overview(self) -> KeyOverview:
        """Every provider's key state as the key store says it now (a key may have been set
        here or from another terminal)."""
        from byok_tui.core.registry import providers
        from byok_tui.keys.overview import key_overview

        self._settled()
        services = self._context.services
        return key_overview(providers(), services.keys, services.environ)

    def estimate(
        self, bot_id: int, conversation_id: int | None, draft: str, edit_of: int | None = None
    ) -> str:
        """The estimated input tokens and cost of sending `draft` now, in words (a local
        estimate: no request): the history counted is what would be sent, the newest
        messages that fit the model's context; for an edit (`edit_of`), those before the
        message edited, the branch the edit starts."""
        from byok_tui.spend.estimate import estimate

        self._settled()
        config = self._context.db.bot(bot_id).config
        history: list[str] = []
        if conversation_id:
            config = self._context.db.conversation(conversation_id).config_for(config)
            sent = self._context.conversations.history(conversation_id, config)
            history = [turn.content for turn in sent.turns]
            ids = [message.id for message in sent.messages]
            if edit_of in ids:  # what follows the message edited is not sent with the edit
                history = [m.content for m in sent.messages[: ids.index(edit_of)]]
        from byok_tui.app_services.tool_box import tools_in_estimate

        texts = [config.system_prompt, *history, draft]
        tools, said = tools_in_estimate(self._context.db.bot_tools(bot_id), config)
        return estimate(config.provider, config.model, texts, tools).line() + said

    def earlier_page(self, conversation_id: int, before: int, down_to: int = 0) -> TranscriptPage:
        """The page of messages before the message `before` in the branch on screen. With
        `down_to` (a message to show): every message from that one on, when it is at most
        REVEAL_SPAN back; else a page from it on (`later`: newer ones are not in it)."""
        from byok_tui.app_services.chat_state import PAGE, REVEAL_SPAN

        self._settled()
        branch = self._context.db.branch
        if not down_to:
            return branch.page(conversation_id, PAGE, before=before)
        page = branch.page(conversation_id, REVEAL_SPAN, before=before, down_to=down_to)
        if page.messages and page.messages[0].id == down_to:
            return page
        return branch.page_from(conversation_id, down_to, PAGE)

    def older_conversations(self, bot_id: int, after: Conversation) -> list[Conversation]:
        """The bot's next page of conversations, older than `after` (the last one listed)."""
        from byok_tui.app_services.chat_state import CONVERSATIONS_PAGE

        self._settled()
        return self._context.db.conversations(bot_id, limit=CONVERSATIONS_PAGE, after=after)

    def newest_page(self, conversation_id: int) -> TranscriptPage:
        """The newest page of the conversation's branch on screen."""
        from byok_tui.app_services.chat_state import NEWEST_PAGE

        self._settled()
        return self._context.db.branch.page(conversation_id, NEWEST_PAGE)

    def search(self, typed: str) -> list[SearchHit]:
        """Every message and title matching `typed` (words, word*, "phrases"), newest first."""
        return self._context.db.search.search(typed)

    def bot(self, bot_id: int) -> Bot:
        self._settled()
        return self._context.db.bot(bot_id)

    async def list_models(self, provider: Provider, purpose: str) -> list[ListedModel]:
        """Ask the provider for its models (with the key just typed) and cache them.
        `purpose`: why, in the request log's words (key test, probe)."""
        from byok_tui.providers.model_cache import refresh_models

        await asyncio.to_thread(self._settled)
        client, cache = self._context.client, self._context.models
        return await refresh_models(client, cache, provider, purpose=purpose)

    async def balance(self, provider: Provider) -> Balance:
        """Ask the provider what is left on the key it would be called with (one request)."""
        await asyncio.to_thread(self._settled)
        return await self._context.client.balance(provider)

    def base_url(self, provider: Provider) -> str:
        return self._context.client.base_url(provider)

    def notices(self) -> list[str]:
        """What opening the data folder found worth saying (permissions tightened)."""
        return list(self._context.db.notices)

    # Sending ----------------------------------------------------------------------------

    def send(
        self,
        bot: Bot,
        conversation: Conversation,
        outgoing: Outgoing,
        *,
        on_sent: Callable[[], None] | None = None,
        ask_user: Approve | None = None,
    ) -> AsyncGenerator[ReplyEvent, None]:
        """Store the message and stream the reply (see ConversationService.send). Call it
        with a bot read by `bot()`, which waited for the writes before it. `ask_user`: asks
        before each tool call the bot's tools may make (none is offered without it)."""
        if outgoing.toolbox is None:
            outgoing = replace(outgoing, toolbox=self._tools(bot, ask_user))
        return self._context.conversations.send(bot, conversation, outgoing, on_sent=on_sent)

    def _tools(self, bot: Bot, ask_user: Approve | None) -> ListTools | None:
        """The bot's tools, listed when the reply is about to be asked for; none without
        someone to ask before each call."""
        if ask_user is None:
            return None
        from byok_tui.app_services.tool_box import tools_asking

        return tools_asking(self._context, bot.id, self._settled, self._submit, ask_user)

    def read_attachment(self, path: Path) -> Attachment:
        """A file to attach, read and checked (in a worker thread: a file may be large)."""
        from byok_tui.core.attachments import read_attachment

        return read_attachment(path)

    def continue_reply(
        self,
        bot: Bot,
        conversation: Conversation,
        reply_id: int,
        *,
        on_sent: Callable[[], None] | None = None,
        over_budget: bool = False,
        ask_user: Approve | None = None,
    ) -> AsyncGenerator[ReplyEvent, None]:
        """Continue a reply cut short where it stopped (ConversationService.continue_reply);
        `ask_user` as for `send`."""
        return self._context.conversations.continue_reply(
            bot,
            conversation,
            reply_id,
            on_sent=on_sent,
            over_budget=over_budget,
            toolbox=self._tools(bot, ask_user),
        )

    def show_branch_of(self, message_id: int) -> None:
        """Make the conversation show a branch that holds `message_id`, if the branch on
        screen does not (a search hit on another branch)."""
        db = self._context.db
        self._run("switch", lambda: db.show_branch_of(message_id))

    def switch_alternative(self, message_id: int, step: int) -> int | None:
        """Show the alternative `step` places from this message (its branch with it); the
        alternative now shown, None when there is none that way."""
        self._settled()
        db = self._context.db
        chosen = db.sibling(message_id, step)
        if chosen is not None:
            db.switch_to(chosen)
        return chosen

    def close(self) -> None:
        """Wait for every write queued (every key typed is saved before the app goes)."""
        self._writer.shutdown()
