"""A cassette's dropped connection, replayed as one (``use_cassette`` turns it on).

vcrpy cannot store a body that broke off, so the emulator's
``soft_drop`` mode records it as a clean body marked ``x-toolstream-transport:
dropped``; :func:`replaying_drops` makes replay raise the transport error
(``RemoteProtocolError``) at the end of such a body, as the live server did. Some
SDKs wrap it in their own class (openai 3.x: ``APIConnectionError``);
:func:`is_dropped_connection` recognises every form.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

from ._server import DROPPED_HEADER

__all__ = ["is_dropped_connection", "replaying_drops"]

_drop_lock = threading.Lock()
_drop_depth = 0
_drop_original: Any = None


def _marked_dropped(vcr_response: dict[str, Any]) -> bool:
    for name, values in (vcr_response.get("headers") or {}).items():
        if name.lower() == DROPPED_HEADER:
            vals = values if isinstance(values, list) else [values]
            return any(str(v).lower() == "dropped" for v in vals)
    return False


def _dropping_stream(body: bytes, httpx: Any) -> Any:
    """A response stream that yields ``body`` and then fails like a cut connection."""

    def fail() -> Exception:
        error: Exception = httpx.RemoteProtocolError(
            "peer closed connection without sending complete message body "
            "(replayed from a cassette recorded as a dropped connection)"
        )
        return error

    def __iter__(self: Any) -> Iterator[bytes]:
        if body:
            yield body
        raise fail()

    async def __aiter__(self: Any) -> Any:
        if body:
            yield body
        raise fail()

    def close(self: Any) -> None:
        return None

    async def aclose(self: Any) -> None:
        return None

    cls = type("DroppedStream", (httpx.SyncByteStream, httpx.AsyncByteStream),
               {"__iter__": __iter__, "__aiter__": __aiter__, "close": close,
                "aclose": aclose})
    return cls()


#: Exception classes (by name, in these modules) that mean the connection broke mid-body.
_TRANSPORT_CLASSES = frozenset({"TransportError", "ClientPayloadError", "ProtocolError"})
_TRANSPORT_MODULES = ("httpx", "httpx2", "httpcore", "aiohttp", "urllib3")


def is_dropped_connection(exc: BaseException | None) -> bool:
    """Did a stream end because the connection broke (as opposed to a vendor error)?

    The same cut body surfaces differently by SDK major and HTTP stack: httpx's
    (or httpx2's) ``RemoteProtocolError`` from anthropic 2.x, google-genai and
    openai 2.x, openai 3.x's ``APIConnectionError`` wrapping it, aiohttp's
    ``ClientPayloadError`` on google-genai's async path, urllib3's
    ``ProtocolError`` under boto3. Tests that mean "the
    transport broke" ask this instead of naming one of those classes.
    """
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        for cls in type(exc).__mro__:
            if cls.__name__ in _TRANSPORT_CLASSES and cls.__module__.startswith(_TRANSPORT_MODULES):
                return True
        exc = exc.__cause__ or exc.__context__
    return False


@contextlib.contextmanager
def replaying_drops() -> Iterator[None]:
    """While active, cassette bodies marked dropped raise ``RemoteProtocolError`` at their end.

    Wraps vcrpy's httpx response builder (a private function; if a vcrpy
    release renames it, replay degrades to a clean end of body and the
    ``x-toolstream-transport`` header stays available to the caller), and the
    urllib3 response's ``stream`` (boto3), which raises urllib3's
    ``ProtocolError`` there instead.
    """
    with _urllib3_drops(), _httpx_drops():
        yield


@contextlib.contextmanager
def _urllib3_drops() -> Iterator[None]:
    """Marked bodies read through vcrpy's urllib3 stub (boto3's path) end in ``ProtocolError``."""
    try:
        from urllib3.exceptions import ProtocolError
        from vcr.stubs import VCRHTTPResponse  # type: ignore[import-untyped]
    except ImportError:  # pragma: no cover - no urllib3 stub: replay ends cleanly
        yield
        return
    original = VCRHTTPResponse.stream

    def stream(self: Any, amt: int = 65536, decode_content: Any = None) -> Iterator[bytes]:
        yield from original(self, amt, decode_content)
        if _marked_dropped(self.recorded_response):
            raise ProtocolError("Response ended prematurely (replayed from a cassette "
                                "recorded as a dropped connection)")

    with _drop_lock:
        if VCRHTTPResponse.stream is original and _drop_depth == 0:
            VCRHTTPResponse.stream = stream
    try:
        yield
    finally:
        with _drop_lock:
            if _drop_depth == 0 and VCRHTTPResponse.stream is stream:
                VCRHTTPResponse.stream = original


@contextlib.contextmanager
def _httpx_drops() -> Iterator[None]:
    global _drop_depth, _drop_original
    try:
        from vcr.stubs import httpx_stubs
    except ImportError:  # pragma: no cover - vcrpy without httpx support
        yield
        return
    with _drop_lock:
        if _drop_depth == 0 and hasattr(httpx_stubs, "_deserialize_response"):
            original = httpx_stubs._deserialize_response
            _drop_original = original

            def deserialize(vcr_response: dict[str, Any], httpx: Any) -> Any:
                response = original(vcr_response, httpx)
                if _marked_dropped(vcr_response):
                    data = vcr_response["body"]["string"]
                    if isinstance(data, str):
                        data = data.encode("utf-8")
                    response.stream = _dropping_stream(data or b"", httpx)
                return response

            httpx_stubs._deserialize_response = deserialize
        _drop_depth += 1
    try:
        yield
    finally:
        with _drop_lock:
            _drop_depth -= 1
            if _drop_depth == 0 and _drop_original is not None:
                httpx_stubs._deserialize_response = _drop_original
                _drop_original = None
