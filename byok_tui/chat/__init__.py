"""Sending a message and keeping its reply: the conversation service (`conversation`), what
a send carries of the conversation (`context_window`, `history`), how a streamed reply is
stored as it comes (`reply_recorder`), when a send may go and where it falls back to
(`send_schedule`), and which labelled key answers next (`key_failover`).

May import `core/`, `keys/`, `providers/`, `storage/` and `spend/`; never Textual, never the
app services or the UI.
"""
