"""Every error status and body becomes the right kind, message and remedy.

Classified by the body as well as the status, because providers disagree (wire reference 13).
"""

from __future__ import annotations

import json

import pytest

from byok_tui.core.errors import ErrorKind
from byok_tui.core.registry import get_provider
from byok_tui.keys import KeyStore
from byok_tui.providers.errors import ProviderError, classify_http_error, retry_after_seconds
from tests.support.provider_client import client_for, collect
from tests.support.provider_server import ProviderServer, Reply

CASES = [
    # provider, status, body, expected kind, words the provider's message must keep
    (
        "openai",
        401,
        {
            "error": {
                "message": "Incorrect API key provided: sk-ab**cd.",
                "type": "invalid_request_error",
                "code": "invalid_api_key",
            }
        },
        ErrorKind.AUTH,
        "Incorrect API key",
    ),
    (
        "openai",
        429,
        {
            "error": {
                "message": "You exceeded your current quota.",
                "type": "insufficient_quota",
                "code": "insufficient_quota",
            }
        },
        ErrorKind.BILLING,
        "exceeded your current quota",
    ),
    (
        "openai",
        429,
        {
            "error": {
                "message": "Rate limit reached. Please try again in 20s.",
                "type": "requests",
                "code": "rate_limit_exceeded",
            }
        },
        ErrorKind.RATE_LIMIT,
        "Rate limit reached",
    ),
    (
        "openai",
        403,
        {
            "error": {
                "message": "Country not supported.",
                "code": "unsupported_country_region_territory",
            }
        },
        ErrorKind.PERMISSION,
        "Country",
    ),
    (
        "openai",
        404,
        {"error": {"message": "The model `gpt-9` does not exist", "code": "model_not_found"}},
        ErrorKind.NOT_FOUND,
        "gpt-9",
    ),
    (
        "openai",
        400,
        {"error": {"message": "Unsupported value: 'temperature'", "code": "unsupported_value"}},
        ErrorKind.BAD_REQUEST,
        "Unsupported value",
    ),
    (
        "xai",
        400,
        {
            "code": "Client specified an invalid argument",
            "error": "Incorrect API key provided: xa***yz.",
        },
        ErrorKind.AUTH,
        "Incorrect API key",
    ),
    (
        "xai",
        403,
        {
            "code": "permission-denied",
            "error": "Your team has either used all available credits or reached its "
            "monthly spending limit.",
        },
        ErrorKind.BILLING,
        "used all available",
    ),
    (
        "google",
        400,
        {
            "error": {
                "code": 400,
                "message": "API key not valid.",
                "status": "INVALID_ARGUMENT",
                "details": [{"reason": "API_KEY_INVALID"}],
            }
        },
        ErrorKind.AUTH,
        "API key not valid",
    ),
    (
        "google",
        403,
        {
            "error": {
                "code": 403,
                "message": "Method doesn't allow unregistered callers",
                "status": "PERMISSION_DENIED",
            }
        },
        ErrorKind.PERMISSION,
        "unregistered",
    ),
    (
        "google",
        503,
        {"error": {"code": 503, "message": "The model is overloaded.", "status": "UNAVAILABLE"}},
        ErrorKind.OVERLOADED,
        "overloaded",
    ),
    (
        "anthropic",
        402,
        {"type": "error", "error": {"type": "billing_error", "message": "Insufficient credits"}},
        ErrorKind.BILLING,
        "Insufficient credits",
    ),
    (
        "anthropic",
        400,
        {
            "type": "error",
            "error": {"type": "invalid_request_error", "message": "Your credit balance is too low"},
        },
        ErrorKind.BILLING,
        "credit balance",
    ),
    (
        "anthropic",
        529,
        {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
        ErrorKind.OVERLOADED,
        "Overloaded",
    ),
    (
        "anthropic",
        413,
        {
            "type": "error",
            "error": {"type": "request_too_large", "message": "Request exceeds the maximum"},
        },
        ErrorKind.TOO_LARGE,
        "maximum",
    ),
    (
        "openrouter",
        402,
        {"error": {"code": 402, "message": "Insufficient credits"}},
        ErrorKind.BILLING,
        "Insufficient credits",
    ),
    (
        "openrouter",
        401,
        {"error": {"code": 401, "message": "User not found."}},
        ErrorKind.AUTH,
        "User not found",
    ),
    (
        "deepseek",
        402,
        {"error": {"message": "Insufficient Balance", "type": "unknown_error"}},
        ErrorKind.BILLING,
        "Insufficient Balance",
    ),
    (
        "groq",
        498,
        {"error": {"message": "Flex tier capacity exceeded", "code": "capacity_exceeded"}},
        ErrorKind.RATE_LIMIT,
        "capacity",
    ),
    ("mistral", 401, {"detail": "Unauthorized"}, ErrorKind.AUTH, "Unauthorized"),
    (
        "mistral",
        429,
        {"message": "Requests rate limit exceeded"},
        ErrorKind.RATE_LIMIT,
        "rate limit",
    ),
    (
        "ollama",
        404,
        {"error": 'model "llama9" not found, try pulling it first'},
        ErrorKind.NOT_FOUND,
        "try pulling",
    ),
]


@pytest.mark.parametrize(
    ("provider_id", "status", "body", "kind", "keeps"),
    CASES,
    ids=[f"{c[0]}-{c[1]}-{c[3].value}" for c in CASES],
)
def test_status_and_body_classify_to_the_right_kind(
    provider_id: str, status: int, body: dict, kind: ErrorKind, keeps: str
) -> None:
    error = classify_http_error(get_provider(provider_id), status, {}, json.dumps(body))
    assert error.kind is kind
    assert error.status == status
    assert keeps in (error.provider_message or "")
    assert error.remedy  # every error says what to do
    assert str(status) in error.message


def test_each_kind_of_error_gives_its_own_remedy() -> None:
    openai, anthropic = get_provider("openai"), get_provider("anthropic")
    auth = classify_http_error(anthropic, 401, {}, "{}")
    assert "regenerate" in auth.remedy
    assert "credits" in auth.remedy
    assert "billing is active" in classify_http_error(openai, 401, {}, "{}").remedy
    assert "permission" in classify_http_error(openai, 403, {}, "{}").remedy
    assert "free-tier model" in classify_http_error(openai, 402, {}, "{}").remedy
    assert "about a minute" in classify_http_error(openai, 429, {}, "{}").remedy


@pytest.mark.parametrize(
    ("headers", "body", "seconds"),
    [
        ({"retry-after-ms": "1500"}, {}, 1.5),
        ({"Retry-After": "7"}, {}, 7.0),
        ({"retry-after": "Thu, 01 Jan 2099 00:00:10 GMT"}, {}, None),  # a date: in the future
        (
            {},
            {
                "error": {
                    "details": [
                        {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "37s"}
                    ]
                }
            },
            37.0,
        ),
        ({"x-ratelimit-reset-requests": "2m59.56s"}, {}, 179.56),
        ({"x-ratelimit-reset-tokens": "12ms"}, {}, 0.012),
        ({"ratelimitbysize-reset": "4"}, {}, 4.0),
        ({}, {"error": {"message": "Please try again in 3.5s. Visit …"}}, 3.5),
        ({}, {"error": {"message": "Please retry in 37.6s."}}, 37.6),
        ({}, {"error": {"message": "slow down"}}, None),
    ],
)
def test_retry_after_is_found_in_every_documented_place(
    headers: dict, body: dict, seconds: float | None
) -> None:
    message = body.get("error", {}).get("message") if body else None
    found = retry_after_seconds(headers, body, message, now=0)
    if "retry-after" in headers and "2099" in headers["retry-after"]:
        assert found is not None
        assert found > 0
    else:
        assert found == pytest.approx(seconds) if seconds is not None else found is None


def test_a_daily_limit_says_try_tomorrow_not_a_countdown() -> None:
    body = {
        "error": {
            "code": 429,
            "message": "Quota exceeded",
            "status": "RESOURCE_EXHAUSTED",
            "details": [{"quotaId": "GenerateRequestsPerDayPerProjectPerModel-FreeTier"}],
        }
    }
    error = classify_http_error(get_provider("google"), 429, {}, json.dumps(body))
    assert error.daily_limit
    assert "tomorrow" in error.remedy


def test_a_rate_limit_with_a_known_wait_names_it() -> None:
    error = classify_http_error(get_provider("groq"), 429, {"retry-after": "12"}, "{}")
    assert error.retry_after == 12.0
    assert "Wait 12 s" in error.remedy


def test_a_provider_message_that_echoes_a_key_is_redacted() -> None:
    key = "sk-proj-" + "E" * 60
    body = {"error": {"message": f"Incorrect API key provided: {key}"}}
    error = classify_http_error(get_provider("openai"), 401, {}, json.dumps(body))
    assert key not in error.one_line()
    assert key not in (error.provider_message or "")


@pytest.mark.parametrize("status", [401, 403, 429, 402, 404, 500])
async def test_each_status_from_a_real_server_becomes_a_typed_error(
    status: int, server: ProviderServer, store: KeyStore
) -> None:
    body = json.dumps({"error": {"message": f"status {status} from the server"}}).encode()
    server.reply_with(
        Reply(status, {"content-type": "application/json", "retry-after": "3"}, [body])
    )
    with pytest.raises(ProviderError) as raised:
        await collect(client_for("openrouter", server, store), "openrouter")
    assert raised.value.status == status
    assert raised.value.provider_message == f"status {status} from the server"


async def test_an_html_error_page_is_not_shown_as_the_provider_message(
    server: ProviderServer, store: KeyStore
) -> None:
    server.reply_with(Reply(403, {"content-type": "text/html"}, [b"<html><body>Blocked</body>"]))
    with pytest.raises(ProviderError) as raised:
        await collect(client_for("openai", server, store), "openai")
    assert raised.value.kind is ErrorKind.PROTOCOL
    assert raised.value.provider_message is None
