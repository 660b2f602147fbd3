"""What the screens and the shell talk to: `services` opens the key store, the database and
the provider client; `app_data` (with its parts `key_data`, `spend_data`, `draft_data`) is
the UI's one way to all of it, every write queued on one writer and every failed write shown;
`chat_state` reads what the chat screen shows.

May import every domain package and the layers under them; never Textual, never the UI.
"""
