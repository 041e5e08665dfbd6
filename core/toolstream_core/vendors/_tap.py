"""See a vendor SDK's own stream events under any framework, unchanged.

Why this exists: framework integrations turn vendor events into their own chunks and lose
what the gate needs to prove a call complete (LangChain's ``ChatOpenAI`` drops a tool-call
delta without ``index``, ``ChatAnthropic`` and LlamaIndex's ``Anthropic`` never surface
``message_stop``...). So a shim does not judge the framework's chunks: it hands the framework
a private copy of the model whose SDK client is wrapped in the transparent proxy made here
(`tap_client`). The proxy intercepts only the streaming calls (``chat.completions.create(
stream=True)``, ``responses.create(stream=True)``, ``messages.create(stream=True)``,
``*.stream(...)``, ``models.generate_content_stream``) and hands each event to a `RawSink`
*before* the framework sees it; everything else passes through. The one thing it changes on
the way out is decided elsewhere: an intercepted request goes to the SDK as the core's
outgoing-message rules say (``_requests.sent_request``: what the framework could not say).

This module knows the SDKs (which call streams, which provider it speaks, how its result is
iterated) and nothing of any framework: which field of a framework's model holds the client
is the shim's business. It imports no SDK either; it recognises their objects by module.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from contextlib import contextmanager, nullcontext
from typing import Any, Protocol

from .._idle import AsyncIdleGuard, IdleGuard
from .._requests import sent_request
from .._string_arguments import with_string_arguments
from ._convert import events_for_response
from ._sdk_calls import _CALLS, _FORMS, _SYNC_STREAMS, _cohere_v1_text, sdk_of

__all__ = ["RawSink", "Reshape", "guarded", "idle_timeout_of", "sdk_of", "tap_client"]

_log = logging.getLogger(__name__)

# Resource / namespace objects of the vendor SDKs: the only things the proxy wraps.
_NAMESPACE_MODULES = (
    "openai.resources",
    "openai._client",
    "anthropic.resources",
    "anthropic._client",
    "google.genai.models",
    "google.genai.client",
    "cohere.v2.",  # ``cohere.Client().v2``, where ``ChatCohere`` calls the v2 chat
    "mistralai.client.",  # ``Mistral().chat``, where LlamaIndex's ``MistralAI`` streams
)


class RawSink(Protocol):
    """Receives the vendor events of one model call, in wire order.

    A sink may also have an ``idle_timeout_s`` attribute (seconds, ``GateSession`` has it):
    the tap then reads the SDK's stream through an idle guard (`guarded`), so a stream that
    sends nothing for that long is cut, its connection closed, and ``StreamIdleTimeout``
    raised to the framework, which ends it like any broken stream (``raw_end`` gets it).
    """

    def raw_start(self, provider: str, request: Mapping[str, Any]) -> None:
        """A streaming request is sent; ``request`` holds its keyword arguments."""

    def raw_event(self, event: Any) -> bool | None:
        """One wire event. ``False``: the framework need not see it (a bare fragment of a call
        that already failed, ``GateSession.spent``), so the tap withholds it."""

    def raw_end(self, error: BaseException | None) -> None: ...


class _FormedSink:
    """A sink that hands on each event in the SDK's wire form (``_FORMS``)."""

    __slots__ = ("_form", "_sink")

    def __init__(self, sink: RawSink, form: Callable[[Any], Any]) -> None:
        self._sink = sink
        self._form = form

    def raw_start(self, provider: str, request: Mapping[str, Any]) -> None:
        self._sink.raw_start(provider, request)

    def raw_event(self, event: Any) -> bool | None:
        try:
            event = self._form(event)
        except Exception:  # not the SDK's object after all: the adapter judges it as it is
            _log.debug("toolstream: could not read an SDK event's wire form", exc_info=True)
        return self._sink.raw_event(event)

    def raw_end(self, error: BaseException | None) -> None:
        self._sink.raw_end(error)

    @property
    def idle_timeout_s(self) -> float | None:
        return idle_timeout_of(self._sink)

