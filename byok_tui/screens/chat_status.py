"""What the chat screen shows of keys, providers and spend: each provider's line in the
sidebar (key state, rate limits, whether the local runtime answered), the key the next message
would use and what was spent (config pane), the empty transcript's hint, and what a read of
the chat state has to tell the user.

Storage and the network are reached only through the data service, in workers; what they find
comes back as messages (KeyInUseFound, SpendRead, LocalRuntimeChecked) that the screen hands
back here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from byok_tui.app_services.chat_state import ChatState, KeyInUse
from byok_tui.core.errors import ByokError
from byok_tui.core.key_records import KeyOverview
from byok_tui.core.registry import get_provider
from byok_tui.screens.chat_messages import KeyInUseFound, LocalRuntimeChecked, SpendRead
from byok_tui.widgets.sidebar import Sidebar
from byok_tui.widgets.transcript import EMPTY_HINT, Transcript

if TYPE_CHECKING:
    from byok_tui.screens.chat_host import ChatHost


class ChatStatus:
    def __init__(self, screen: ChatHost) -> None:
        self._screen = screen
        # Whether each local runtime answered its probe (a provider not probed is not here).
        self.local_running: dict[str, bool] = {}
        self._counting = False  # a countdown's next read is due

    def loaded(self, state: ChatState) -> None:
        """Show what a new read of the chat state says, and tell what changed on its own."""
        screen = self._screen
        self.show_providers()
        self._count_down(state.limits)
        screen.query_one(Transcript).set_empty_hint(self._empty_hint(state.key_in_use))
        if state.overview.error is not None:
            screen.notify(state.overview.error.one_line(), severity="error", timeout=15)
        if state.moved_to is not None:
            provider = get_provider(state.moved_to).display_name
            screen.notify(
                f"The Default bot now uses {provider}, the provider of the key you added."
            )
        if state.lost_provider is not None:
            now = get_provider(state.bot.config.provider).display_name
            screen.notify(
                f"The bot {state.bot.name} used the provider {state.lost_provider}, which is "
                f"not defined any more; it now uses {now}. Define it again (Settings, or "
                "`byok-tui provider add`) and choose it in the bot's settings to go back.",
                severity="warning",
                timeout=20,
            )

    def show_providers(self) -> None:
        """Each provider's key state, and what its rate limits say when it matters."""
        state = self._screen.state
        if state is not None:
            self._screen.query_one(Sidebar).show_providers(
                state.overview, state.bot.config.provider, self.local_running, state.limits
            )

    def _empty_hint(self, key: KeyInUse) -> str:
        if key.found or self._screen.state is None:
            return EMPTY_HINT
        return (
            f"{key.line} yet. Press ctrl+s to add one in Settings, or paste it in the bot's "
            "config pane (ctrl+o). Then type below and press Enter to send."
        )

    # The key in use and what was spent, read again after a reply or a key's change ---------

    def refresh(self) -> None:
        screen = self._screen
        if screen.state is None:
            return
        bot_id, config = screen.state.bot.id, screen.state.bot.config
        conversation = screen.state.conversation
        conversation_id = conversation.id if conversation is not None else None

        def read() -> None:
            key = screen.data.key_in_use(bot_id, conversation_id)
            # Every provider's row too: a key set in the pane or another terminal shows.
            overview = screen.data.key_overview()
            # A message, not call_from_thread: it is handled in order with the screen's own
            # teardown, so a line found while the app closes never meets half-removed widgets.
            screen.post_message(KeyInUseFound(key, overview))
            spend = screen.data.spending.spend(config.provider, config.model)
            screen.post_message(SpendRead(spend, screen.data.spending.limit_notes()))

        screen.run_worker(read, thread=True, exclusive=True, group="key-in-use")

    def key_in_use_found(self, key: KeyInUse, overview: KeyOverview | None = None) -> None:
        screen = self._screen
        if screen.state is not None:
            screen.state.key_in_use = key  # what the pane shows if it mounts later
            if overview is not None:
                screen.state.overview = overview
                self.show_providers()
        screen.query_one(Transcript).set_empty_hint(self._empty_hint(key))
        if screen.config_pane is not None:
            screen.config_pane.show_key_in_use(key.line)

    def spend_read(self, message: SpendRead) -> None:
        screen = self._screen
        if screen.state is not None:
            screen.state.spend = message.spend  # what the pane shows if it mounts later
            screen.state.limits = message.limits
            self.show_providers()
            self._count_down(message.limits)
        if screen.config_pane is not None:
            screen.config_pane.show_spend(message.spend)

    def _count_down(self, limits: dict[str, str]) -> None:
        """While a wait or a key's cooling is shown, read them again each second (from the
        database: no request) so that they count down and clear themselves."""
        waiting = any("wait " in note or "cooling for" in note for note in limits.values())
        key_line = self._screen.state.key_in_use.line if self._screen.state else ""
        if (waiting or "cooling for" in key_line) and not self._counting:
            self._counting = True

            def again() -> None:
                self._counting = False
                self.refresh()

            self._screen.set_timer(1.0, again)

    # The local runtime, asked once at start-up whether it runs -----------------------------

    def check_local_runtime(self) -> None:
        from byok_tui.core.registry import providers

        # Only the built-in runtime: a server the user defined is called when they use it.
        local = [p for p in providers() if not p.needs_key and not p.custom]
        if not local:
            return
        screen, runtime = self._screen, local[0]

        async def probe() -> None:
            try:
                # What it answers is what the model list offers: the models actually pulled.
                await screen.data.list_models(runtime, purpose="probe")
                running = True
            except ByokError:
                running = False
            screen.post_message(LocalRuntimeChecked(runtime.id, running))

        screen.run_worker(probe(), exclusive=True, group="local-runtime")

    def local_runtime_checked(self, message: LocalRuntimeChecked) -> None:
        screen = self._screen
        self.local_running[message.provider_id] = message.running
        self.show_providers()
        state = screen.state
        # Its model list now holds the models it has: read again if its bot is shown, or
        # may be (the first state, read before the probe answered, is still to be shown).
        shown = state is None or state.bot.config.provider == message.provider_id
        if shown and message.running:
            screen.read_again()
