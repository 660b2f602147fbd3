"""What the chat screen shows, read from the services in one go: runs in worker threads,
never on the UI thread. Plain data; no Textual.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import NamedTuple

from rich.text import Text

from byok_tui.app_services.services import (
    AppContext,
    default_bot,
    follow_first_key,
    starting_provider,
)
from byok_tui.core.config import ConfigError
from byok_tui.core.records import Bot, Conversation, Draft, KeyOverview, Spend, TranscriptPage
from byok_tui.core.registry import Provider, UnknownProviderError, get_provider, providers
from byok_tui.core.runs import has_ended
from byok_tui.core.sanitize import strip_terminal_controls
from byok_tui.keys import (
    KeyStore,
    KeyStoreError,
    NoApiKeyError,
    UnusableKeyError,
    entry_name,
    resolve_key,
)
from byok_tui.keys.overview import KeySnapshot, read_keys
from byok_tui.keys.resolve import NoSuchLabelError, ResolvedKey
from byok_tui.providers import endpoints
from byok_tui.spend.budgets import free_quota, period_start, standing_line, standings
from byok_tui.storage.bot_rows import NotFoundError
from byok_tui.storage.database import StorageError
from byok_tui.storage.store import Store

# Messages read when a conversation opens (or shows its newest again): its newest, a few
# screens of them (a message is two lines at least; more are read while they leave room
# above them). Each is laid out as it opens: a page of 60 made opening a 100,000-message
# conversation ~1.45x a 10-message one, 20 ~1.2x.
NEWEST_PAGE = 20
# Earlier messages read at a time as the reader scrolls up, or to fill the transcript.
PAGE = 60
# A message found this far back at most is shown with every message after it; one further
# back is shown in a page of its own, with a way back to the newest (mounting a million
# messages to reach it would freeze the screen).
REVEAL_SPAN = 600
# Conversations listed in the sidebar at first, and more each time older ones are asked for:
# a list of 10,000 took the option list ~0.8 s to measure, and reading them ~20 ms; each one
# listed costs ~0.3 ms of the opening. A bot with 10,000 opened 1.19-1.20x as slowly as one
# with 10 with 200 listed, 1.11x with 100, 1.085x with 50 (a row each; a 40-line terminal
# shows ~35 rows, a 60-line one ~55).
CONVERSATIONS_PAGE = 50


@dataclass(frozen=True, slots=True)
class KeyInUse:
    """Which key the next message uses, in words (never the key), and whether there is one."""

    line: str
    found: bool


def limit_notes(context: AppContext, now: float | None = None) -> dict[str, str]:
    """Per provider, what its latest stated rate limits say when it matters (`wait 12 s`,
    `12/60 req left`); nothing for a provider with room, or figures grown stale."""
    from byok_tui.providers.limits import RateLimits

    now = time.time() if now is None else now
    notes: dict[str, str | None] = {}
    stated = sorted(context.db.ledger.rate_limits(), key=lambda row: row[2])
    for provider, _source, seen, headers in stated:
        notes[provider] = RateLimits.stored(headers).compact(now - seen)
    # A key its answers left unusable (invalid, out of credit, cooling) is said beside them,
    # in one short note: each key said in full made a row four lines tall.
    for provider, found in context.db.key_health.all().items():
        seen_names: set[str] = set()
        unusable = []
        for health in found:  # the most recently used first: one note per key name
            if health.name in seen_names:
                continue
            seen_names.add(health.name)
            if not health.usable(now):
                unusable.append(f"{health.name} key {health.describe(now)}")
        if unusable:
            said = unusable[0] if len(unusable) == 1 else f"{len(unusable)} keys unusable"
            notes[provider] = " · ".join(n for n in (notes.get(provider), said) if n)
    return {provider: note for provider, note in notes.items() if note}


def read_spend(context: AppContext, provider_id: str, model_id: str | None = None) -> Spend:
    """What `provider_id` cost today and this month, its budgets, and (given the model) what
    is left of the model's free requests today, where the registry knows them."""
    store = context.db
    applying = standings(store, provider_id)
    quota = free_quota(store, provider_id, model_id) if model_id else None
    spent = store.ledger.provider_spend(provider_id, period_start("day"), period_start("month"))
    return Spend(
        provider_id,
        spent.today,
        spent.month,
        tuple(standing_line(standing) for standing in applying),
        any(standing.near or standing.reached for standing in applying)
        or (quota is not None and (quota.near or quota.reached)),
        spent.month_by_key,
        quota.describe() if quota is not None else None,
        quota is not None and (quota.near or quota.reached),
    )