class _NamespaceTap:
    """Proxy for an SDK client or resource: forwards everything, intercepts streaming calls."""

    __slots__ = ("_path", "_sdk", "_sink", "_target")

    def __init__(self, target: Any, sink: RawSink, sdk: str, path: tuple[str, ...] = ()) -> None:
        object.__setattr__(self, "_target", target)
        object.__setattr__(self, "_sink", sink)
        object.__setattr__(self, "_sdk", sdk)
        object.__setattr__(self, "_path", path)

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._target, name)
        if name in _CALLS[self._sdk][0] and callable(value):
            return self._intercept(value, name)
        if _is_namespace(value):
            return _NamespaceTap(value, self._sink, self._sdk, (*self._path, name))
        return value

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._target, name, value)

    def __repr__(self) -> str:
        return f"<toolstream tap of {self._target!r}>"

    def _intercept(self, method: Callable[..., Any], name: str) -> Callable[..., Any]:
        sink, path, owner = self._sink, (*self._path, name), self._target
        classify = _CALLS[self._sdk][1]

        forms = _FORMS.get(self._sdk)
        synchronous = (self._sdk, name) in _SYNC_STREAMS

        def call(*args: Any, **kwargs: Any) -> Any:
            kind = classify(owner, path, kwargs)
            if kind is None:  # not read here (a whole answer), but sent as the gate says
                return method(*args, **(sent_request(self._sdk, kwargs) if name == "create"
                                        else kwargs))
            provider, whole = kind
            kwargs = sent_request(provider, kwargs)
            sink.raw_start(provider, kwargs)
            try:
                result = method(*args, **kwargs)
            except BaseException as exc:  # the request failed before any event
                sink.raw_end(exc)
                raise
            if whole:
                return _feed_whole(result, sink, provider, forms[1] if forms else None)
            if synchronous:
                return _SyncStreamTap(result, _FormedSink(sink, forms[0]) if forms else sink,
                                      _RESHAPES.get(provider))
            if forms is not None:
                return _wrap_result(result, _FormedSink(sink, forms[0]), _RESHAPES.get(provider))
            # Chat chunks reach the integration with object arguments as text (see
            # ``with_string_arguments``); the sink has already seen the original.
            wrapped = _wrap_result(result, sink, _RESHAPES.get(provider))
            if provider == "cohere" and type(wrapped) is _SyncStreamTap:
                return _SyncCohereStreamTap(result, sink, _RESHAPES[provider])
            return wrapped

        return call


#: provider -> what the integration gets instead of each wire event the sink has seen.
_RESHAPES: dict[str, Reshape] = {"openai-chat": with_string_arguments, "cohere": _cohere_v1_text}


def _feed_whole(result: Any, sink: RawSink, provider: str,
                form: Callable[[Any], Any] | None = None) -> Any:
    """A whole response: the sink gets the events it stands for; the caller gets it unchanged."""
    if inspect.isawaitable(result):
        return _await_whole(result, sink, provider, form)
    events = events_for_response(provider, result if form is None else form(result))
    if events is None:
        sink.raw_end(ValueError(f"toolstream: cannot read a whole {provider} response"))
        return result
    for event in events:
        sink.raw_event(event)
    sink.raw_end(None)
    return result


async def _await_whole(awaitable: Any, sink: RawSink, provider: str,
                       form: Callable[[Any], Any] | None) -> Any:
    try:
        result = await awaitable
    except BaseException as exc:
        sink.raw_end(exc)
        raise
    return _feed_whole(result, sink, provider, form)


def _is_data_model(cls: type) -> bool:
    """A pydantic model class (the SDKs' response objects), known without importing pydantic."""
    return hasattr(cls, "model_fields") and hasattr(cls, "model_dump")


def _pydantic_base(cls: type) -> type | None:
    return next((c for c in cls.__mro__
                 if c.__name__ == "BaseModel" and c.__module__ == "pydantic.main"), None)


def _is_namespace(value: Any) -> bool:
    if value is None or isinstance(value, (str, bytes, int, float, dict, list, tuple)):
        return False
    if _is_data_model(type(value)):
        return False
    if inspect.isroutine(value) or inspect.isclass(value):
        return False
    return type(value).__module__.startswith(_NAMESPACE_MODULES)


Reshape = Callable[[Any], Any]
"""What the integration gets instead of a wire event the sink has seen (``None``: the event)."""


