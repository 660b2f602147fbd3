"""What a compare needs of the database: the targets a bot compared last (remembered per
bot), where the conversation stood before it, the message its first target stored, and the
reply the user keeps. Blocking: run in worker threads."""

from __future__ import annotations

from byok_tui.app_services.data_part import DataPart

_TARGETS = "compare.targets.{bot_id}"


class CompareData(DataPart):
    def targets(self, bot_id: int) -> str:
        """The targets the bot compared last (`P:M, P:M`), or "" for none yet."""
        self._settled()
        return self._context.db.settings().get(_TARGETS.format(bot_id=bot_id), "")

    def remember_targets(self, bot_id: int, targets: str) -> None:
        db = self._context.db
        name = _TARGETS.format(bot_id=bot_id)
        self._submit(name, "remember the compare's targets", lambda: db.set_setting(name, targets))

    def newest_id(self, conversation_id: int) -> int:
        """The conversation's newest message (0: none): the message stored after it is the
        compare's."""
        self._settled()
        return self._context.db.branch.newest_id(conversation_id)

    def prompt_stored(self, conversation_id: int, before: int) -> int:
        """The message the first target stored (chat/compare.py `prompt_stored`)."""
        from byok_tui.chat.compare import prompt_stored

        return prompt_stored(self._context.db, conversation_id, before)

    def keep(self, reply_id: int) -> None:
        """Show the branch that ends with this reply: the conversation goes on from it, with
        its model (the bot's own is unchanged); the other replies stay its alternatives."""
        db = self._context.db
        self._run("switch", lambda: db.switch_to(reply_id, keep_its_model=True))

    def use_bot_model(self, conversation_id: int) -> None:
        """The conversation's next messages go to its bot's own model again."""
        db = self._context.db
        self._submit(
            f"continues-on:{conversation_id}",
            "go back to the bot's model",
            lambda: db.use_bot_model(conversation_id),
        )
