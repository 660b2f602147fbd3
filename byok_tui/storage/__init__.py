"""Local data: bots, conversations and messages in SQLite.

Never imports Textual. The per-bot key lives in the bot's `k` column and nowhere else: never in
exports, share links or logs.
"""
