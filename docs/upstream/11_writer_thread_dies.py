"""WriterThread: after one failed write, every later write blocks for ever.

Textual's writer thread ends at the first write that raises (a terminal gone: EIO). The
app's writes then fill its queue (`MAX_QUEUED_WRITES`, 30) and the next one waits for room
for ever, in the event loop: the app can neither quit nor save anything.

Run: python 11_writer_thread_dies.py (plain Textual 8.2.8; no byok-tui).
Prints REPRODUCED when a write after the failure is still blocked after 2 s.
"""

import errno
import io
import threading

from textual.drivers._writer_thread import MAX_QUEUED_WRITES, WriterThread


class GoneTerminal(io.StringIO):
    def write(self, text: str) -> int:
        raise OSError(errno.EIO, "Input/output error")


def main() -> str:
    writer = WriterThread(GoneTerminal())
    writer.start()
    writer.write("the first frame")  # fails: the thread ends
    writer.join(2)
    done = threading.Event()

    def later_frames() -> None:
        for number in range(MAX_QUEUED_WRITES + 2):
            writer.write(f"frame {number}")
        done.set()

    threading.Thread(target=later_frames, daemon=True).start()
    if not done.wait(2):
        alive = "alive" if writer.is_alive() else "dead"
        return f"REPRODUCED: writer thread {alive}, a write blocked with its queue full"
    return "NOT REPRODUCED: later writes returned"


if __name__ == "__main__":
    print(main())
