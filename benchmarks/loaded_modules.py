"""Runs byok-tui as `python -m byok_tui` does, and writes the names of the modules it has
loaded to the file named by its first argument once a file of the same name with `.now`
added appears (the benchmark creates it when it reads the app's memory). Benchmark 6's
floor: the libraries among them, loaded in the minimal app (minimal_app.py --libraries)."""

from __future__ import annotations

import runpy
import sys
import threading
import time
from pathlib import Path


def write_when_asked(report: Path) -> None:
    asked = report.with_name(report.name + ".now")
    while not asked.exists():
        time.sleep(0.05)
    written = report.with_name(report.name + ".part")
    written.write_text("\n".join(sorted(sys.modules)))
    written.rename(report)  # whole when it appears: the benchmark waits for the name


def main() -> None:
    report = Path(sys.argv[1])
    del sys.argv[1:]  # the app as started with no arguments
    threading.Thread(target=write_when_asked, args=(report,), daemon=True).start()
    runpy.run_module("byok_tui", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
