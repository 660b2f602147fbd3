"""`ask --compare`: one prompt to several models at once, against a loopback server that
answers each model its own way (one slow, one refusing with 429, one fine): every reply is
printed whole under a header line with its figures, in the order they finish; --json prints
one object a target; the exit status is 0 when any answered; the replies are kept as
alternatives of one another; each request carries the same history; a budget blocks its
own target only."""

from __future__ import annotations

import json
from typing import Any

from byok_tui.core.paths import app_paths
from byok_tui.keys import entry_name, open_key_store
from byok_tui.storage.store import Store
from tests.support.cli import run_cli
from tests.support.provider_server import ProviderServer, Reply, Seen, provider_server, sse

KEYS = {
    "openai": "sk-proj-" + "C" * 60,
    "groq": "gsk_" + "C" * 52,
    "mistral": "M" * 32,
}
SLOW, LIMITED, FINE = (
    "openai:gpt-5.5",
    "groq:llama-3.3-70b-versatile",
    "mistral:mistral-small-latest",
)


def words(text: str, *, pause: float = 0.0, usage: tuple[int, int] = (12, 3)) -> Reply:
    steps: list[bytes | float] = []
    for piece in text.split(" "):
        if pause:
            steps.append(pause)
        steps += sse({"choices": [{"index": 0, "delta": {"content": piece + " "}}]})
    counts = {"prompt_tokens": usage[0], "completion_tokens": usage[1]}
    steps += sse({"choices": [], "usage": counts})
    steps += sse({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}, done=True)
    return Reply(steps=steps)


def by_model(seen: Seen) -> Reply:
    model = seen.json["model"]
    if seen.target.startswith("/openai/"):  # Groq
        body = {"error": {"message": "Rate limit reached", "type": "rate_limit"}}
        return Reply(429, {"content-type": "application/json"}, [json.dumps(body).encode()])
    if model.startswith("gpt"):
        return words("The slow answer is four.", pause=0.15)
    return words("Four.")


def ask(server: ProviderServer, *extra: str) -> tuple[int, str, str]:
    for provider, key in KEYS.items():
        open_key_store(app_paths()).set(entry_name(provider), key)
    env = {
        "BYOK_TUI_OPENAI_BASE_URL": f"{server.base_url}/v1",
        "BYOK_TUI_GROQ_BASE_URL": f"{server.base_url}/openai/v1",
        "BYOK_TUI_MISTRAL_BASE_URL": f"{server.base_url}/v1",
    }
    done = run_cli("ask", *extra, env=env, timeout=120)
    return done.returncode, done.stdout, done.stderr


def store() -> Store:
    return Store(app_paths().data_dir / "byok-tui.sqlite3")


def headers(out: str) -> list[str]:
    return [line for line in out.splitlines() if line.startswith("== ")]


def test_each_reply_is_printed_under_its_figures_in_the_order_they_finish() -> None:
    with provider_server(by_model) as server:
        code, out, err = ask(server, "--compare", f"{SLOW},{LIMITED},{FINE}", "2+2?")
    assert code == 0, err
    lines = headers(out)
    named = [line.split(" · ")[0:2] for line in lines]
    assert sorted(named[:2]) == [
        ["== groq", "llama-3.3-70b-versatile"],
        ["== mistral", "mistral-small-latest"],
    ]
    assert named[2] == ["== openai", "gpt-5.5"], "the slow one finished last"
    slow = next(line for line in lines if line.startswith("== openai"))
    assert "first token" in slow and "12 in, 3 out" in slow and "$" in slow
    limited = next(line for line in lines if line.startswith("== groq"))
    assert "error:" in limited and "429" in limited
    assert "The slow answer is four." in out and "Four." in out
    assert out.index("Four.") < out.index("The slow answer")  # the fast one first


def test_json_prints_one_object_a_target() -> None:
    with provider_server(by_model) as server:
        code, out, _err = ask(server, "--compare", f"{SLOW},{LIMITED},{FINE}", "--json", "2+2?")
    assert code == 0
    found = {(o["provider"], o["model"]): o for o in map(json.loads, out.splitlines())}
    assert set(found) == {
        ("openai", "gpt-5.5"),
        ("groq", "llama-3.3-70b-versatile"),
        ("mistral", "mistral-small-latest"),
    }
    fine: dict[str, Any] = found[("mistral", "mistral-small-latest")]
    assert fine["text"].strip() == "Four." and fine["error"] is None
    assert fine["input_tokens"] == 12 and fine["output_tokens"] == 3
    assert isinstance(fine["first_token_s"], float) and fine["total_s"] >= fine["first_token_s"]
    assert set(fine) == {
        "provider", "model", "text", "first_token_s", "total_s",
        "input_tokens", "output_tokens", "cost_usd", "error",
    }  # fmt: skip
    assert "429" in found[("groq", "llama-3.3-70b-versatile")]["error"]
    assert not any(KEYS[p] in out for p in KEYS)


