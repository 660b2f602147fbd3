"""The environment a child process (an editor, a pager) gets: without any provider's key.

Removes every provider key variable named in the registry, and any other variable whose value
is one of the user's keys or is shaped like a provider key. Never imports Textual.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from byok_tui.core.redaction import redact
from byok_tui.core.registry import key_providers


def child_environment(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    env = os.environ if environ is None else environ
    named = {variable for p in key_providers() for variable in p.env_vars}
    return {
        name: value for name, value in env.items() if name not in named and redact(value) == value
    }
