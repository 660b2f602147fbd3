"""The baseline of benchmark 12: a plain-text client reading the same stream and printing each
token to its terminal as it comes, as a command-line client does. Writes the CPU seconds the
stream took (not start-up) to the file named by its second argument."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import httpx


def main() -> None:
    url, report = sys.argv[1], sys.argv[2]
    started = time.process_time()
    with httpx.Client() as client, client.stream("POST", url, json={}) as response:
        for line in response.iter_lines():
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            delta = json.loads(line[6:])["choices"][0]["delta"].get("content")
            if delta:
                sys.stdout.write(delta)
                sys.stdout.flush()
    Path(report).write_text(str(time.process_time() - started))


if __name__ == "__main__":
    main()
