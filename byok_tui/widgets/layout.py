"""Layout behaviour shared by the transcript's widgets."""

from __future__ import annotations

from textual.geometry import Size
from textual.reactive import Reactive


def virtual_size_set_by_layout() -> Reactive[Size]:
    """A `virtual_size` that does not ask for another layout when it changes.

    Textual lays a widget out again whenever its virtual size changes, and it is the layout
    that changes it: each frame in which a streaming reply grew was laid out twice, the second
    time finding nothing new (~10 ms a frame, and the first words were drawn ~10 ms later).
    Only for widgets whose virtual size comes from the layout alone: containers and
    auto-height text, never a ScrollView that sets its own.
    """
    return Reactive(Size(0, 0), layout=False, repaint=False)
