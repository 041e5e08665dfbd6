"""Recording scrubs secrets: a canary key sent in every form the SDKs use never reaches disk."""

from __future__ import annotations

import json
import re
from pathlib import Path

import anthropic
import httpx
import openai
import pytest
from google import genai
from google.genai import types
from toolstream_core.testing import VendorEmulator
from toolstream_core.testing._clients import stream_sdk
from toolstream_core.testing._recording import REDACTED, Scrubber, recording_vcr, use_cassette

# Not token-shaped on purpose: only the "remember what was in a secret header" net can catch it.
CANARY = "cnry5f1e2d9c7b3a"
USER = [{"role": "user", "content": "hi"}]


def _record_with_canary(emu: VendorEmulator, out: Path) -> None:
    with recording_vcr().use_cassette(str(out), record_mode="all"):
        oc = openai.OpenAI(
            base_url=emu.base_url + "/v1", api_key=CANARY, organization=f"org-{CANARY}",
            project=f"proj_{CANARY}", max_retries=0,
            default_headers={"api-key": CANARY, "Cookie": f"session={CANARY}; theme=dark",
                             "Proxy-Authorization": f"Basic {CANARY}"},
            default_query={"key": CANARY, "api-key": CANARY, "api_key": CANARY})
        list(oc.chat.completions.create(model="scenario:single_call", messages=USER,  # type: ignore[arg-type]
                                        stream=True))
        list(oc.responses.create(model="scenario:single_call", input="hi", stream=True))
        # anthropic>=2 refuses api_key= with auth_token= (and then drops an x-api-key beside
        # an explicit bearer header): the key header goes in by hand, so every major sends both.
        ac = anthropic.Anthropic(base_url=emu.base_url, auth_token=CANARY, max_retries=0,
                                 default_headers={"Cookie": f"sid={CANARY}", "x-api-key": CANARY},
                                 default_query={"key": CANARY})
        list(ac.messages.create(model="scenario:single_call", max_tokens=5, messages=USER,  # type: ignore[arg-type]
                                stream=True))
        gc = genai.Client(api_key=CANARY, http_options=types.HttpOptions(
            base_url=emu.base_url, headers={"Cookie": f"SID={CANARY}"}))
        list(gc.models.generate_content_stream(model="scenario:single_call", contents="hi"))
        # the REST form older Google clients use: ?key= in the query string
        httpx.post(f"{emu.base_url}/v1beta/models/gemini-x:streamGenerateContent?alt=sse&key="
                   f"{CANARY}", json={"contents": [{"role": "user", "parts": [{"text": "hi"}]}]},
                   headers={"x-goog-api-key": CANARY}).raise_for_status()


def test_canary_key_never_written(tmp_path: Path) -> None:
    out = tmp_path / "canary.yaml"
    with VendorEmulator(soft_drop=True) as emu:
        _record_with_canary(emu, out)
        headers = emu.request_headers
        paths = [r.path for r in emu.requests]

    # the canary really went over the wire, in every form
    forms = {
        "authorization": f"Bearer {CANARY}", "x-api-key": CANARY, "api-key": CANARY,
        "x-goog-api-key": CANARY, "openai-organization": f"org-{CANARY}",
        "openai-project": f"proj_{CANARY}", "proxy-authorization": f"Basic {CANARY}",
    }
    for name, value in forms.items():
        assert any(h.get(name) == value for h in headers), f"{name} was not sent"
    assert any(CANARY in h.get("cookie", "") for h in headers)
    assert sum(f"key={CANARY}" in p for p in paths) >= 3
    assert len(headers) == 5

    text = out.read_text(encoding="utf-8")
    assert CANARY not in text
    assert CANARY.encode() not in out.read_bytes()
    assert text.count(REDACTED) >= 10

    # and the scrubbed cassette still replays offline
    with use_cassette(out) as cassette:
        replayed = stream_sdk("anthropic", model="claude")
    assert replayed.error is None and replayed.events
    assert cassette.play_count == 1


def test_response_cookies_org_headers_and_remembered_values_are_scrubbed() -> None:
    scrub = Scrubber()
    scrub.header_replacement("authorization", f"Bearer {CANARY}", None)
    response = {
        "status": {"code": 200, "message": "OK"},
        "headers": {"Set-Cookie": [f"__cf_bm={CANARY}; path=/"],
                    "openai-organization": ["user-abc"], "openai-project": ["proj_x"],
                    "anthropic-organization-id": ["org-uuid"],
                    "x-echo": [f"you sent {CANARY}"], "content-type": ["text/event-stream"]},
        "body": {"string": f'data: {{"echo": "{CANARY}"}}\n\n'.encode()},
    }
    clean = scrub.before_record_response(response)
    assert set(clean["headers"]) == {"x-echo", "content-type"}
    assert CANARY not in json.dumps(clean["headers"])
    assert CANARY.encode() not in clean["body"]["string"]


@pytest.mark.parametrize("token", [
    "sk-proj-AbCdEf0123456789xyzXYZ", "sk-ant-api03-AbCdEf0123456789", "AIzaSyA1234567890abcdefghijkl",
])
def test_token_shaped_values_are_scrubbed_even_when_never_seen_in_a_header(token: str) -> None:
    scrub = Scrubber()
    assert token not in scrub.scrub_text(f'{{"prompt": "my key is {token} ok"}}')
    assert "my key is" in scrub.scrub_text(f"my key is {token}")


def test_local_hosts_rewritten_to_vendor_hosts(tmp_path: Path) -> None:
    out = tmp_path / "hosts.yaml"
    with VendorEmulator() as emu, recording_vcr().use_cassette(str(out), record_mode="all"):
        for api in ("openai-chat", "openai-responses", "anthropic", "gemini"):
            assert stream_sdk(api, base_url=emu.base_url, model="m").error is None
    text = out.read_text(encoding="utf-8")
    for uri in ("https://api.openai.com/v1/chat/completions",
                "https://api.openai.com/v1/responses",
                "https://api.anthropic.com/v1/messages"):
        assert f"uri: {uri}\n" in text
    # google-genai 2.x asks v1beta, 3.x v1: the host is rewritten either way
    assert re.search(r"uri: https://generativelanguage\.googleapis\.com/v1(beta)?/models/m:"
                     r"streamGenerateContent\?alt=sse\n", text), text
    assert "127.0.0.1" not in text