def test_when_none_answered_the_exit_status_is_the_first_target_s() -> None:
    with provider_server(by_model) as server:
        code, _out, _err = ask(server, "--compare", f"{LIMITED},groq:openai/gpt-oss-120b", "2+2?")
    assert code == 5  # rate limited


def test_the_replies_are_kept_as_alternatives_each_naming_its_model() -> None:
    with provider_server(by_model) as server:
        assert ask(server, "--compare", f"{SLOW},{FINE}", "2+2?")[0] == 0
    data = store()
    conversation = data.conversations(data.bot("Default").id)[0]
    stored = data.all_messages(conversation.id)
    replies = [m for m in stored if m.role == "assistant"]
    assert [m.role for m in stored].count("user") == 1
    assert sorted((m.provider, m.model) for m in replies) == [
        ("mistral", "mistral-small-latest"),
        ("openai", "gpt-5.5"),
    ]
    assert {reply.parent_id for reply in replies} == {stored[0].id}
    places = data.branch.alternatives_of([reply.id for reply in replies])
    assert sorted(places.values()) == [(1, 2), (2, 2)]


def test_usage_and_export_carry_every_alternative_with_its_model_tokens_and_cost() -> None:
    """Each target is a normal reply: `usage` counts each model's tokens and cost, and the
    export holds every alternative (not only the branch on screen) with its own figures."""

    def answers(seen: Seen) -> Reply:
        big = seen.json["model"].startswith("gpt")
        return words("Four.", usage=(1_000, 500) if big else (12, 3))

    with provider_server(answers) as server:
        assert ask(server, "--compare", f"{SLOW},{FINE}", "2+2?")[0] == 0
    usage = run_cli("usage", "--by", "model", "--json")
    assert usage.returncode == 0, usage.stderr
    rows = {row["model"]: row for row in json.loads(usage.stdout)}
    counted = {model: (row["input_tokens"], row["output_tokens"]) for model, row in rows.items()}
    assert counted == {"gpt-5.5": (1_000, 500), "mistral-small-latest": (12, 3)}, rows
    assert rows["gpt-5.5"]["cost_usd"] > rows["mistral-small-latest"]["cost_usd"] > 0
    dumped = run_cli("export")
    assert dumped.returncode == 0, dumped.stderr
    messages = json.loads(dumped.stdout)["conversations"][0]["messages"]
    figures = sorted(
        (m["model"], m["input_tokens"], m["output_tokens"], m["cost_usd"] > 0)
        for m in messages
        if m["role"] == "assistant"
    )
    assert figures == [("gpt-5.5", 1_000, 500, True), ("mistral-small-latest", 12, 3, True)]


def test_the_markdown_export_names_every_alternative_with_its_figures() -> None:
    """The Markdown export shows the branch on screen; under a reply that has alternatives (a
    compare's other targets) a line names each with its model, tokens and cost, or its
    error, so that the document says what every model answered for how much."""

    def answers(seen: Seen) -> Reply:
        if seen.target.startswith("/openai/"):  # Groq: 429
            return by_model(seen)
        big = seen.json["model"].startswith("gpt")
        return words("Four.", usage=(1_000, 500) if big else (12, 3))

    with provider_server(answers) as server:
        assert ask(server, "--compare", f"{SLOW},{FINE},{LIMITED}", "2+2?")[0] == 0
    exported = run_cli("export", "--markdown")
    assert exported.returncode == 0, exported.stderr
    document = exported.stdout
    also = [line for line in document.splitlines() if line.startswith("*Alternatives")]
    assert len(also) == 1, document
    for model in ("gpt-5.5", "mistral-small-latest", "llama-3.3-70b-versatile"):
        assert model in document, model
    # Two of the three are named under the one on screen, with their figures or error.
    named = also[0].count(" · ")
    assert named >= 3 and ("1,000 in, 500 out" in also[0] or "12 in, 3 out" in also[0]), also
    assert "$" in also[0] and "error" in document.lower(), also


def test_every_target_is_sent_the_same_history() -> None:
    with provider_server(by_model) as server:
        assert ask(server, "-p", "mistral", "First question")[0] == 0
        assert ask(server, "-c", "--compare", f"{SLOW},{FINE}", "Second question")[0] == 0
        sent = [r.json["messages"] for r in server.requests[1:]]
    assert len(sent) == 2
    assert sent[0] == sent[1]
    assert [m["content"] for m in sent[0]][-3:] == ["First question", "Four. ", "Second question"]


