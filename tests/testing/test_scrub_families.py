"""Every credential of every family the project records stays out of a cassette.

One test per family records a streamed turn through the family's real SDK client, configured
with canary credentials in the form that family sends them, against the project's emulator,
through the recorder's scrubbing vcrpy configuration. Each asserts that the canary went over
the wire (the emulator, or botocore's own ``before-send`` hook, saw it) and that no byte of it
reached the cassette file, and that the scrubbed request still says which header was there.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest
from toolstream_core.testing import VendorEmulator
from toolstream_core.testing._recording import REDACTED, Scrubber, recording_vcr

# Not token-shaped: only the "secret header / query value" nets can catch them.
KEY = "cnryKEY5f1e2d9c7b3a"
TOKEN = "cnryTOKEN0a1b2c3d4e5f6a7b8c9d"
USER = [{"role": "user", "content": "hi"}]


def _record(emulator: VendorEmulator, out: Path, turn: Callable[[], Any]) -> str:
    """Run ``turn`` under the recording configuration; the cassette's text."""
    emulator.clear()
    with recording_vcr().use_cassette(str(out), record_mode="all") as cassette:
        turn()
    assert len(cassette.requests) >= 1, "nothing was recorded"
    data = out.read_bytes()
    return data.decode("utf-8", "replace")


def _assert_clean(text: str, raw: bytes, *secrets: str) -> None:
    for secret in secrets:
        assert secret not in text, f"{secret!r} reached the cassette"
        assert secret.encode() not in raw


def _sent(emulator: VendorEmulator, header: str) -> list[str]:
    return [h[header] for h in emulator.request_headers if header in h]


# -- AWS: SigV4 Authorization, X-Amz-Security-Token -------------------------------------------


def test_bedrock_session_credentials_never_reach_a_cassette(emulator: VendorEmulator,
                                                            tmp_path: Path) -> None:
    boto3 = pytest.importorskip("boto3")
    from botocore.config import Config

    access_key = "ASIA" + "CNRY" * 4  # the shape of a temporary key id
    client = boto3.client(
        "bedrock-runtime", region_name="us-east-1", endpoint_url=emulator.base_url,
        aws_access_key_id=access_key, aws_secret_access_key=KEY, aws_session_token=TOKEN,
        config=Config(retries={"max_attempts": 1}))
    wire: list[dict[str, str]] = []

    def capture(request: Any, **_: Any) -> None:
        wire.append({k.lower(): v.decode() if isinstance(v, bytes) else v
                     for k, v in request.headers.items()})

    client.meta.events.register("before-send.bedrock-runtime.*", capture)
    out = tmp_path / "bedrock.yaml"

    def turn() -> None:
        response = client.converse_stream(modelId="scenario:single_call",
                                          messages=[{"role": "user", "content": [{"text": "hi"}]}])
        list(response["stream"])

    text = _record(emulator, out, turn)
    [sent] = wire
    assert sent["x-amz-security-token"] == TOKEN
    signature = re.search(r"Signature=([0-9a-f]{64})", sent["authorization"])
    assert signature is not None and access_key in sent["authorization"]
    assert "x-amz-date" in sent
    _assert_clean(text, out.read_bytes(), TOKEN, KEY, access_key, signature.group(1))
    # the headers are still there, redacted; the harmless AWS ones are kept
    assert re.search(r"(?i)x-amz-security-token:\n\s*- " + REDACTED, text), text
    assert re.search(r"(?i)authorization:\n\s*- " + REDACTED, text), text
    assert re.search(r"(?i)x-amz-date:", text)


