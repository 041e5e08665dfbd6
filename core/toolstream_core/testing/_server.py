"""The 127.0.0.1 HTTP server behind :class:`VendorEmulator` (asyncio, see ``_http``).

Responses are sent with ``Transfer-Encoding: chunked`` on HTTP/1.1 so that the
two kinds of premature end are distinguishable to a client, exactly as with a
real vendor: a *dropped connection* resets the socket without the final
zero-length chunk (httpx raises ``RemoteProtocolError``), while a *clean end
without a finish signal* completes the chunked body normally. A scripted stream
goes out in one write, with Nagle off: under load the per-frame writes were
most of the server's work, and the delayed ACK cost 40 ms a stream.
"""

from __future__ import annotations

import json
import logging
import threading
from collections import defaultdict, deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from types import TracebackType
from typing import Any, NamedTuple, TypeVar
from urllib.parse import urlsplit

from ._conversation import final_text, model_metadata, trailing_results
from ._http import BACKLOG, AsyncHTTPServer, Pause, Request, Response
from ._profile_render import profiled_complete, render_profiled
from ._profiles import PROFILES
from ._routes import (
    OLLAMA_INFO,
    REASONS,
    WIRES,
    Route,
    bad_request,
    check_applies,
    json_response,
    ollama_info,
    reply_response,
    route_for,
)
from ._scenarios import API_NAMES, build_script, scenario_rng
from ._wire_common import Rendered, Reply

T = TypeVar("T")

__all__ = ["BACKLOG", "DROPPED_HEADER", "SCENARIO_HEADER", "STALL_SCENARIO", "Hold", "Received",
           "Stall", "VendorEmulator"]

logger = logging.getLogger(__name__)

#: Response header set when ``soft_drop`` turned a dropped connection into a
#: clean end of body (vcrpy cannot record a broken body; replay uses the marker).
DROPPED_HEADER = "x-toolstream-transport"

_MODEL_PREFIX = "scenario:"
#: Request header naming the scenario (``name`` or ``name@tag``), for clients whose
#: model name is fixed (a framework class that validates it): it wins over the model.
SCENARIO_HEADER = "x-toolstream-scenario"
_TAG_SEP = "@"


class Received(NamedTuple):
    """One request the emulator answered: API name, URL path, parsed JSON body."""

    api: str
    path: str
    body: dict[str, Any]


#: What a stalled answer sends before it goes silent: this scenario's stream without its end
#: (a call whose arguments parse, and no terminal event).
STALL_SCENARIO = "dropped_connection"


@dataclass(frozen=True)
class Stall:
    """One stalled answer (:meth:`VendorEmulator.queue_stall`): the API it answered, and
    ``closed``, set once the client closed or shut down its end of the connection. A test
    waits on it (with a bound, against a hang) to see that a reader really cut the transport
    rather than leaving it to the SDK's read timeout; the server stopping does not set it."""

    api: str
    closed: threading.Event = field(default_factory=threading.Event, compare=False)
    #: The scenario sent before the stall, and how many frames (``None``: all; a slice bound).
    scenario: str = STALL_SCENARIO
    frames: int | None = None


@dataclass
class Hold:
    """A scenario played with its last frame held back (:meth:`VendorEmulator.queue_held`):
    everything before the stream's end goes out, then the server waits until ``release`` is
    set or ``timeout`` seconds pass. ``released``: ``True`` when ``release`` ended the wait,
    ``False`` when the timeout did, ``None`` while the stream has not got there. A test sets
    ``release`` from what the client did before the end (a tool that started), so the order
    of the two is asserted without timing anything."""

    api: str
    scenario: str
    timeout: float = 10.0
    release: threading.Event = field(default_factory=threading.Event, compare=False)
    released: bool | None = None

    def _resumed(self, released: bool) -> None:
        self.released = released


class _Body(NamedTuple):
    """A raw answer queued with :meth:`VendorEmulator.queue_body`."""

    body: bytes
    status: int
    headers: tuple[tuple[str, str], ...]
    drop: bool


