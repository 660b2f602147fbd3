"""Models discovered from providers' model lists, cached in the data folder.

The cache holds model ids and names only: never a key, never a URL with one.
"""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
import time
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from byok_tui.core.paths import ensure_private_dir, read_bounded
from byok_tui.providers.types import ListedModel

if TYPE_CHECKING:
    from byok_tui.core.registry import Provider
    from byok_tui.providers.client import ProviderClient

CACHE_VERSION = 1


# Every provider's list, OpenRouter's hundreds of models included, is far below this.
LARGEST_CACHE = 64 * 1024 * 1024


class ModelCache:
    def __init__(self, path: Path) -> None:
        self.path = path

    def _load(self) -> dict[str, Any]:
        try:
            data = json.loads(read_bounded(self.path, LARGEST_CACHE).decode("utf-8"))
        except (OSError, ValueError):
            return {}  # a missing or damaged cache is only a cache: rebuilt on next refresh
        if not isinstance(data, dict) or data.get("version") != CACHE_VERSION:
            return {}
        providers = data.get("providers")
        return providers if isinstance(providers, dict) else {}

    def get(self, provider_id: str) -> tuple[float, list[ListedModel]] | None:
        entry = self._load().get(provider_id)
        if not isinstance(entry, dict):
            return None
        models = []
        for raw in entry.get("models") or []:
            try:
                models.append(ListedModel(**raw))
            except TypeError:
                continue
        return float(entry.get("fetched_at") or 0), models

    def context_of(self, provider: Provider, model_id: str) -> int | None:
        """The context window the provider's model list last stated for `model_id`."""
        found = self.get(provider.id)
        listed = next((m for m in found[1] if m.id == model_id), None) if found else None
        return listed.context_length if listed is not None else None

    def put(self, provider_id: str, models: list[ListedModel]) -> None:
        providers = self._load()
        providers[provider_id] = {
            "fetched_at": time.time(),
            "models": [asdict(m) for m in models],
        }
        payload = json.dumps({"version": CACHE_VERSION, "providers": providers}, indent=1)
        ensure_private_dir(self.path.parent)
        fd, temp = tempfile.mkstemp(prefix=".models-", dir=self.path.parent)
        with os.fdopen(fd, "w", encoding="utf-8") as file:
            file.write(payload)
        Path(temp).replace(self.path)


async def refresh_models(
    client: ProviderClient, cache: ModelCache, provider: Provider, *, purpose: str = "models"
) -> list[ListedModel]:
    """Ask the provider for its model list now (one request) and keep the answer, so that
    every model list offers what the provider said it has."""
    found = await client.list_models(provider, purpose=purpose)
    await asyncio.to_thread(cache.put, provider.id, found)
    return found