def test_a_budget_blocks_its_own_target_and_the_others_go_on() -> None:
    with provider_server(by_model) as server:
        server.reply_with(words("Expensive.", usage=(400_000, 100_000)))
        assert ask(server, "-p", "openai", "-m", "gpt-5.5", "Costly")[0] == 0
        assert run_cli("budget", "set", "openai", "0.01", "--per", "day").returncode == 0
        server.replies.clear()  # each model answered its own way again
        code, out, _err = ask(server, "--compare", f"{SLOW},{FINE}", "2+2?")
    assert code == 0
    blocked = next(line for line in headers(out) if line.startswith("== openai"))
    assert "error:" in blocked and "budget" in blocked.lower()
    assert "Four." in out


def test_a_bots_fallbacks_do_not_apply_inside_a_compare() -> None:
    """The user chose the targets: one refused (429) is that target's error, and none of the
    bot's fallbacks is asked in its place."""
    with provider_server(by_model) as server:
        added = run_cli("bot", "add", "Sturdy", "-p", "openai", "--fallback", FINE)
        assert added.returncode == 0, added.stderr
        code, out, err = ask(server, "--bot", "Sturdy", "--compare", f"{LIMITED},{SLOW}", "2+2?")
        models = [request.json["model"] for request in server.requests]
    assert code == 0, err
    assert sorted(models) == ["gpt-5.5", "llama-3.3-70b-versatile"], models
    refused = next(line for line in headers(out) if line.startswith("== groq"))
    assert "error:" in refused, refused


def test_key_failover_works_per_target() -> None:
    """A target whose key is refused (401) fails over to its provider's next labelled key,
    as a single send does; the other targets are not touched by it."""
    spare = "sk-proj-" + "S" * 60

    def refuse_the_first_key(seen: Seen) -> Reply:
        sent = (seen.header("authorization") or "").removeprefix("Bearer ")
        if seen.json["model"].startswith("gpt") and sent == KEYS["openai"]:
            body = {"error": {"message": "Incorrect API key provided", "code": "invalid_api_key"}}
            return Reply(401, {"content-type": "application/json"}, [json.dumps(body).encode()])
        return by_model(seen)

    with provider_server(refuse_the_first_key) as server:
        open_key_store(app_paths()).set(entry_name("openai"), KEYS["openai"])
        labelled = run_cli("keys", "set", "openai", "--label", "spare", stdin=spare)
        assert labelled.returncode == 0, labelled.stderr
        assert run_cli("keys", "failover", "openai", "on").returncode == 0
        code, out, err = ask(server, "--compare", f"{SLOW},{FINE}", "2+2?")
        sent = [
            (r.json["model"], (r.header("authorization") or "").removeprefix("Bearer "))
            for r in server.requests
        ]
    assert code == 0, err
    assert ("gpt-5.5", KEYS["openai"]) in sent and ("gpt-5.5", spare) in sent, "no failover"
    assert ("mistral-small-latest", KEYS["mistral"]) in sent
    assert "The slow answer is four." in out and "Four." in out


def test_what_a_compare_cannot_take_is_a_usage_error_and_nothing_is_sent() -> None:
    with provider_server(by_model) as server:
        for extra in (
            ("--compare", f"{SLOW},{FINE}", "-p", "openai"),
            ("--compare", f"{SLOW},{FINE}", "--fallback", FINE),
            ("--compare", SLOW),  # one target is no comparison
            ("--compare", f"{SLOW},{SLOW}"),
            ("--compare", f"{SLOW},nowhere:model"),
            ("--json",),
        ):
            code, _out, err = ask(server, *extra, "2+2?")
            assert code == 2, (extra, err)
        assert server.requests == []


def test_sigterm_mid_compare_keeps_every_partial_reply_and_exits_143() -> None:
    """Each target's text so far is stored, marked cut, as a single ask's is."""
    import os
    import signal
    import subprocess
    import sys
    import time

    def slow(seen: Seen) -> Reply:
        first = seen.json["model"].split("-")[0]
        steps = sse({"choices": [{"index": 0, "delta": {"content": f"{first} begins. "}}]})
        return Reply(steps=[*steps, 30.0])

    for provider, key in KEYS.items():
        open_key_store(app_paths()).set(entry_name(provider), key)
    with provider_server(slow) as server:
        env = dict(
            os.environ,
            BYOK_TUI_OPENAI_BASE_URL=f"{server.base_url}/v1",
            BYOK_TUI_MISTRAL_BASE_URL=f"{server.base_url}/v1",
        )
        argv = [sys.executable, "-m", "byok_tui", "ask", "--compare", f"{SLOW},{FINE}", "Go"]
        proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            deadline = time.monotonic() + 30
            while len(server.requests) < 2 and time.monotonic() < deadline:
                time.sleep(0.05)
            time.sleep(1.5)  # each has written its first words, kept within a second
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=30)
    assert proc.returncode == 143
    data = store()
    conversation = data.conversations(data.bot("Default").id)[0]
    replies = [m for m in data.all_messages(conversation.id) if m.role == "assistant"]
    assert sorted(m.content for m in replies) == ["gpt begins. ", "mistral begins. "]
    assert {m.status for m in replies} == {"partial"}