class VendorEmulator:
    """A local server speaking the streaming wire formats of seven LLM APIs.

    Use as a context manager (or ``start()``/``stop()``). Each request plays one
    scenario: the one named by a model ``scenario:<name>``, else the next one
    queued for that API with :meth:`queue`, else ``text``. A scenario's bytes
    depend only on ``(seed, api, scenario)``.

    ``soft_drop`` (for recording cassettes) ends a ``dropped_connection`` body
    cleanly and marks it with the ``x-toolstream-transport: dropped`` header.

    ``profile`` (a name in :data:`~toolstream_core.testing.PROFILES`) streams the
    ``openai-chat`` answers the way that OpenAI-compatible server does (vLLM,
    Ollama, DeepSeek, Groq, Mistral, OpenRouter, a LiteLLM proxy); the other APIs
    are unaffected.

    A model ``scenario:<name>@<tag>`` plays ``<name>`` with the tag mixed into the
    seed: call ids and fragment cuts are then unique to the request, which is what
    a load test needs to prove that no stream received another's calls. The
    request header ``x-toolstream-scenario: <name>[@<tag>]`` does the same for a
    client whose model name is fixed.
    """

    def __init__(self, seed: int = 0, *, host: str = "127.0.0.1", port: int = 0,
                 soft_drop: bool = False, profile: str | None = None) -> None:
        if profile is not None and profile not in PROFILES:
            raise ValueError(f"unknown profile {profile!r}; known: {sorted(PROFILES)}")
        self.seed = seed
        self.soft_drop = soft_drop
        self.profile = profile
        self._host = host
        self._port = port
        self._lock = threading.Lock()
        self._queues: dict[str, deque[str]] = {api: deque() for api in API_NAMES}
        self._bodies: defaultdict[str, deque[_Body]] = defaultdict(deque)
        self._stalls: defaultdict[str, deque[Stall]] = defaultdict(deque)
        self._served_stalls: list[Stall] = []
        self._holds: defaultdict[str, deque[Hold]] = defaultdict(deque)
        self._requests: list[Received] = []
        self._headers: list[dict[str, str]] = []
        self._statuses: list[int] = []
        self._server: AsyncHTTPServer | None = None

    # -- lifecycle ---------------------------------------------------------------
    def start(self) -> VendorEmulator:
        """Bind and serve from a background event loop; returns ``self``."""
        if self._server is not None:
            return self
        self._server = AsyncHTTPServer(self._answer_logged, self._host, self._port, [
            ("Server", "toolstream-emulator/1"),
            # a fixed Date: a scenario's response bytes never depend on the clock
            ("Date", "Mon, 16 Jun 2025 00:00:00 GMT")])
        logger.debug("vendor emulator listening on %s", self.base_url)
        return self

    def stop(self) -> None:
        """Stop serving and close the socket (idempotent)."""
        server, self._server = self._server, None
        if server is not None:
            server.close()

    def __enter__(self) -> VendorEmulator:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

    # -- public API ----------------------------------------------------------------
    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT`` (OpenAI clients want ``base_url + "/v1"``)."""
        if self._server is None:
            raise RuntimeError("VendorEmulator is not started")
        host, port = self._server.address
        return f"http://{host!s}:{port}"

    def queue(self, api: str, *scenarios: str) -> None:
        """Play ``scenarios`` (in order) for the next requests to ``api``."""
        for name in scenarios:
            check_applies(api, name)
        with self._lock:
            self._queues[api].extend(scenarios)

    def queue_held(self, api: str, scenario: str, *, timeout: float = 10.0) -> Hold:
        """Queue ``scenario`` for ``api`` (as :meth:`queue`) with the stream's last frame held
        back until the returned hold's ``release`` is set or ``timeout`` seconds pass: a
        vendor that is slow to end a stream whose calls are complete (DESIGN 4.10)."""
        self.queue(api, scenario)
        return self._add(self._holds, api, Hold(api, scenario, timeout))

    @property
    def requests(self) -> list[Received]:
        """Every request received so far, oldest first (a copy)."""
        return self._copy(self._requests)

    @property
    def request_headers(self) -> list[dict[str, str]]:
        """The HTTP headers of each request in :attr:`requests` (same order), lower-cased names."""
        return [dict(h) for h in self._copy(self._headers)]

    def clear(self) -> None:
        """Forget received requests and queued scenarios."""
        with self._lock:
            self._requests.clear()
            self._headers.clear()
            self._statuses.clear()
            for q in self._queues.values():
                q.clear()
            self._bodies.clear()
            self._stalls.clear()
            self._served_stalls.clear()
            self._holds.clear()

    def queue_body(self, api: str, body: bytes, *, status: int = 200,
                   headers: Mapping[str, str] | None = None, drop: bool = False) -> None:
        """Answer the next request to ``api`` with ``body``, byte for byte.

        For inputs no scenario makes (a recorded stream, a fault spliced into one, a vendor
        error page). Queued bodies are played in order, before any scenario, to requests
        the vendor would accept (a history with an unanswered call still gets the vendor's
        400). The body goes out chunked; ``drop`` resets the connection after it instead of
        ending it cleanly. ``headers`` default to an SSE content type.
        """
        if api not in WIRES:
            raise ValueError(f"unknown API {api!r}; known: {list(API_NAMES)}")
        sent = dict(headers) if headers is not None else {"Content-Type": "text/event-stream; charset=utf-8"}
        self._add(self._bodies, api, _Body(bytes(body), status, tuple(sent.items()), drop))

    def queue_stall(self, api: str, *, scenario: str = STALL_SCENARIO,
                    frames: int | None = None) -> Stall:
        """Answer the next request to ``api`` with a stream that stalls: the frames of
        ``STALL_SCENARIO`` (a tool call whose arguments parse), then no more data, no end and
        no reset, until the client closes the connection. What a vendor or a proxy does when
        it hangs mid-stream; a reader must give up on it (``assemble_idle_timeout_s``).
        ``scenario`` and ``frames`` stall at a chosen point: after the first ``frames`` frames
        of ``scenario`` (``0``: before the first chunk; ``-1``: after the finish chunk).

        Returns the stall's record (also in :attr:`stalls` once served); its ``closed`` event
        is set when the client closes its end. Queued stalls are played before queued bodies
        and scenarios, to requests the vendor would accept.
        """
        check_applies(api, scenario)
        return self._add(self._stalls, api, Stall(api, scenario=scenario, frames=frames))

    @property
    def stalls(self) -> list[Stall]:
        """Every stalled answer served so far, oldest first (a copy)."""
        return self._copy(self._served_stalls)

    @property
    def statuses(self) -> list[int]:
        """The HTTP status answered to each request in :attr:`requests` (same order; 0: the
        connection was reset before any response)."""
        return self._copy(self._statuses)

    def _copy(self, items: Iterable[T]) -> list[T]:
        """``items`` as they are now (the handler threads add to them), read under the lock."""
        with self._lock:
            return list(items)

    def _add(self, queues: defaultdict[str, deque[T]], api: str, item: T) -> T:
        """Queue ``item`` for the next request to ``api`` that ``queues`` answers."""
        with self._lock:
            queues[api].append(item)
        return item

    # -- used by the handler -------------------------------------------------------
    def _answer_logged(self, request: Request) -> Response:
        """:meth:`_answer`, noting the status of every request it recorded."""
        with self._lock:
            before = len(self._requests)
        response = self._answer(request)
        with self._lock:
            if len(self._requests) > before:
                self._statuses.append(response.status)
        return response

    def _next_body(self, api: str) -> Response | None:
        """The response for the oldest body queued for ``api`` (None: none queued)."""
        with self._lock:
            queued = self._bodies.get(api)
            item = queued.popleft() if queued else None
        if item is None:
            return None
        framed = b"%x\r\n%s\r\n" % (len(item.body), item.body) if item.body else b""
        headers = [*item.headers, ("Transfer-Encoding", "chunked")]
        reason = REASONS.get(item.status, "Error")
        if item.drop:
            return Response(item.status, reason, headers, framed, chunked=True, abort=True)
        return Response(item.status, reason, headers, framed + b"0\r\n\r\n", chunked=True)

    def _record(self, item: Received, headers: dict[str, str]) -> None:
        with self._lock:
            self._requests.append(item)
            self._headers.append(headers)

    def _next_scenario(self, api: str, model: str, answered: bool = False) -> tuple[str, str]:
        """The scenario this request plays, and its tag (``""``: none).

        ``answered``: the request's history ends with tool results. A scenario named by
        the model (or the header) then gives way to the final answer, so an agent pointed
        at ``scenario:single_call`` runs its tool once and finishes instead of being asked
        to run it again on every turn. A queued scenario still plays: the queue is a
        script the caller wrote on purpose.
        """
        if model.startswith(_MODEL_PREFIX):
            name, _, tag = model[len(_MODEL_PREFIX):].partition(_TAG_SEP)
            return ("text" if answered else name), tag
        with self._lock:
            q = self._queues[api]
            return (q.popleft() if q else "text"), ""

    def _metadata(self, request: Request) -> Response:
        """A GET: the model list / model lookup routes, else the vendors' 404."""
        doc = model_metadata(request.target, request.headers)
        if doc is None:
            return json_response(404, {"error": {"message": f"no endpoint {request.target}",
                                         "type": "invalid_request_error"}})
        return json_response(200, doc)

    # -- the application ------------------------------------------------------------
    def _answer(self, request: Request) -> Response:
        """One HTTP request to one response (runs on the server's loop: quick, no I/O)."""
        path = urlsplit(request.target).path.rstrip("/")
        if path in OLLAMA_INFO:
            return ollama_info(request, path)
        if request.method == "GET":
            return self._metadata(request)
        if request.method != "POST":
            return json_response(404, {"error": {"message": "not found",
                                         "type": "invalid_request_error"}})
        try:
            body = json.loads(request.body or b"{}")
        except ValueError:
            return json_response(400, {"error": {"message": "request body is not JSON",
                                         "type": "invalid_request_error"}})
        if not isinstance(body, dict):
            body = {}
        route = route_for("POST", request.target, body)
        if route is None:
            return json_response(404, {"error": {"message": f"no endpoint {request.target}",
                                         "type": "invalid_request_error"}})
        self._record(Received(route.api, request.target, body), dict(request.headers))
        wire = route.wire or WIRES[route.api]
        rejected: Reply | None = wire.check_history(body)
        if rejected is not None:
            return reply_response(rejected)
        stalled = self._next_stall(route, body)
        if stalled is not None:
            return stalled
        queued = self._next_body(route.api)
        if queued is not None:
            return queued
        picked = request.headers.get(SCENARIO_HEADER)
        results = trailing_results(route.api, body)
        name, tag = self._next_scenario(route.api, _MODEL_PREFIX + picked if picked
                                        else route.model, bool(results))
        try:
            check_applies(route.api, name)
        except ValueError as exc:
            return reply_response(bad_request(route.api, str(exc)))
        seed = f"{self.seed}{_TAG_SEP}{tag}" if tag else self.seed
        script = build_script(name, scenario_rng(seed, route.api, name))
        if name == "text":  # the text answer says what the request's tool results were
            script = replace(script, text=final_text(results))
        rng = scenario_rng(seed, route.api, name + "/wire")
        model = route.model or "emulated-model"
        profile = PROFILES.get(self.profile or "") if route.api == "openai-chat" else None
        if route.stream:
            rendered: Rendered = (render_profiled(profile, script, rng, model, body)
                                  if profile is not None
                                  else wire.render_stream(script, rng, model, body))
            return self._stream(rendered, name, self._next_hold(route.api, name))
        reply: Reply = wire.render_complete(script, rng, model, body)
        if profile is not None:
            reply = profiled_complete(profile, reply)
        if reply.body is None:  # a dropped connection: no response at all
            return Response(0, "", [], b"", abort=True)
        return reply_response(reply)

    def _next_stall(self, route: Route, body: dict[str, Any]) -> Response | None:
        """The stalled answer queued for ``route.api`` (None: none queued): a stream's
        ``STALL_SCENARIO`` frames (in the ``profile``'s way on OpenAI chat), or for a
        whole-answer request only the head, then held."""
        with self._lock:
            queued = self._stalls.get(route.api)
            stall = queued.popleft() if queued else None
            if stall is not None:
                self._served_stalls.append(stall)
        if stall is None:
            return None
        frames: list[bytes] = []
        content_type = "application/json"
        if route.stream:
            script = build_script(stall.scenario, scenario_rng(self.seed, route.api, stall.scenario))
            rng = scenario_rng(self.seed, route.api, stall.scenario + "/wire")
            wire = route.wire or WIRES[route.api]
            model = route.model or "emulated-model"
            profile = PROFILES.get(self.profile or "") if route.api == "openai-chat" else None
            rendered: Rendered = (render_profiled(profile, script, rng, model, body)
                                  if profile is not None
                                  else wire.render_stream(script, rng, model, body))
            frames, content_type = rendered.frames, rendered.content_type
            if stall.frames is not None:
                frames = frames[:stall.frames]
        headers = [("Content-Type", content_type), ("Cache-Control", "no-cache"),
                   ("Transfer-Encoding", "chunked")]
        framed = b"".join(b"%x\r\n%s\r\n" % (len(frame), frame) for frame in frames)
        return Response(200, "OK", headers, framed, chunked=True, held=stall.closed.set)

    def _next_hold(self, api: str, scenario: str) -> Pause | None:
        """The pause of the hold queued for this stream, if its scenario is the one played."""
        with self._lock:
            queued = self._holds.get(api)
            if not queued or queued[0].scenario != scenario:
                return None
            hold = queued.popleft()
        return Pause(0, hold.release, hold.timeout, hold._resumed)

    def _stream(self, rendered: Rendered, scenario: str, pause: Pause | None = None) -> Response:
        soft = rendered.drop and self.soft_drop
        headers = [("Content-Type", rendered.content_type),
                   ("Cache-Control", "no-cache"), ("Transfer-Encoding", "chunked"),
                   ("x-toolstream-scenario", scenario)]
        if soft:
            headers.append((DROPPED_HEADER, "dropped"))
        headers += list(rendered.headers.items())
        chunks = [b"%x\r\n%s\r\n" % (len(frame), frame) for frame in rendered.frames]
        body = b"".join(chunks)
        held = len(body) - len(chunks[-1]) if chunks else 0  # before the last frame
        pause = pause._replace(at=held) if pause is not None and chunks else None
        if rendered.drop and not soft:
            return Response(200, "OK", headers, body, chunked=True, abort=True)
        return Response(200, "OK", headers, body + b"0\r\n\r\n", chunked=True, pause=pause)
