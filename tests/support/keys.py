"""Realistic-looking (but fake) keys, one per provider shape, for tests."""

from __future__ import annotations

FAKE_KEYS: dict[str, str] = {
    "anthropic": "sk-ant-api03-" + "A1b2C3d4E5f6" * 7 + "xYz-AA",
    "openai": "sk-proj-" + "Q9w8E7r6T5y4" * 12,
    "xai": "xai-" + "K3y5F0rGr0k" * 7 + "abc",
    "google": "AIzaSy" + "D3m0K3yF0rG3m1n1Tw0Th1" + "rt33n",
    "openrouter": "sk-or-v1-" + "0123456789abcdef" * 4,
    "deepseek": "sk-" + "0123456789abcdef" * 2,
    "groq": "gsk_" + "G7r0qK3y" * 6 + "ABCD",
    "mistral": "M1str4lK3yW1th32Ch4rs0000000AbCd",
}

PER_BOT_KEY = "sk-proj-PERBOT" + "z" * 60
ENV_KEY = "sk-proj-FROMENV" + "e" * 60