class BotTools(NamedTuple):
    """The MCP servers configured, and those the bot may use."""

    servers: tuple[str, ...]
    """Every `[mcp.servers.NAME]` of config.toml."""
    chosen: tuple[str, ...]
    """The bot's: a server (all its tools) or `server:tool`."""
    problem: str = ""
    """Why the servers could not be read (config.toml), said where they are chosen."""


NO_TOOLS = BotTools((), ())


def bot_tools(context: AppContext, bot_id: int) -> BotTools:
    from byok_tui.tools.servers import configured_servers

    chosen = context.db.bot_tools(bot_id)
    try:
        servers = tuple(server.name for server in configured_servers(context.services.config))
    except ConfigError as error:
        return BotTools((), chosen, error.one_line())
    return BotTools(servers, chosen)


@dataclass
class ChatState:
    """Everything the screen shows, read in one go by a worker."""

    overview: KeyOverview
    bots: list[Bot]
    bot: Bot
    conversations: list[Conversation]  # the newest (CONVERSATIONS_PAGE), to the one open
    conversation: Conversation | None
    page: TranscriptPage  # the newest messages of the conversation's branch on screen
    models: list[tuple[Text, str]]
    global_key: str
    bot_key: str
    key_in_use: KeyInUse
    unsent: str  # a message sent while a conversation was opening, left by a process killed
    # The drafts of runs that have ended (by the names they are claimed under for this run,
    # so that another start at the same moment gets none of them): what their composers held
    # when they quit, or a second before they were killed. Given back once, then this run's.
    drafts_left: dict[str, Draft]
    moved_to: str | None  # the provider the Default bot just moved to, following a new key
    spend: Spend
    limits: dict[str, str]  # provider id → what its rate limits say, when it matters
    lost_provider: str | None = None  # the bot's provider, not defined any more: it moved
    spent: float = 0.0  # what the conversation's replies cost, in USD
    older_conversations: int = 0  # the bot's conversations after those in `conversations`
    tools: BotTools = NO_TOOLS


def model_choices(context: AppContext, provider_id: str) -> list[tuple[Text, str]]:
    """(label, id) for the registry's models, then those the provider's own list returned
    (Test key, `models --refresh`, Ollama's pulled models). Labels are Text: a model name
    from the network is shown as the text it is, never parsed as markup."""
    provider = get_provider(provider_id)
    choices = []
    for model in provider.models:
        notes = " (free)" if model.free and provider.needs_key else ""
        choices.append((Text(f"{model.display_name}{notes}"), model.id))
    known = {model_id for _label, model_id in choices}
    cached = context.models.get(provider_id)
    for listed in cached[1] if cached else []:
        if listed.id not in known:
            notes = " (free)" if listed.free and provider.needs_key else ""
            label = strip_terminal_controls(listed.display_name) + notes
            choices.append((Text(label), listed.id))
    return choices


