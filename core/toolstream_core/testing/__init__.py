"""Test kit: a local vendor wire emulator, scenarios, cassettes and a pytest plugin.

Shipped so you can test your own agent against the stream faults toolstream
guards against, without a network or a key. The core state machine never
imports this package.

Emulator::

    from toolstream_core.testing import VendorEmulator, SCENARIOS, TOOLS

    with VendorEmulator(seed=0) as emu:            # starts / stops the server
        emu.base_url                               # "http://127.0.0.1:PORT"
        emu.queue("openai-chat", "truncated_length")  # next request on that API
        emu.requests                               # [(api, path, json_body), ...]
        stall = emu.queue_stall("anthropic")       # next request: a call's start, then silence
        stall.closed.wait(10)                      # set once the client cut the connection

Point the real SDKs at it:

- OpenAI (chat and Responses): ``openai.OpenAI(base_url=emu.base_url + "/v1", api_key="test")``
- Anthropic: ``anthropic.Anthropic(base_url=emu.base_url, api_key="test")``
- Gemini: ``google.genai.Client(api_key="test",
  http_options=types.HttpOptions(base_url=emu.base_url))``
- Bedrock: ``boto3.client("bedrock-runtime", region_name="us-east-1",
  endpoint_url=emu.base_url, aws_access_key_id="x", aws_secret_access_key="x")``
- Ollama: ``ollama.Client(host=emu.base_url)``
- Cohere: ``cohere.ClientV2(api_key="test", base_url=emu.base_url)``

(`toolstream_core.vendors.make_client` builds each of them.)

APIs: ``"openai-chat"`` (``POST /v1/chat/completions``), ``"openai-responses"``
(``POST /v1/responses``), ``"anthropic"`` (``POST /v1/messages``; also Bedrock InvokeModel's
``POST /model/{modelId}/invoke-with-response-stream`` and ``/invoke``, the same scenarios in
Bedrock's framing: each Messages event base64 in an event-stream ``chunk``), ``"gemini"``
(``POST /v1beta/models/{model}:streamGenerateContent?alt=sse`` and
``:generateContent``), ``"bedrock-converse"`` (``POST /model/{modelId}/converse-stream``
as AWS event-stream frames, and ``/converse``), ``"ollama"`` (``POST /api/chat``, NDJSON
unless ``"stream": false``; ``/api/show``, ``/api/tags``, ``/api/version`` too) and
``"cohere"`` (``POST /v2/chat``). Bedrock's model is in the URL path, so
``modelId="scenario:<name>"`` picks the scenario there.

Which scenario a request plays: a model named ``scenario:<name>`` picks it for
that request; otherwise the next name queued for the API; otherwise ``text`` (a
short final answer, so an agent loop ends after running its tools). SDK retries
(e.g. on the 500 of a non-streamed ``error_event``) are requests too and take
the next queued scenario.

Scenarios (``SCENARIOS[name].apis`` says where each exists;
``SCENARIOS[name].expect`` what a correct assembler reports): ``text``,
``single_call``, ``parallel_calls``, ``no_args``, ``large_args``, ``non_ascii``,
``resent_duplicate``, ``truncated_length``, ``dropped_connection``,
``no_finish``, ``error_event`` on every API; ``missing_index``,
``id_name_repeated``, ``empty_id_later`` on ``openai-chat`` only;
``partial_args`` on ``gemini`` only. Argument fragments are cut by a rule
seeded with ``(seed, api, scenario)`` that cuts inside strings, next to
multi-byte characters and inside ``\\uXXXX`` and short escapes.

Like the real vendors, a request whose history holds a tool call without its
tool result (or a result without its call) gets the vendor's 400 error body.
Non-streamed requests get the whole message (a call cut by max tokens is left
out where the vendor's message cannot hold partial JSON), a 500/529 error body
for ``error_event``, and a dropped socket for ``dropped_connection``.
``history_pairing(api, body)`` judges a logged request body both ways (every call
answered once, every result with its call, every call's arguments a JSON object).

OpenAI-compatible servers: ``VendorEmulator(profile="vllm")`` (or ``ollama``,
``deepseek``, ``groq``, ``mistral``, ``openrouter``, ``litellm``, ``litellm-ollama``,
``nvidia``; see
``PROFILES``) streams the ``openai-chat`` answers with that server's documented
quirks, each cited in the profile's docstring. A model ``scenario:<name>@<tag>``
mixes ``<tag>`` into the seed, so the request gets its own call ids.

Tools used by the scenarios: ``write_file(path, content)``, ``get_weather(city)``,
``get_time()``; their JSON Schemas are ``TOOLS``.

Cassettes and the pytest plugin: see :mod:`toolstream_core.testing.pytest_plugin`
(fixture ``toolstream_emulator``, marker ``toolstream_cassette("anthropic/truncated_length")``)
and the vcrpy configurations ``recording_vcr()`` (scrubs credentials) and ``replay_vcr()``
(offline). ``stream_sdk`` streams one request through a real SDK; ``load_sources`` reads
recordings (JSONL streams, cassettes) into the vendor events they hold.

Fuzzing your own recordings: ``run_fuzz(["cassettes/"], cases=20_000, seed=0)`` returns a
``FuzzReport`` (per-API and per-mutation counts, every ``Violation`` with a one-line
reproduction); the same as ``toolstream fuzz PATH...``. See :mod:`toolstream_core.testing.fuzz`.

The names load on first use (PEP 562, see ``toolstream_core._lazy``): the pytest plugin is
a submodule of this package, and pytest imports it in every run of a project that
installed ``toolstream-gate``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._clients import (
        DEFAULT_PROMPT,
        StreamResult,
        followup_sdk,
        openai_chat_tools,
        scenario_tools,
        stream_sdk,
    )
    from ._drops import is_dropped_connection, replaying_drops
    from ._pairing import PairingProblem, history_pairing, sent_calls
    from ._profiles import PROFILES, Profile
    from ._recording import default_cassette_dir, recording_vcr, replay_vcr, use_cassette
    from ._scenarios import API_NAMES, SCENARIOS, TOOLS, Expectation, Scenario
    from ._server import DROPPED_HEADER, STALL_SCENARIO, Received, Stall, VendorEmulator
    from ._sources import (
        SourceError,
        StreamSource,
        api_from_uri,
        decode_body,
        expand_paths,
        load_sources,
        read_cassette,
        request_model,
        response_body,
    )
    from .fuzz import FuzzReport, Violation, run_fuzz

__all__ = [
    "API_NAMES",
    "DEFAULT_PROMPT",
    "DROPPED_HEADER",
    "PROFILES",
    "SCENARIOS",
    "STALL_SCENARIO",
    "TOOLS",
    "Expectation",
    "FuzzReport",
    "PairingProblem",
    "Profile",
    "Received",
    "Scenario",
    "SourceError",
    "Stall",
    "StreamResult",
    "StreamSource",
    "VendorEmulator",
    "Violation",
    "api_from_uri",
    "decode_body",
    "default_cassette_dir",
    "expand_paths",
    "followup_sdk",
    "history_pairing",
    "is_dropped_connection",
    "load_sources",
    "openai_chat_tools",
    "read_cassette",
    "recording_vcr",
    "replay_vcr",
    "replaying_drops",
    "request_model",
    "response_body",
    "run_fuzz",
    "scenario_tools",
    "sent_calls",
    "stream_sdk",
    "use_cassette",
]

#: The module each public name lives in (the ``TYPE_CHECKING`` imports above, for readers and
#: type checkers; ``tests/test_layers.py`` keeps the three lists equal).
_HOME = {
    **dict.fromkeys(("DEFAULT_PROMPT", "StreamResult", "followup_sdk", "openai_chat_tools", "scenario_tools",
                     "stream_sdk"), "_clients"),
    **dict.fromkeys(("PairingProblem", "history_pairing", "sent_calls"), "_pairing"),
    **dict.fromkeys(("PROFILES", "Profile"), "_profiles"),
    **dict.fromkeys(("is_dropped_connection", "replaying_drops"), "_drops"),
    **dict.fromkeys(("default_cassette_dir", "recording_vcr", "replay_vcr", "use_cassette"), "_recording"),
    **dict.fromkeys(("API_NAMES", "SCENARIOS", "TOOLS", "Expectation", "Scenario"), "_scenarios"),
    **dict.fromkeys(("DROPPED_HEADER", "STALL_SCENARIO", "Received", "Stall", "VendorEmulator"),
                    "_server"),
    **dict.fromkeys(("SourceError", "StreamSource", "api_from_uri", "decode_body", "expand_paths",
                     "load_sources", "read_cassette", "request_model", "response_body"), "_sources"),
    **dict.fromkeys(("FuzzReport", "Violation", "run_fuzz"), "fuzz"),
}


def __getattr__(name: str) -> Any:
    """Load a public name's module on first use and keep the name here (PEP 562)."""
    from .._lazy import load

    return load(globals(), _HOME, name)


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
