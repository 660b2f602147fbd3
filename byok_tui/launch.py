"""The process's entry point (`byok-tui`, `python -m byok_tui`): what must happen before the
rest of byok-tui is imported.

The records whose modules load before the first frame (a provider and its models, a key's
state, a binding, the paths, the services) are NamedTuples rather than dataclasses: a frozen
dataclass compiles its generated methods when its class is made, ~0.5 ms a class on Python
3.11 against ~0.07 ms for a NamedTuple, and ten of them took ~7 ms of the start. Messages,
mutable state and the records of a key itself (whose repr must hide it) stay dataclasses."""

from __future__ import annotations

import sys

from byok_tui.core.startup import prepare_app


def run() -> int:
    if len(sys.argv) == 1:  # the app, prepared before anything else is imported (the app's
        prepare_app()  # options, `--log FILE`, are read first: cli prepares it then)
    from byok_tui.cli import main

    return main()