def _wrap_result(result: Any, sink: RawSink, reshape: Reshape | None = None) -> Any:
    """Wrap whatever a streaming call returned so that iterating it feeds the sink."""
    if isinstance(result, dict) and "stream" in result:  # boto3: the stream is one key
        return {**result, "stream": _wrap_result(result["stream"], sink, reshape)}
    if inspect.isawaitable(result) and not hasattr(result, "__aiter__"):
        return _await_then_wrap(result, sink, reshape)
    if hasattr(result, "parse") and hasattr(result, "http_response"):
        return _RawResponseTap(result, sink, reshape)
    if hasattr(result, "__aiter__"):
        return _AsyncStreamTap(result, sink, reshape)
    if hasattr(result, "__iter__") or hasattr(result, "__next__"):
        return _SyncStreamTap(result, sink, reshape)
    if hasattr(result, "__aenter__"):
        return _AsyncManagerTap(result, sink, reshape)
    if hasattr(result, "__enter__"):
        return _SyncManagerTap(result, sink, reshape)
    _log.debug("toolstream: cannot tap a %s; the gate will not see this stream", type(result))
    return result


async def _await_then_wrap(awaitable: Any, sink: RawSink, reshape: Reshape | None) -> Any:
    return _wrap_result(await awaitable, sink, reshape)


#: What `_Passthrough._take` returns for an item the framework does not get.
_WITHHELD: Any = object()


class _Passthrough:
    __slots__ = ("_reshape", "_sink", "_target")

    def __init__(self, target: Any, sink: RawSink, reshape: Reshape | None = None) -> None:
        self._target = target
        self._sink = sink
        self._reshape = reshape

    def __getattr__(self, name: str) -> Any:
        return getattr(self._target, name)

    def _take(self, item: Any) -> Any:
        """Hand ``item``'s wire event to the sink; return the item to pass on (reshaped when
        the shim asked for it and the item is the event itself), or `_WITHHELD` when the sink
        says the framework need not see it."""
        event = _event_of(item)
        if event is not None:
            if self._sink.raw_event(event) is False:
                return _WITHHELD
            if self._reshape is not None and event is item:
                return self._reshape(item)
        return item


@contextmanager
def ending(end: Callable[[BaseException | None], None]) -> Iterator[None]:
    """Around a tapped stream's loop, sync or async: ``end(None)`` when it ran out, ``end(exc)``
    when it raised (cancellation included). A consumer that stops reading (``GeneratorExit``)
    ends nothing: the shim decides that turn, as cancelled."""
    try:
        yield
    except GeneratorExit:
        raise
    except BaseException as exc:
        end(exc)
        raise
    end(None)


class _RawResponseTap(_Passthrough):
    """``with_raw_response.create(...)``: the stream comes out of ``parse()``."""

    __slots__ = ()

    def parse(self, *args: Any, **kwargs: Any) -> Any:
        return _wrap_result(self._target.parse(*args, **kwargs), self._sink, self._reshape)


# Per class: whether its instances can only be wire events (see ``_plain_event_class``).
_PLAIN_CLASSES: dict[type, bool] = {}


def _plain_event_class(cls: type) -> bool:
    """A pydantic class without ``snapshot``: its instances are helper events only by extras.

    ``_event_of`` treats an item as a helper event only if it has a ``snapshot``. Asking a
    pydantic model for an attribute it lacks raises ``AttributeError`` inside pydantic, per
    event; for these classes the answer is in the class and the instance's extras.
    """
    base = _pydantic_base(cls)
    return (
        base is not None
        and getattr(cls, "__getattr__", None) is getattr(base, "__getattr__", None)
        and "snapshot" not in getattr(cls, "model_fields", {})
        and not hasattr(cls, "snapshot")
    )


def _event_of(item: Any) -> Any:
    """``beta.chat.completions.stream`` yields helper events; only ``chunk`` carries wire data."""
    cls = type(item)
    plain = _PLAIN_CLASSES.get(cls)
    if plain is None:
        plain = _PLAIN_CLASSES[cls] = _plain_event_class(cls)
    if plain:
        extra = item.model_extra  # pydantic's public view of the undeclared fields
        if not extra or "snapshot" not in extra:
            return item
    kind = getattr(item, "type", None)
    if kind == "chunk" and hasattr(item, "chunk") and hasattr(item, "snapshot"):
        return item.chunk
    if isinstance(kind, str) and hasattr(item, "snapshot"):
        return None
    return item


def idle_timeout_of(sink: Any) -> float | None:
    """The sink's ``idle_timeout_s`` if it has a positive one, else ``None`` (no guard)."""
    value = getattr(sink, "idle_timeout_s", None)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        return None
    return float(value)