def test_presigned_aws_query_credentials_are_removed() -> None:
    class Request:
        uri = ("https://bedrock-runtime.us-east-1.amazonaws.com/model/m/converse?"
               f"X-Amz-Credential=ASIACNRYCNRYCNRYCNRY%2F20260101&X-Amz-Security-Token={TOKEN}"
               "&X-Amz-Signature=" + "ab" * 32 + "&X-Amz-Date=20260101T000000Z")
        headers: dict[str, str] = {}
        body = b""

        @property
        def query(self) -> list[tuple[str, str]]:
            return parse_qsl(urlsplit(self.uri).query)

    import vcr.filters  # type: ignore[import-untyped]
    from toolstream_core.testing._recording import SECRET_QUERY_PARAMETERS

    scrub = Scrubber()
    request = vcr.filters.replace_query_parameters(
        Request(), [(q, scrub.query_replacement) for q in SECRET_QUERY_PARAMETERS])
    request = scrub.before_record_request(request)
    assert TOKEN not in request.uri and "ab" * 32 not in request.uri and "ASIACNRY" not in request.uri
    assert "X-Amz-Date=20260101T000000Z" in request.uri


# -- Azure OpenAI: api-key, and an Azure AD bearer ----------------------------------------------


@pytest.mark.parametrize("auth", ["api-key", "ad-token"])
def test_azure_openai_key_and_ad_token_never_reach_a_cassette(auth: str, emulator: VendorEmulator,
                                                              tmp_path: Path) -> None:
    """Through the emulator's Azure deployment route; an httpx request hook on the client
    shows what was sent."""
    openai = pytest.importorskip("openai")
    import httpx

    wire: list[httpx.Headers] = []
    credentials: dict[str, Any] = ({"api_key": KEY} if auth == "api-key"
                                   else {"azure_ad_token": TOKEN})
    client = openai.AzureOpenAI(
        azure_endpoint=emulator.base_url, api_version="2024-10-21", max_retries=0,
        http_client=httpx.Client(event_hooks={"request": [lambda r: wire.append(r.headers)]}),
        **credentials)
    out = tmp_path / "azure.yaml"

    def turn() -> None:
        assert list(client.chat.completions.create(model="gpt-4o", messages=USER, stream=True))

    text = _record(emulator, out, turn)
    [sent] = wire
    if auth == "api-key":
        assert sent["api-key"] == KEY
        assert re.search(r"api-key:\n\s*- " + REDACTED, text), text
    else:
        assert sent["authorization"] == f"Bearer {TOKEN}"
    assert "/openai/deployments/gpt-4o/chat/completions" in text
    _assert_clean(text, out.read_bytes(), KEY, TOKEN)


# -- Gemini API (api key, header and ?key=) and Vertex AI (OAuth bearer) ------------------------


