"""Redaction: no key, whatever its shape or surroundings, survives `redact`."""

from __future__ import annotations

import re
from itertools import pairwise
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from byok_tui.core.errors import ByokError
from byok_tui.core.redaction import (
    REDACTED,
    Redactor,
    forget_secrets,
    redact,
    redact_known_secrets,
    remember_secret,
)
from byok_tui.core.registry import key_providers
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


def test_the_patterns_compiled_from_the_keys_never_show_a_key_in_a_repr() -> None:
    """A key must not show up in a repr, a debugger or an assertion message: nor must the
    patterns the redactor compiles from every key it holds."""
    redactor = Redactor()
    redactor.remember("myOwnOddKeyValue20261128")
    compiled = redactor._patterns
    assert compiled is not None
    assert "myOwnOddKeyValue20261128" not in repr(compiled)
    assert "myOwnOddKeyValue20261128" not in str(compiled)


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(before=SURROUNDINGS, key=shaped_keys(), after=SURROUNDINGS)
def test_a_title_made_from_a_message_holds_no_piece_of_a_key(
    before: str, key: str, after: str
) -> None:
    """Titles are cut to a line: the key is replaced first, so not even its start is kept."""
    from byok_tui.core.titles import title_for

    title = title_for(f"{before} {key} {after}")
    assert not any(key[i : i + 12] in title for i in range(len(key) - 11)), title


def pieces_of(key: str, size: int = 12) -> list[str]:
    return [key[i : i + size] for i in range(len(key) - size + 1)]


def holds_a_piece_of(text: str, key: str) -> bool:
    return any(piece in text for piece in pieces_of(key))


# Keys the user could have stored (printable ASCII) and one that got in with an invisible
# character (its escaped form is what an exception's text shows).
STORED_KEYS = st.one_of(
    st.text(
        alphabet=st.characters(min_codepoint=0x21, max_codepoint=0x7E), min_size=16, max_size=80
    ),
    st.builds(
        lambda a, b: a + "\u200b" + b,
        st.from_regex(r"sk-[a-z]{6}", fullmatch=True),
        st.from_regex(r"[A-Za-z0-9]{20,40}", fullmatch=True),
    ),
).filter(lambda key: key not in REDACTED and REDACTED not in key)


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(
    before=SURROUNDINGS,
    key=STORED_KEYS,
    after=SURROUNDINGS,
    form=st.sampled_from(
        ["raw", "repr", "json", "json-ascii", "url", "url-plus", "unicode-escape"]
    ),
)
def test_a_known_key_is_redacted_in_every_escaped_form(
    before: str, key: str, after: str, form: str
) -> None:
    """What an exception, a JSON body or a URL shows of a key is still the key."""
    import json
    from urllib.parse import quote_plus

    forget_secrets()
    remember_secret(key)
    shown = {
        "raw": key,
        "repr": repr(key)[1:-1],
        "json": json.dumps(key, ensure_ascii=False)[1:-1],
        "json-ascii": json.dumps(key)[1:-1],
        "url": quote(key, safe=""),
        "url-plus": quote_plus(key),
        "unicode-escape": key.encode("unicode_escape").decode("ascii"),
    }[form]
    for redacted in (redact(before + shown + after), redact_known_secrets(before + shown + after)):
        assert not holds_a_piece_of(redacted, shown), (form, redacted)


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(before=SURROUNDINGS, key=STORED_KEYS, after=SURROUNDINGS, data=st.data())
def test_a_cut_key_is_still_a_key_any_run_of_twelve_of_its_characters(
    before: str, key: str, after: str, data: st.DataObject
) -> None:
    forget_secrets()
    remember_secret(key)
    start = data.draw(st.integers(0, len(key) - 12))
    end = data.draw(st.integers(start + 12, len(key)))
    cut = key[start:end]
    for redacted in (redact(before + cut + after), redact_known_secrets(before + cut + after)):
        assert not holds_a_piece_of(redacted, cut), redacted


@pytest.mark.parametrize("padding", [470, 489])
def test_a_provider_message_is_redacted_before_it_is_shortened(padding: int) -> None:
    """At 489, a cut to 500 characters first would leave the key's first 10 characters: too
    few to be known as a piece of it. Redacting first leaves none."""
    import json as json_module

    from byok_tui.core.registry import get_provider
    from byok_tui.providers.errors import classify_http_error

    key = "odd-mistral-key-value-0123456789"  # 32 characters, of no known shape
    forget_secrets()
    remember_secret(key)
    body = {"error": {"message": "x" * padding + " " + key + " and more after it"}}
    error = classify_http_error(get_provider("mistral"), 401, {}, json_module.dumps(body))
    for shown in (error.provider_message or "", error.one_line(), str(error)):
        assert not holds_a_piece_of(shown, key), shown
        assert key[:8] not in shown, shown


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(
    before=SURROUNDINGS,
    key=STORED_KEYS,
    after=SURROUNDINGS,
    cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=12),
)
def test_a_key_split_across_streamed_pieces_never_comes_out(
    before: str, key: str, after: str, cuts: list[int]
) -> None:
    """However a reply is cut into pieces, what comes out is what redacting it whole gives."""
    from byok_tui.core.redaction import StreamRedactor

    forget_secrets()
    remember_secret(key)
    whole = before + key + after
    bounds = sorted({0, len(whole), *(c for c in cuts if c < len(whole))})
    stream = StreamRedactor()
    out = "".join(stream.feed(whole[a:b]) for a, b in pairwise(bounds))
    out += stream.flush()

    def merged(text: str) -> str:  # two adjacent keys may come out as one marker or two
        return re.sub(r"(\[REDACTED\])+", REDACTED, text)

    assert merged(out) == merged(redact_known_secrets(whole))
    assert not holds_a_piece_of(out, key)


def test_text_with_no_key_in_it_is_held_back_only_as_long_as_it_could_start_one() -> None:
    from byok_tui.core.redaction import StreamRedactor

    forget_secrets()
    remember_secret("sk-proj-ZZZZ" + "Q" * 40)
    stream = StreamRedactor()
    assert stream.feed("Hello there, ") == "Hello there, "  # nothing in it begins a key
    assert stream.feed("here is sk-pr") == "here is "  # could be the start of it
    assert stream.feed("ogress.") + stream.flush() == "sk-progress."


@given(st.sampled_from(list(FAKE_KEYS.values())), st.text(max_size=40), st.text(max_size=40))
def test_any_key_in_any_text_is_a_run_that_could_hold_a_key(
    key: str, before: str, after: str
) -> None:
    """The send reads the key store before storing a message only when the text could hold
    a key: every provider's key shape must count as one, wherever it stands."""
    from byok_tui.core.redaction import could_hold_a_key

    assert could_hold_a_key(f"{before} {key} {after}")


def test_plain_prose_holds_no_run_that_could_be_a_key() -> None:
    from byok_tui.core.redaction import could_hold_a_key

    assert not could_hold_a_key("Explain server-sent events in one line, with an example.")
