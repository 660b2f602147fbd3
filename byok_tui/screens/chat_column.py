"""The conversation column: transcript, activity line and composer, and everything from Enter
to the last word of the reply.

A component of the chat screen, which tells it what is open (`opening`, `opened`) and hears
back through its messages (`ConversationStarted`, `ReplyFinished`). Its transcript reads its
own pages (screens/conversation_transcript.py), its chips read the files to attach
(screens/reading_chips.py), its composer holds a message being edited. It owns the send
worker, the retry, fallback and pacing countdowns (their rules: send_schedule.py) and the
reply in progress. The worker calls the data service and relays what arrives
(screens/reply_relay.py) to the column's handlers through typed messages
(screens/chat_messages.py); only the handlers touch widgets.

Nothing the user typed is lost: a message typed while a reply is streaming goes back into the
composer; one sent while its conversation is opening is kept aside and stored there once it is
open; one that could not be saved goes back where it was typed.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from dataclasses import dataclass

from textual import work
from textual.message import Message

from byok_tui.app_services.tool_box import Decision, ToolAsk
from byok_tui.chat.outgoing import Outgoing
from byok_tui.core.attachments import AttachmentError
from byok_tui.core.errors import ByokError, ErrorKind
from byok_tui.core.records import Bot, BotConfig, Conversation
from byok_tui.core.redaction import secrets_in
from byok_tui.core.titles import title_for
from byok_tui.providers.errors import ProviderError
from byok_tui.providers.fallbacks import (
    fallback_config,
    falls_back,
    parse_fallback,
    what_happened,
)
from byok_tui.providers.types import (
    Done,
    RateLimitWait,
    ReasoningDelta,
    StreamEvent,
    TextDelta,
)
from byok_tui.screens.chat_messages import (
    ReplyDone,
    ReplyEnded,
    ReplyFailed,
    ReplyOpened,
    ToolShown,
)
from byok_tui.screens.column_base import ECHO_GRACE, Branch, ColumnBase
from byok_tui.screens.conversation_transcript import ConversationTranscript
from byok_tui.screens.dialogs import ConfirmDialog
from byok_tui.screens.reading_chips import ReadingChips
from byok_tui.screens.reply_relay import ReplyRelay
from byok_tui.screens.tool_approval import ToolApprovalDialog
from byok_tui.widgets.composer import Composer
from byok_tui.widgets.reply_stream import ReplyStream
from byok_tui.widgets.tool_call import ToolCallView
from byok_tui.widgets.transcript import Transcript


class ChatColumn(ColumnBase):
    @dataclass
    class ConversationStarted(Message):
        """The first message of a new conversation created it."""

        conversation: Conversation

    @dataclass
    class ReplyFinished(Message):
        """A reply ended, however it ended (the key may have changed meanwhile)."""

        cost_usd: float | None = None  # what it cost, when that is known
        branched: bool = False  # an edit or a regeneration: the alternatives changed

    def on_mount(self) -> None:
        self.set_interval(0.5, self._tick_activity)

    # What the screen tells the column ---------------------------------------------------

    def stop(self) -> None:
        """Stop the reply on its way, or the retry or the fallback counting down."""
        self._schedule.stop()
        if self.busy and self._send is not None:
            self._send.cancel()

    def retry(self) -> None:
        """Send the conversation's last message again (to the bot's own provider)."""
        if not self.busy and self._conversation is not None:
            self._schedule.stop()
            self._start_send(None)

    def regenerate(self, reply_id: int) -> bool:
        """Answer a stored reply's question again; the reply is kept as an alternative.
        False when a reply is on its way."""
        if self.busy or self._conversation is None:
            return False
        self._schedule.stop()
        self._branch = Branch(regenerate=reply_id)
        self._start_send(None)
        return True

    def continue_reply(self, reply_id: int) -> bool:
        """Continue a stored reply cut short, where it stopped. False when a reply is on its
        way."""
        if self.busy or self._conversation is None:
            return False
        self._schedule.stop()
        self._branch = Branch(continue_of=reply_id)
        self._start_send(None)
        return True

    # Attaching files ----------------------------------------------------------------------

    def on_reading_chips_all_read(self, message: ReadingChips.AllRead) -> None:
        message.stop()
        waiting, self._sends_waiting_for_files = self._sends_waiting_for_files, []
        for submitted in waiting:
            self.on_composer_submitted(submitted)

    # Sending ------------------------------------------------------------------------------

    def on_composer_submitted(self, message: Composer.Submitted) -> None:
        message.stop()
        if self.query_one(ReadingChips).reading:
            self._sends_waiting_for_files.append(message)
            return
        self._schedule.typed()
        if self.busy:
            self.query_one(Composer).text = message.text  # given back: never lose what was typed
            self.notify("A reply is on its way: wait, or press Escape to stop it.")
            return
        edit_of, text = self.query_one(Composer).end_edit(), message.text
        self._outgoing = self.query_one(ReadingChips).take()
        found = secrets_in(message.text)
        if not found:
            self._send_new(text, edit_of)
            return

        def decided(send_anyway: bool | None) -> None:
            if send_anyway:
                self._send_new(text, edit_of)
            else:
                self.query_one(Composer).text = text  # held, not lost
                self.query_one(ReadingChips).give_back(self._outgoing)
                self._outgoing = []

        question = (
            f"Your message contains {' and '.join(found)}. It would be sent to the model's "
            "provider and kept in its logs."
        )
        if "one of your API keys" in found:
            question += (
                " byok-tui stores it with your key replaced by [REDACTED], and later "
                "messages in this conversation send it that way."
            )
        question += " Send it anyway?"
        self.app.push_screen(ConfirmDialog(question, yes="Send anyway"), decided)

    def _send_new(self, text: str, edit_of: int | None = None) -> None:
        transcript = self.query_one(ConversationTranscript)
        if edit_of is None and not transcript.at_end:
            # A page found far back is shown: the message goes under the newest ones.
            self.opening()
            transcript.show_newest()
        # The message is drawn once its request is on the wire, or after ECHO_GRACE if that
        # takes longer: a frame drawn first would hold the request back by its length. So
        # is the rest of what Enter changed (the composer emptied, the activity line).
        self._unechoed, self._echoed_files = text, self._outgoing
        self._request_left.clear()
        self._hold_frames()
        self.set_timer(ECHO_GRACE, self._echo_grace_over)
        if not self._ready.is_set():
            # Its conversation is still being read: keep the message now, store it there
            # once it is open, so that nothing is lost if the process dies meanwhile.
            self._unsent_kept = True
            self.data.keep_unsent(text)
        self._branch = Branch(edit_of=edit_of)
        self._start_send(text)

    def _start_send(
        self, text: str | None, *, over_budget: bool = False, fallback: str | None = None
    ) -> None:
        """`fallback`: ask that one of the bot's fallbacks (`provider:model`) instead."""
        self._schedule.sending(self._clock(), fallback)
        self._stream = ReplyStream(self)  # the reply this send brings
        self._send = self._send_worker(text, over_budget, fallback)
        if self._frames_held is None:  # else once the request has left (_echo)
            self._tick_activity()  # at once, not at the next half-second tick

    @work(exclusive=True, group="send")
    async def _send_worker(
        self, text: str | None, over_budget: bool, fallback: str | None = None
    ) -> None:
        data = self.data
        branch, self._branch = self._branch, Branch()
        files, self._outgoing = (self._outgoing, []) if text is not None else ([], self._outgoing)
        replaced = branch.replaced
        if replaced is not None:  # what followed it makes way (it is kept, as a branch)
            await self.query_one(Transcript).cut_from(replaced)
        if not self._ready.is_set():
            await self._ready.wait()  # the conversation the message belongs to is opening
        target = await self._send_target(text)
        if target is None:
            self.post_message(ReplyEnded())
            return
        bot, conversation = target
        stopped = False
        relay = ReplyRelay(
            self._stream,
            post=self.post_message,
            echo=self._on_wire,
            forward=self._forward,
            continuing=branch.continue_of is not None,
        )
        ask_user = functools.partial(self._ask_tool, bot.name)
        try:
            config = (
                fallback_config(bot.config, parse_fallback(fallback))
                if fallback
                else self._kept_model(bot, conversation)
            )
            if branch.continue_of is not None:
                sending = data.continue_reply(
                    bot,
                    conversation,
                    branch.continue_of,
                    on_sent=relay.sent,
                    over_budget=over_budget,
                    ask_user=ask_user,
                )
            else:
                outgoing = Outgoing(
                    text,
                    tuple(files),
                    config=config,
                    fallback=fallback is not None,
                    edit_of=branch.edit_of,
                    regenerate=branch.regenerate,
                    over_budget=over_budget,
                )
                sending = data.send(
                    bot, conversation, outgoing, on_sent=relay.sent, ask_user=ask_user
                )
            self._branched = self._branched or replaced is not None
            # Closed however this ends, even cancelled while the screen (not the stream) is
            # waiting: closing is what saves the text received so far.
            async with contextlib.aclosing(sending):
                async for event in sending:
                    if self._unsent_kept:
                        self._forget_unsent()  # stored in its conversation now
                    await relay.relay(event)
        except ByokError as error:
            if error.kind is ErrorKind.STORAGE or isinstance(error, AttachmentError):
                # The message may not be stored (a file refused: it is not): give it back.
                self.post_message(ReplyFailed(error, unsent=text, files=files))
            else:
                if self._unsent_kept:
                    self._forget_unsent()  # stored before the error (e.g. no API key)
                if branch.continue_of is not None:  # continued again, by the user's choice
                    self.post_message(ReplyFailed(error, continue_of=branch.continue_of))
                else:
                    self.post_message(self._failed(error, bot.config, fallback, relay.arrived))
        except asyncio.CancelledError:
            stopped = not relay.ended  # after its end only the reading after it was stopped
            raise
        finally:
            self.post_message(ReplyEnded(stopped))

    @staticmethod
    def _kept_model(bot: Bot, conversation: Conversation) -> BotConfig | None:
        """The provider and model of a compare's reply kept in this conversation (its next
        messages go to them; the bot's own setting is unchanged), or None: the bot's."""
        return conversation.config_for(bot.config) if conversation.continues_on else None

    async def target_for(self, text: str) -> tuple[Bot, Conversation] | None:
        """The bot and conversation a message goes to (see _send_target): for a compare."""
        return await self._send_target(text)

    async def _send_target(self, text: str | None) -> tuple[Bot, Conversation] | None:
        """The bot, read after the writes before it (a key typed just now is the key sent),
        and the conversation, made now for the first message of a new one. None when there
        is none (ReplyFailed is posted: the message goes back to the composer)."""
        if self._bot_id is None:  # none could be opened (the error was shown)
            error = ByokError(
                "The message was not sent: no conversation could be opened",
                remedy="It is back in the composer; send it again once the error above is mended.",
            )
            self.post_message(ReplyFailed(error, unsent=text))
            return None
        try:
            bot = await asyncio.to_thread(self.data.bot, self._bot_id)
            conversation = self._conversation
            if conversation is None:
                title = title_for(text)
                conversation = await asyncio.to_thread(self.data.create_conversation, bot.id, title)
                self._conversation = conversation
                self.post_message(self.ConversationStarted(conversation))
        except ByokError as error:  # nothing was stored: the message goes back to the composer
            self.post_message(ReplyFailed(error, unsent=text))
            return None
        return bot, conversation

    async def _ask_tool(self, bot_name: str, ask: ToolAsk) -> Decision:
        """Ask the user before a tool runs (the reply waits meanwhile)."""
        decided: asyncio.Future[Decision] = asyncio.get_running_loop().create_future()

        def answered(decision: Decision | None) -> None:
            if not decided.done():
                decided.set_result(decision or "deny")

        self.app.push_screen(ToolApprovalDialog(ask, bot_name), answered)
        return await decided

    def on_tool_shown(self, message: ToolShown) -> None:
        message.stop()
        self._echo()
        view = ToolCallView(message.name, message.arguments, message.result, error=message.error)
        self.query_one(Transcript).add_widget_before(view, self._stream.view)

    @staticmethod
    def _failed(
        error: ByokError, config: BotConfig, asked: str | None, arrived: bool
    ) -> ReplyFailed:
        """What the failure of a send asking `asked` (None: the bot's own provider) means:
        with the bot's next fallback, when one may answer instead."""
        order = list(config.fallbacks)
        after = order.index(asked) + 1 if asked in order else 0
        if after >= len(order) or not falls_back(error, text_arrived=arrived):
            return ReplyFailed(error)
        provider = asked.partition(":")[0] if asked else config.provider
        return ReplyFailed(
            error, fallback_what=what_happened(provider, error), fallback_to=order[after]
        )

    def _forward(self, stream: ReplyStream, event: StreamEvent) -> None:
        """Text and reasoning into the reply `stream`; a provider's pacing, and the end."""
        if isinstance(event, RateLimitWait):
            self._schedule.pacing(self._clock(), event.seconds)  # the activity line counts down
            return
        now = self._clock()
        self._schedule.pacing(now, None)
        if isinstance(event, TextDelta):
            self._words_at = now
            stream.write_text(event.text)
        elif isinstance(event, ReasoningDelta):
            self._words_at = now
            stream.write_reasoning(event.text)
        elif isinstance(event, Done):
            self.post_message(ReplyDone(event.at_length_limit))

    # The reply on screen --------------------------------------------------------------------

    def on_reply_opened(self, message: ReplyOpened) -> None:
        self._echo()
        transcript = self.query_one(Transcript)
        view = None
        if message.continued is not None and message.reply_id is not None:
            view = transcript.resume_reply(message.reply_id, message.meta, message.continued)
        else:
            transcript.identify_question(message.question_id)
        self._stream.show_in(view or transcript.start_reply(message.meta, message.reply_id))

    async def on_reply_failed(self, message: ReplyFailed) -> None:
        self._echo()  # the message first, then what became of it
        error = message.error
        composer = self.query_one(Composer)
        if message.unsent and not composer.text:
            composer.text = message.unsent  # it could not be saved: keep it where it was typed
        if message.unsent:
            await self.query_one(Transcript).take_back_unsent()  # drawn as sent, and it was not
        if message.files:
            self.query_one(ReadingChips).give_back(message.files)
        self._stream.flush(final=True)  # what arrived before the error is shown
        reply = self._stream.view
        if reply is not None and not (reply.content or reply.reasoning):
            if message.continue_of is not None:
                reply.offer_to_continue(True)  # what it had is still there to continue
            else:
                await reply.remove()  # nothing arrived: the error block says it all
        elif reply is not None:
            reply.mark_stopped("cut off")
        said = error.provider_message if isinstance(error, ProviderError) else None
        retry = "" if error.kind is ErrorKind.BUDGET else " Press ctrl+r to retry."
        if message.continue_of is not None or (reply is not None and reply.content):
            retry = " Press c on the reply to continue it."
        self.query_one(Transcript).add_error(error.message, f"{error.remedy}{retry}", said)
        if error.kind is ErrorKind.BUDGET:
            self._offer_to_go_over_budget(error.message, message.continue_of)
        if message.continue_of is not None:
            return  # continued again only when the user asks (c): never a fallback's answer
        # Another provider may answer, or the provider's own wait be waited out: the activity
        # line counts down, and the user may stay (Escape).
        self._schedule.failed(error, self._clock(), message.fallback_to, message.fallback_what)

    def _offer_to_go_over_budget(self, reached: str, continue_of: int | None = None) -> None:
        """A one-off choice: the message (or the reply to continue) waits, stored, until the
        user decides."""

        def decided(send_anyway: bool | None) -> None:
            if send_anyway and not self.busy and self._conversation is not None:
                self._branch = Branch(continue_of=continue_of)
                self._start_send(None, over_budget=True)

        what = "message" if continue_of is None else "continuation"
        question = f"{reached}. Send this {what} anyway, this once?"
        self.app.push_screen(ConfirmDialog(question, yes="Send anyway"), decided)

    def on_reply_ended(self, message: ReplyEnded) -> None:
        self._request_left.set()
        self._echo()
        self._stream.flush(final=True)  # what arrived before the end is shown
        reply = self._stream.view
        if reply is not None and message.stopped:
            reply.mark_stopped()
        if reply is not None and reply.message_id is not None and reply.is_attached:
            reply.show_code_copies()  # whole now: its code blocks are final
        self._schedule.ended()
        self._tick_activity()
        self.post_message(self.ReplyFinished(self._billed, self._branched))
        self._billed, self._branched = None, False

    # The estimate of what the draft would cost ------------------------------------------------

    # The activity line ----------------------------------------------------------------------

    def _tick_activity(self) -> None:
        """A retry or a fallback whose countdown is over is sent; else the line is drawn."""
        if not self.busy and (again := self._schedule.due(self._clock())) is not None:
            self._start_send(None, fallback=again.fallback)
            return
        super()._tick_activity()
