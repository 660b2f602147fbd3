"""Local data: bots, conversations and messages in SQLite, their search index, the request
ledger, exports and imports (JSON, Markdown, share links, other clients' files).

May import `core/` and `providers/` (the usage and requests it keeps are theirs); never
`keys/`, the domain packages or Textual. The per-bot key lives in the bot's `k` column and
nowhere else: never in exports, share links or logs.
"""