def guarded(stream: Any, sink: Any, *, asynchronous: bool) -> Any:
    """``stream`` read under the sink's idle timeout, as a context manager (``with``, or
    ``async with`` when ``asynchronous``: the caller says how it reads, since a stream may
    serve both): an ``IdleGuard`` / ``AsyncIdleGuard`` (which cuts the SDK stream's
    connection, ``abort_transport``, and closes it when the gap is over), or the stream
    itself when the sink sets no timeout. Events still reach the sink in the caller's thread:
    only the SDK's own reads move to the sync guard's helper thread."""
    timeout = idle_timeout_of(sink)
    if timeout is None:
        return nullcontext(stream)
    return AsyncIdleGuard(stream, timeout) if asynchronous else IdleGuard(stream, timeout)


class _SyncStreamTap(_Passthrough):
    __slots__ = ()

    def __iter__(self) -> Iterator[Any]:
        with ending(self._sink.raw_end), \
                guarded(self._target, self._sink, asynchronous=False) as items:
            for item in items:
                out = self._take(item)
                if out is not _WITHHELD:
                    yield out

    def __enter__(self) -> _SyncStreamTap:
        enter = getattr(self._target, "__enter__", None)
        if enter is not None:
            enter()
        return self

    def __exit__(self, *exc: Any) -> Any:
        leave = getattr(self._target, "__exit__", None)
        return leave(*exc) if leave is not None else None


class _SyncCohereStreamTap(_SyncStreamTap):
    """A sync cohere stream that ``async for`` can read too.

    LlamaIndex's ``Cohere.astream_chat`` streams from its sync ``cohere.Client`` and reads
    the result with ``async for``, a ``TypeError`` on the SDK's generator: every async
    streamed turn of that class fails, gated or not. The gated copy's stream answers both;
    each event is still read (blocking, as LlamaIndex's sync client does) in wire order.
    """

    __slots__ = ()

    async def __aiter__(self) -> AsyncIterator[Any]:
        for item in self:
            yield item


class _AsyncStreamTap(_Passthrough):
    __slots__ = ()

    async def __aiter__(self) -> AsyncIterator[Any]:
        with ending(self._sink.raw_end):
            async with guarded(self._target, self._sink, asynchronous=True) as items:
                async for item in items:
                    out = self._take(item)
                    if out is not _WITHHELD:
                        yield out

    async def __aenter__(self) -> _AsyncStreamTap:
        enter = getattr(self._target, "__aenter__", None)
        if enter is not None:
            await enter()
        return self

    async def __aexit__(self, *exc: Any) -> Any:
        leave = getattr(self._target, "__aexit__", None)
        return await leave(*exc) if leave is not None else None

    def __enter__(self) -> _AsyncStreamTap:
        return self

    def __exit__(self, *exc: Any) -> None:
        return None


class _SyncManagerTap(_Passthrough):
    """A context manager whose ``__enter__`` returns the stream (``beta...stream``)."""

    __slots__ = ()

    def __enter__(self) -> Any:
        return _wrap_result(self._target.__enter__(), self._sink, self._reshape)

    def __exit__(self, *exc: Any) -> Any:
        return self._target.__exit__(*exc)


class _AsyncManagerTap(_Passthrough):
    __slots__ = ()

    async def __aenter__(self) -> Any:
        return _wrap_result(await self._target.__aenter__(), self._sink, self._reshape)

    async def __aexit__(self, *exc: Any) -> Any:
        return await self._target.__aexit__(*exc)


def tap_client(client: Any, sink: RawSink, sdk: str | None = None,
               path: tuple[str, ...] = ()) -> Any:
    """``client`` (an SDK client or one of its resources) with its streaming calls feeding ``sink``.

    ``sdk`` names the SDK (``"openai"``, ``"anthropic"``, ``"gemini"``, ``"bedrock"``,
    ``"ollama"``, ``"cohere"``, ``"mistral"``, ``"litellm"``: the ``litellm`` module itself;
    ``None``: `sdk_of` the client); ``path`` is where ``client``
    sits below the SDK's root client (``("chat", "completions")`` for the resource LangChain's
    ``ChatOpenAI`` holds), so the provider of a call can be told from its path. Whole answers
    of ``converse``, ``ollama`` ``chat(stream=False)`` and cohere's v2 ``chat`` reach the sink
    as the events they stand for (``events_for_response``). Raises ``ValueError`` for a client
    of no SDK the tap knows.
    """
    sdk = sdk or sdk_of(client)
    if sdk not in _CALLS:
        raise ValueError(f"toolstream: no tap for a {type(client).__name__}")
    return _NamespaceTap(client, sink, sdk, path)