def key_in_use(
    context: AppContext,
    bot: Bot,
    keys: KeyStore | None = None,
    conversation_id: int | None = None,
) -> KeyInUse:
    """`keys`: the keys as just read, by default the key store. With failover on, the key
    the conversation's next message goes with: the one that last answered it, or the first
    whose answers allow it, as a send chooses (commands not run)."""
    from byok_tui.keys.base import fingerprint
    from byok_tui.keys.resolve import BotKeyChoice

    config = bot.config
    if conversation_id:  # a compare's reply kept in it: its model, not the bot's
        config = context.db.conversation(conversation_id).config_for(bot.config)
    provider = get_provider(config.provider)
    # The bot's own key, command and label only for the bot's own provider, as a send.
    own = config.provider == bot.config.provider
    choice = BotKeyChoice(context.db.bot_key(bot.id), bot.key_command, bot.key_label)
    try:
        resolved = resolve_key(
            provider,
            keys or context.services.keys,
            bot=choice if own else BotKeyChoice(),
            environ=context.services.environ,
        )
    except NoApiKeyError:
        return KeyInUse(f"No API key for {provider.display_name}", found=False)
    except (UnusableKeyError, NoSuchLabelError) as error:
        return KeyInUse(error.message, found=False)
    except KeyStoreError as error:
        return KeyInUse(error.one_line(), found=False)
    resolved = _failover_choice(context, provider, resolved, keys, conversation_id)
    try:
        url = endpoints.base_url(provider, context.services.environ, context.services.config)
    except ConfigError as error:
        return KeyInUse(error.one_line(), found=False)
    line = resolved.describe()
    if config is not bot.config:
        line = f"{config.model} on {provider.display_name} (a compare's reply kept) · {line}"
    going_to = endpoints.destination(provider, url)
    if going_to is not None:
        line += f" → {going_to}"
    if provider.needs_key:
        # What its last answers said of it: by the key itself, or (a command's, not run
        # here) by its name.
        from byok_tui.spend.key_report import health_of

        now = time.time()
        known = fingerprint(resolved.value) if resolved.value else None
        book = context.db.key_health
        set_at = book.set_times().get((provider.id, resolved.name)) if known is None else None
        health = health_of(book.of_provider(provider.id), resolved.name, known, set_at)
        if health is not None and not health.usable(now):
            line += f" · {health.describe(now)}"
    return KeyInUse(line, found=True)


def _failover_choice(
    context: AppContext,
    provider: Provider,
    resolved: ResolvedKey,
    keys: KeyStore | None,
    conversation_id: int | None,
) -> ResolvedKey:
    """The key a send would choose with failover on (`resolved` when it is off)."""
    from byok_tui.chat.key_failover import KeyOrder
    from byok_tui.keys.index import read_index
    from byok_tui.keys.resolve import keys_of

    store = keys or context.services.keys
    if not provider.needs_key or not read_index(store).failover_on(provider.id):
        return resolved
    stay_on = context.db.last_answering_key(conversation_id) if conversation_id else None
    order = KeyOrder(
        provider,
        resolved,
        keys_of(provider, store, context.services.environ),
        context.db.key_health.of_provider(provider.id),
        stay_on=stay_on,
    )
    return next((key for key in order.keys if order.usable(key)), resolved)


def _starting_bot(context: AppContext, keys: KeyStore) -> tuple[Bot, int | None]:
    """The bot (and conversation) last opened, else the default bot and its latest."""
    store = context.db
    bot_id, conversation_id = store.last_opened()
    if bot_id is not None:
        try:
            return store.bot(bot_id), conversation_id
        except NotFoundError:
            pass  # removed since (from the shell, or another window)
    return default_bot(context.services, store, keys), None


def _with_a_known_provider(context: AppContext, bot: Bot, keys: KeyStore) -> tuple[Bot, str | None]:
    """`bot`, moved to the starting provider when its own is not defined any more (a provider
    the user defined, removed from the config file): the bot stays usable, and the screen says
    so. Returns the bot and the id of the provider it lost (None when it lost none)."""
    try:
        get_provider(bot.config.provider)
    except UnknownProviderError:
        start = starting_provider(context.services, keys)
        config = replace(bot.config, provider=start.id, model=start.default_model)
        return context.db.update_bot(bot.id, config), bot.config.provider
    return bot, None