@pytest.mark.parametrize("auth", ["api-key", "bearer", "query-key"])
def test_gemini_key_and_bearer_never_reach_a_cassette(auth: str, emulator: VendorEmulator,
                                                      tmp_path: Path) -> None:
    genai = pytest.importorskip("google.genai")
    from google.genai import types

    headers = {"Authorization": f"Bearer ya29.{TOKEN}"} if auth == "bearer" else {}
    client = genai.Client(api_key=KEY, http_options=types.HttpOptions(
        base_url=emulator.base_url, headers=headers))
    out = tmp_path / "gemini.yaml"
    if auth == "query-key":  # the REST form older Google clients use
        import httpx

        def turn() -> None:
            httpx.post(f"{emulator.base_url}/v1beta/models/scenario:single_call:streamGenerateContent"
                       f"?alt=sse&key={KEY}",
                       json={"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}
                       ).raise_for_status()
    else:
        def turn() -> None:
            list(client.models.generate_content_stream(model="scenario:single_call", contents="hi"))
    text = _record(emulator, out, turn)
    if auth == "query-key":
        assert any(f"key={KEY}" in r.path for r in emulator.requests)
    else:
        assert _sent(emulator, "x-goog-api-key") == [KEY]
    if auth == "bearer":
        assert _sent(emulator, "authorization") == [f"Bearer ya29.{TOKEN}"]
    _assert_clean(text, out.read_bytes(), KEY, TOKEN)


def test_vertex_oauth_bearer_never_reaches_a_cassette(emulator: VendorEmulator, tmp_path: Path) -> None:
    genai = pytest.importorskip("google.genai")
    from google.genai import types
    from google.oauth2.credentials import Credentials

    client = genai.Client(vertexai=True, project="canary-project", location="us-central1",
                          credentials=Credentials(token=f"ya29.{TOKEN}"),
                          http_options=types.HttpOptions(base_url=emulator.base_url, api_version="v1"))
    out = tmp_path / "vertex.yaml"
    text = _record(emulator, out, lambda: list(client.models.generate_content_stream(
        model="scenario:single_call", contents="hi")))
    assert _sent(emulator, "authorization") == [f"Bearer ya29.{TOKEN}"]
    _assert_clean(text, out.read_bytes(), TOKEN)
    assert "canary-project" in text  # a project id is not a credential: the path keeps it


# -- Cohere and Mistral: bearer keys ------------------------------------------------------------


def test_cohere_bearer_never_reaches_a_cassette(emulator: VendorEmulator, tmp_path: Path) -> None:
    cohere = pytest.importorskip("cohere")
    client = cohere.ClientV2(api_key=KEY, base_url=emulator.base_url)
    out = tmp_path / "cohere.yaml"
    text = _record(emulator, out, lambda: list(client.chat_stream(
        model="scenario:single_call", messages=USER)))
    assert _sent(emulator, "authorization") == [f"Bearer {KEY}"]
    _assert_clean(text, out.read_bytes(), KEY)


def test_mistral_bearer_never_reaches_a_cassette(tmp_path: Path) -> None:
    openai = pytest.importorskip("openai")
    with VendorEmulator(profile="mistral") as emu:
        client = openai.OpenAI(base_url=emu.base_url + "/v1", api_key=KEY, max_retries=0)
        out = tmp_path / "mistral.yaml"
        text = _record(emu, out, lambda: list(client.chat.completions.create(
            model="scenario:single_call", messages=USER, stream=True)))
        assert _sent(emu, "authorization") == [f"Bearer {KEY}"]
    _assert_clean(text, out.read_bytes(), KEY)


# -- Ollama: usually no credential; a bearer when a proxy sits in front -------------------------


def test_ollama_proxy_bearer_never_reaches_a_cassette(emulator: VendorEmulator, tmp_path: Path) -> None:
    ollama = pytest.importorskip("ollama")
    client = ollama.Client(host=emulator.base_url, headers={"Authorization": f"Bearer {TOKEN}"})
    out = tmp_path / "ollama.yaml"
    text = _record(emulator, out, lambda: list(client.chat(
        model="scenario:single_call", messages=USER, stream=True)))
    assert _sent(emulator, "authorization") == [f"Bearer {TOKEN}"]
    _assert_clean(text, out.read_bytes(), TOKEN)


# -- the second net: token shapes never seen in a header ----------------------------------------


@pytest.mark.parametrize("token", [
    "ya29.a0AfH6SMBx-CanaryOAuthToken_123",  # Google OAuth access token
    "ASIAQWERTYUIOPASDFGH",  # AWS temporary access key id
    "AKIAQWERTYUIOPASDFGH",  # AWS long-term access key id
])
def test_cloud_token_shapes_are_scrubbed_from_bodies(token: str) -> None:
    scrub = Scrubber()
    assert token not in scrub.scrub_text(f'{{"note": "the key is {token} ok"}}')
    assert "the key is" in scrub.scrub_text(f"the key is {token}")


def test_no_bundled_cassette_holds_a_credential_of_any_family() -> None:
    """Every cassette the project ships, scenario, profile and real ones alike."""
    import yaml
    from toolstream_core.testing._recording import CASSETTE_DIR, SECRET_HEADERS, SECRET_QUERY_PARAMETERS

    paths = sorted(CASSETTE_DIR.rglob("*.yaml"))
    assert len(paths) > 100
    secret_queries = {q.lower() for q in SECRET_QUERY_PARAMETERS}
    for path in paths:
        for interaction in yaml.safe_load(path.read_text(encoding="utf-8"))["interactions"]:
            request = interaction["request"]
            for name, values in (request.get("headers") or {}).items():
                if name.lower() in SECRET_HEADERS:
                    assert values == [REDACTED], (path, name)
            query = {k.lower() for k, _ in parse_qsl(urlsplit(request["uri"]).query)}
            assert not query & secret_queries, (path, request["uri"])
