"""Providers the user defines (any OpenAI-compatible server): defined with `provider add` in the
config file, called like any provider, and given only their own key: never another provider's
global, labelled, per-bot or environment key, and no Authorization header at all when they
take none."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from byok_tui.core.config import ConfigError, load_config
from byok_tui.core.paths import app_paths
from byok_tui.core.registry import builtin_providers, key_providers
from byok_tui.keys import entry_name, open_key_store
from byok_tui.providers.custom import definitions
from tests.support.cli import run_cli
from tests.support.provider_server import ProviderServer, Reply, openai_reply

OWN_KEY = "mine-" + "Q" * 40


def every_other_key() -> dict[str, str]:
    """A stored default key, a labelled key and an environment key for every built-in
    provider that takes one; the environment to run with."""
    store = open_key_store(app_paths())
    environ: dict[str, str] = {}
    for provider in key_providers():
        store.set(entry_name(provider.id), f"stored-{provider.id}-" + "x" * 30)
        for variable in provider.env_vars:
            environ[variable] = f"env-{provider.id}-" + "y" * 30
    assert run_cli("keys", "set", "openai", "--label", "work", stdin="sk-work-" + "w" * 40)
    return environ


def sent_anything_of(server: ProviderServer, *pieces: str) -> list[str]:
    """The pieces found anywhere in what the server received: target, headers or body."""
    found = []
    for seen in server.requests:
        text = seen.target + repr(seen.headers) + seen.body.decode()
        found += [piece for piece in pieces if piece in text]
    return found


def add(server: ProviderServer, *extra: str, provider_id: str = "mine") -> None:
    result = run_cli("provider", "add", provider_id, "--base-url", f"{server.base_url}/v1", *extra)
    assert result.returncode == 0, result.stderr


def test_provider_add_writes_the_config_file_and_list_and_rm_follow() -> None:
    config = app_paths().config_file
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text('# my settings\n[providers.openai]\nbase_url = "https://gw.corp/v1"\n')
    added = run_cli(
        "provider", "add", "together", "--base-url", "https://api.together.xyz/v1",
        "--name", "Together", "--model", "meta-llama/Llama-3.3-70B-Instruct-Turbo",
    )  # fmt: skip
    assert added.returncode == 0, added.stderr
    assert "byok-tui keys set together" in added.stdout
    text = config.read_text()
    assert text.startswith("# my settings\n[providers.openai]")  # the user's lines are kept
    (definition,) = definitions(load_config(config))
    assert (definition.id, definition.name, definition.key) == ("together", "Together", "required")
    assert definition.models == (("meta-llama/Llama-3.3-70B-Instruct-Turbo",) * 2,)
    listed = run_cli("provider", "list")
    assert "together\tTogether\thttps://api.together.xyz/v1" in listed.stdout
    keys = run_cli("keys", "list").stdout
    assert "together" in keys or "Together" in keys
    removed = run_cli("provider", "rm", "together")
    assert removed.returncode == 0, removed.stderr
    assert definitions(load_config(config)) == ()
    assert "# my settings" in config.read_text() and "gw.corp" in config.read_text()
    assert run_cli("provider", "rm", "together").returncode == 1


@pytest.mark.parametrize(
    ("arguments", "words"),
    [
        (("openai", "--base-url", "https://x.example/v1"), "is a built-in provider"),
        (("Bad:Id", "--base-url", "https://x.example/v1"), "is not a provider id"),
        (("lan", "--base-url", "http://192.168.1.5/v1"), "plain http to 192.168.1.5"),
        (("lan", "--base-url", "https://u:p@x.example/v1"), "may not carry credentials"),
        (("lan", "--base-url", "ftp://x.example"), "is not an http(s) address"),
    ],
)
def test_a_definition_that_could_misroute_a_key_is_refused(
    arguments: tuple[str, ...], words: str
) -> None:
    result = run_cli("provider", "add", *arguments)
    assert result.returncode == 2  # the arguments are wrong, not a file
    assert words in result.stderr
    assert "config.toml" not in result.stderr and "Fix the setting" not in result.stderr
    assert "--base-url" in result.stderr or "ID " in result.stderr  # the option is named
    assert not app_paths().config_file.exists()


def test_a_key_less_server_may_be_plain_http_on_the_network() -> None:
    result = run_cli("provider", "add", "lan", "--base-url", "http://192.168.1.5/v1", "--no-key")
    assert result.returncode == 0, result.stderr
    assert "no Authorization header" in result.stdout


def test_a_table_for_an_unknown_provider_without_kind_is_an_error_not_ignored() -> None:
    config = app_paths().config_file
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text('[providers.opneai]\nbase_url = "https://x.example/v1"\n')
    with pytest.raises(ConfigError, match="opneai is not a built-in provider"):
        definitions(load_config(config))
    result = run_cli("ask", "-p", "groq", "hi")
    assert result.returncode == 1 and "opneai is not a built-in provider" in result.stderr


def test_a_custom_provider_receives_its_own_key_and_no_other(server: ProviderServer) -> None:
    environ = every_other_key()
    add(server, "--model", "qwen-7b")
    server.reply_with(openai_reply("Hello from mine"))
    refused = run_cli("ask", "-p", "mine", "hi", env=environ)
    assert refused.returncode == 3  # its key is required, and it has none
    assert "No API key for mine" in refused.stderr
    assert "`byok-tui keys set mine`, or Settings > API Keys." in refused.stderr  # no "or ."
    assert server.requests == []
    assert run_cli("keys", "set", "mine", stdin=OWN_KEY).returncode == 0
    result = run_cli("ask", "-p", "mine", "hi", env=environ)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Hello from mine\n"
    (seen,) = server.requests
    assert seen.target == "/v1/chat/completions"
    assert seen.header("authorization") == f"Bearer {OWN_KEY}"
    assert seen.json["model"] == "qwen-7b"
    others = [f"stored-{p.id}-" for p in builtin_providers()] + ["env-", "sk-work-"]
    assert sent_anything_of(server, *others) == []


def test_a_bot_moved_to_a_custom_provider_does_not_send_its_per_bot_key(
    server: ProviderServer,
) -> None:
    environ = every_other_key()
    add(server, "--model", "qwen-7b", "--optional-key")
    assert run_cli("bot", "add", "Coder", "-p", "openai", "-m", "gpt-5.5").returncode == 0
    per_bot = "sk-proj-" + "B" * 40
    assert run_cli("bot", "key", "Coder", stdin=per_bot).returncode == 0
    server.reply_with(openai_reply("ok"))
    result = run_cli("ask", "--bot", "Coder", "-p", "mine", "hi", env=environ)
    assert result.returncode == 0, result.stderr
    (seen,) = server.requests
    assert seen.header("authorization") is None  # optional, and it has none of its own
    assert sent_anything_of(server, per_bot, "stored-", "env-", "sk-work-") == []


def test_a_key_less_server_gets_no_authorization_header(server: ProviderServer) -> None:
    environ = every_other_key()
    add(server, "--no-key", "--model", "local-model")
    server.reply_with(
        Reply(
            200,
            {"content-type": "application/json"},
            [b'{"object":"list","data":[{"id":"served-model","object":"model"}]}'],
        )
    )
    models = run_cli("models", "-p", "mine", "--refresh", env=environ)
    assert models.returncode == 0, models.stderr
    assert "served-model" in models.stdout and "local-model" in models.stdout
    server.reply_with(openai_reply("ok"))
    result = run_cli("ask", "-p", "mine", "-m", "served-model", "hi", env=environ)
    assert result.returncode == 0, result.stderr
    assert [seen.target for seen in server.requests] == ["/v1/models", "/v1/chat/completions"]
    assert all(seen.header("authorization") is None for seen in server.requests)
    assert sent_anything_of(server, "stored-", "env-", "sk-work-") == []


def test_an_optional_key_is_sent_once_it_is_set(server: ProviderServer) -> None:
    add(server, "--optional-key", "--model", "m")
    server.reply_with(openai_reply("ok"))
    assert run_cli("ask", "-p", "mine", "hi").returncode == 0
    assert run_cli("keys", "set", "mine", stdin=OWN_KEY).returncode == 0
    assert run_cli("ask", "-p", "mine", "hi").returncode == 0
    sent = [seen.header("authorization") for seen in server.requests]
    assert sent == [None, f"Bearer {OWN_KEY}"]


def test_models_takes_the_provider_as_an_argument_as_the_hints_say(
    server: ProviderServer,
) -> None:
    add(server, "--no-key")
    server.reply_with(
        Reply(200, {"content-type": "application/json"}, [b'{"object":"list","data":[]}'])
    )
    listed = run_cli("models", "mine", "--refresh")
    assert listed.returncode == 0, listed.stderr
    assert [seen.target for seen in server.requests] == ["/v1/models"]
    both = run_cli("models", "mine", "-p", "groq")
    assert both.returncode == 2 and "two providers named" in both.stderr


def test_ask_without_a_model_for_a_provider_with_none_says_how_to_find_one(
    server: ProviderServer,
) -> None:
    add(server, "--no-key")
    result = run_cli("ask", "-p", "mine", "hi")
    assert result.returncode == 2
    assert "byok-tui models mine --refresh" in result.stderr
    assert server.requests == []


def elsewhere(tmp_path: Path) -> dict[str, str]:
    """The environment of another machine: its own home and keyring."""
    return {
        "BYOK_TUI_HOME": str(tmp_path / "other-home"),
        "BYOK_TEST_KEYRING_FILE": str(tmp_path / "other-keyring.json"),
    }


def test_an_export_carries_the_definition_never_its_key_and_import_defines_it(
    tmp_path: Path, server: ProviderServer
) -> None:
    add(server, "--model", "m1", "--name", "Mine")
    assert run_cli("keys", "set", "mine", stdin=OWN_KEY).returncode == 0
    assert run_cli("bot", "add", "Local", "-p", "mine", "-m", "m1").returncode == 0
    exported = tmp_path / "export.json"
    assert run_cli("export", str(exported)).returncode == 0
    document = json.loads(exported.read_text())
    assert document["providers"] == {
        "mine": {
            "kind": "openai-compatible",
            "name": "Mine",
            "base_url": f"{server.base_url}/v1",
            "models": ["m1"],
            "key": "required",
        }
    }
    assert OWN_KEY not in exported.read_text()

    other = elsewhere(tmp_path)
    first = run_cli("import", str(exported), env=other)
    assert first.returncode == 0, first.stderr
    assert f"Defined the provider mine at {server.base_url}/v1" in first.stdout
    assert "mine" in run_cli("provider", "list", env=other).stdout
    assert "Local" in run_cli("bot", "list", env=other).stdout
    again = run_cli("import", str(exported), env=other)
    assert again.returncode == 0 and "Defined" not in again.stdout
    assert "Imported 0 bots, 0 conversations" in again.stdout
    refused = run_cli("ask", "-p", "mine", "hi", env=other)
    assert refused.returncode == 3  # no key came with it
    assert server.requests == []


def test_an_import_never_points_a_stored_key_at_an_address_from_the_file(
    tmp_path: Path, server: ProviderServer
) -> None:
    add(server, "--model", "m1")
    exported = tmp_path / "export.json"
    assert run_cli("export", str(exported)).returncode == 0
    other = elsewhere(tmp_path)
    config = Path(other["BYOK_TUI_HOME"]) / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(
        '[providers.mine]\nkind = "openai-compatible"\nbase_url = "https://mine.example/v1"\n'
    )
    assert run_cli("keys", "set", "mine", stdin=OWN_KEY, env=other).returncode == 0
    assert run_cli("provider", "rm", "mine", env=other).returncode == 0  # its key stays
    result = run_cli("import", str(exported), env=other)
    assert result.returncode == 0, result.stderr
    assert "not defined: mine" in result.stderr and "(the stored key)" in result.stderr
    assert "mine" not in run_cli("provider", "list", env=other).stdout


def test_a_share_link_naming_a_provider_not_defined_here_says_so(server: ProviderServer) -> None:
    add(server, "--model", "m1")
    assert run_cli("bot", "add", "Local", "-p", "mine", "-m", "m1").returncode == 0
    link = run_cli("bot", "share", "Local").stdout.strip()
    assert run_cli("provider", "rm", "mine").returncode == 0
    listed = run_cli("bot", "list")  # the bot on it is listed, not a crash
    assert listed.returncode == 0 and "provider not defined" in listed.stdout
    asked = run_cli("ask", "--bot", "Local", "hi")
    assert asked.returncode == 2 and "unknown provider 'mine'" in asked.stderr
    refused = run_cli("bot", "import", link)
    assert refused.returncode == 2
    assert "unknown provider 'mine': if the sender defined it" in refused.stderr
    assert "byok-tui provider add mine --base-url URL" in refused.stderr
    add(server, "--model", "m1")
    assert run_cli("bot", "import", link).returncode == 0


def test_a_key_less_provider_of_your_own_is_no_key_not_a_local_runtime(
    server: ProviderServer,
) -> None:
    """`--no-key` is allowed for a remote https gateway too: such a provider is 'no key'
    wherever its key is named, never 'local runtime' (and it is not priced as free)."""
    add(server, "--no-key", "--model", "m")
    server.reply_with(openai_reply("ok"))
    assert run_cli("ask", "-p", "mine", "hi").returncode == 0
    assert server.requests[0].header("authorization") is None
    (logged,) = [
        r for r in json.loads(run_cli("requests", "--json").stdout) if r["provider"] == "mine"
    ]
    assert logged["key_source"] == "no key"
    listed = [line for line in run_cli("keys", "list").stdout.splitlines() if "mine" in line]
    assert listed and all("local runtime" not in line for line in listed), listed
    by_key = json.loads(run_cli("usage", "--by", "key", "--json").stdout)
    assert [row["key"] for row in by_key] == ["no key"], by_key
