"""Local data: bots, conversations and messages in SQLite (the seed's IndexedDB).

Never imports Textual. The per-bot key lives in the bot's `k` column (seed 2.2) and nowhere
else: never in exports, share links or logs.
"""
