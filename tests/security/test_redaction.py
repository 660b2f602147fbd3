"""Redaction: no key, whatever its shape or surroundings, survives `redact`."""

from __future__ import annotations

from urllib.parse import quote

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from byok_tui.errors import ByokError
from byok_tui.providers.registry import key_providers
from byok_tui.redaction import REDACTED, forget_secrets, redact, remember_secret
from tests.support.keys import FAKE_KEYS

SURROUNDINGS = st.text(max_size=80)
KEY_SHAPES = {p.id: p.key_pattern for p in key_providers()}


@st.composite
def shaped_keys(draw: st.DrawFn) -> str:
    """A key of one provider's known shape (the registry's hint pattern)."""
    provider_id = draw(st.sampled_from(sorted(KEY_SHAPES)))
    if provider_id == "mistral":
        return draw(st.from_regex(r"[A-Za-z0-9]{32}", fullmatch=True))
    pattern = KEY_SHAPES[provider_id].replace("{8,}", "{8,60}").replace("{16,}", "{16,60}")
    return draw(st.from_regex(pattern.replace("{40,}", "{40,80}"), fullmatch=True))


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(before=SURROUNDINGS, key=shaped_keys(), after=SURROUNDINGS)
def test_no_key_of_a_known_shape_survives(before: str, key: str, after: str) -> None:
    # A neighbour that extends a key-shaped token can change where the token ends; what must
    # hold is that the key itself is gone.
    assert key not in redact(f"{before} {key} {after}")


@settings(max_examples=300)
@given(
    before=SURROUNDINGS,
    # Not a piece of the marker itself ("[REDACTE"): that would be found in every redacted
    # text, though nothing of it was leaked; no real key is that short.
    secret=st.text(min_size=8, max_size=120).filter(
        lambda s: s.strip() == s and s and s not in REDACTED
    ),
    after=SURROUNDINGS,
)
def test_no_remembered_key_survives_whatever_it_looks_like(
    before: str, secret: str, after: str
) -> None:
    forget_secrets()
    remember_secret(secret)
    text = before + secret + after + secret
    assert secret not in redact(text)
    assert quote(secret, safe="") not in redact(quote(text, safe=""))


@given(st.text(alphabet="abcdefgh .,!?\n", max_size=200))
def test_ordinary_text_is_left_alone(text: str) -> None:
    assert redact(text) == text


def test_a_key_query_parameter_is_redacted_whatever_the_key() -> None:
    url = "https://generativelanguage.googleapis.com/v1beta/models/x:streamGenerateContent"
    assert redact(f"{url}?alt=sse&key=short1") == f"{url}?alt=sse&key={REDACTED}"
    assert redact(f"{url}?key=abc&alt=sse") == f"{url}?key={REDACTED}&alt=sse"


def test_key_bearing_header_values_are_redacted() -> None:
    assert redact("Authorization: Bearer tok123456") == f"Authorization: Bearer {REDACTED}"
    assert redact("{'x-api-key': 'opaque-value'}") == f"{{'x-api-key': '{REDACTED}'}}"
    assert redact("x-goog-api-key=opaque-value") == f"x-goog-api-key={REDACTED}"


def test_every_fake_provider_key_is_redacted_by_shape_alone() -> None:
    forget_secrets()
    for provider_id, key in FAKE_KEYS.items():
        assert redact(f"error for {key}.") == f"error for {REDACTED}.", provider_id


def test_errors_are_redacted_when_made() -> None:
    remember_secret("my-own-odd-key-value")
    error = ByokError("the provider said: bad key my-own-odd-key-value")
    assert "my-own-odd-key-value" not in str(error)
    assert "my-own-odd-key-value" not in error.one_line()


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(before=SURROUNDINGS, key=shaped_keys(), after=SURROUNDINGS)
def test_a_title_made_from_a_message_holds_no_piece_of_a_key(
    before: str, key: str, after: str
) -> None:
    """Titles are cut to a line: the key is replaced first, so not even its start is kept."""
    from byok_tui.conversation import title_for

    title = title_for(f"{before} {key} {after}")
    assert not any(key[i : i + 12] in title for i in range(len(key) - 11)), title
