"""Tools through MCP servers: the servers the user configured (`servers`), and talking to one
through the official SDK (`client`), which is loaded only when a server is first used.

No key reaches a tool server unless its own config names it (`{key:PROVIDER}`); what a server
says is outside text. May import `core/`, `keys/` and `providers/` (the tool types); never
`storage/`, `chat/`, the app services or Textual.
"""