def _with_a_known_kept_model(store: Store, conversation: Conversation) -> Conversation:
    """`conversation`, given its bot's model again when the provider of a compare's reply
    kept in it is not defined any more (as _with_a_known_provider does for a bot)."""
    provider = (conversation.continues_on or "").partition(":")[0]
    if not provider:
        return conversation
    try:
        get_provider(provider)
    except UnknownProviderError:
        store.use_bot_model(conversation.id)
        return replace(conversation, continues_on=None)
    return conversation


def read_state(
    context: AppContext,
    bot_id: int | None = None,
    conversation_id: int | None = None,
    keys_read: tuple[KeyOverview, KeySnapshot] | None = None,
    drafts_for: str | None = None,
) -> ChatState:
    """Everything the chat screen shows; `keys_read` when the keys were just read (at
    start-up): else they are read now, once for all that follows from them. `drafts_for`:
    the run whose composer is to give back the drafts of runs that have ended (claimed for
    it); None once it has.

    `bot_id` None: the bot last opened (at start-up), with the conversation last opened.
    """
    store, services = context.db, context.services
    overview, keys = keys_read or read_keys(providers(), services.keys, services.environ)
    if bot_id is None:
        bot, conversation_id = _starting_bot(context, keys)
    else:
        bot = store.bot(bot_id)
    bot, lost = _with_a_known_provider(context, bot, keys)
    followed = follow_first_key(services, store, bot, keys)
    moved_to = followed.config.provider if followed.config != bot.config else None
    bot = followed
    conversation = _conversation_of(store, bot.id, conversation_id)
    # The newest conversations, as far back as the one open; the rest are read when asked
    # for: reading 10,000 took ~20 ms of the opening thread.
    listed = CONVERSATIONS_PAGE
    if conversation is not None:
        listed = max(listed, store.conversation_count(bot.id, newer_than=conversation) + 1)
    conversations = store.conversations(bot.id, limit=listed)
    if conversation is None and conversation_id != 0 and conversations:
        conversation = conversations[0]  # the latest (also for one deleted since)
    if conversation is not None:
        conversation = _with_a_known_kept_model(store, conversation)
    global_key = ""
    if get_provider(bot.config.provider).needs_key:
        try:
            global_key = keys.get(entry_name(bot.config.provider)) or ""
        except KeyStoreError:
            global_key = ""  # the overview below carries the error to the screen
    return ChatState(
        overview=overview,
        bots=store.bots(),
        bot=bot,
        conversations=conversations,
        conversation=conversation,
        page=(
            store.branch.page(conversation.id, NEWEST_PAGE)
            if conversation
            else TranscriptPage.empty()
        ),
        spent=store.branch.spent(conversation.id) if conversation else 0.0,
        models=model_choices(context, bot.config.provider),
        global_key=global_key,
        bot_key=store.bot_key(bot.id) or "",
        key_in_use=key_in_use(context, bot, keys, conversation.id if conversation else None),
        unsent=store.unsent_message(),
        drafts_left=_drafts_left(store, drafts_for),
        moved_to=moved_to,
        lost_provider=lost,
        spend=read_spend(context, bot.config.provider, bot.config.model),
        limits=limit_notes(context),
        older_conversations=store.conversation_count(bot.id) - len(conversations),
        tools=bot_tools(context, bot.id),
    )


def _drafts_left(store: Store, run: str | None) -> dict[str, Draft]:
    if run is None:
        return {}
    try:
        return store.claim_drafts(run, has_ended)
    except StorageError:
        # The database takes no writes now (each later write says so): the drafts are given
        # back all the same, only not claimed; nothing typed is kept from its writer.
        return {name: draft for name, draft in store.drafts().items() if has_ended(name)}


def _conversation_of(store: Store, bot_id: int, conversation_id: int | None) -> Conversation | None:
    """The conversation `conversation_id` if it is the bot's and still there."""
    if not conversation_id:
        return None
    try:
        conversation = store.conversation(conversation_id)
    except NotFoundError:
        return None
    return conversation if conversation.bot_id == bot_id else None
