"""See the vendor's own stream events under a LangChain chat model, unchanged.

Why this exists: LangChain integrations turn vendor events into ``tool_call_chunks`` and lose
what the gate needs to prove a call complete. ``ChatOpenAI`` drops a tool-call delta that has
no ``index`` (a ``KeyError`` is swallowed), ``ChatAnthropic`` never surfaces ``message_stop``,
``ChatGoogleGenerativeAI`` ignores Gemini ``partialArgs`` and invents a fresh id per chunk.
So the gate does not read LangChain's chunks for its decisions: it reads the events the vendor
SDK parsed from the wire, by giving the integration a private copy of the model whose SDK client
is wrapped in a transparent proxy. The proxy intercepts only the streaming calls
(``chat.completions.create(stream=True)``, ``responses.create(stream=True)``,
``messages.create(stream=True)``, ``*.stream(...)``, ``models.generate_content_stream``) and
hands each event to a sink *before* the integration sees it; everything else passes through.

The copy is made per call, so nothing global is patched, the user's model object is never
touched, and concurrent calls (``batch``, threads, tasks) never share a sink.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from typing import Any, Protocol

from langchain_core.language_models import BaseChatModel
from pydantic import BaseModel
from toolstream_core.integration import with_string_arguments

__all__ = ["RawSink", "tap_model", "tappable"]

_log = logging.getLogger("langchain_toolstream")

# Resource / namespace objects of the vendor SDKs: the only things the proxy wraps.
_NAMESPACE_MODULES = (
    "openai.resources",
    "openai._client",
    "anthropic.resources",
    "anthropic._client",
    "google.genai.models",
    "google.genai.client",
)


class RawSink(Protocol):
    """Receives the vendor events of one model call, in wire order."""

    def raw_start(self, provider: str, request: Mapping[str, Any]) -> None:
        """A streaming request is sent; ``request`` holds its keyword arguments."""

    def raw_event(self, event: Any) -> None: ...

    def raw_end(self, error: BaseException | None) -> None: ...


def _provider_for(path: tuple[str, ...], sdk: str) -> str | None:
    if sdk == "openai":
        return "openai-responses" if "responses" in path else "openai-chat"
    if sdk == "anthropic":
        return "anthropic"
    if sdk == "gemini":
        return "gemini"
    return None


def _is_streaming_call(name: str, kwargs: dict[str, Any]) -> bool:
    if name in ("stream", "generate_content_stream"):
        return True
    return name == "create" and bool(kwargs.get("stream"))


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
        if name in ("create", "stream", "generate_content_stream") and callable(value):
            return self._intercept(value, name)
        if _is_namespace(value):
            return _NamespaceTap(value, self._sink, self._sdk, (*self._path, name))
        return value

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._target, name, value)

    def __repr__(self) -> str:
        return f"<toolstream tap of {self._target!r}>"

    def _intercept(self, method: Callable[..., Any], name: str) -> Callable[..., Any]:
        sink, path, sdk = self._sink, (*self._path, name), self._sdk

        def call(*args: Any, **kwargs: Any) -> Any:
            if not _is_streaming_call(name, kwargs):
                return method(*args, **kwargs)
            provider = _provider_for(path, sdk)
            if provider is not None:
                sink.raw_start(provider, kwargs)
            # Chat chunks reach the integration with object arguments as text (see
            # ``with_string_arguments``); the sink has already seen the original.
            reshape = with_string_arguments if provider == "openai-chat" else None
            return _wrap_result(method(*args, **kwargs), sink, reshape)

        return call


def _is_namespace(value: Any) -> bool:
    if value is None or isinstance(value, (BaseModel, str, bytes, int, float, dict, list, tuple)):
        return False
    if inspect.isroutine(value) or inspect.isclass(value):
        return False
    return type(value).__module__.startswith(_NAMESPACE_MODULES)


Reshape = Callable[[Any], Any]
"""What the integration gets instead of a wire event the sink has seen (``None``: the event)."""


def _wrap_result(result: Any, sink: RawSink, reshape: Reshape | None = None) -> Any:
    """Wrap whatever a streaming call returned so that iterating it feeds the sink."""
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


class _Passthrough:
    __slots__ = ("_reshape", "_sink", "_target")

    def __init__(self, target: Any, sink: RawSink, reshape: Reshape | None = None) -> None:
        self._target = target
        self._sink = sink
        self._reshape = reshape

    def __getattr__(self, name: str) -> Any:
        return getattr(self._target, name)


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
    return (
        issubclass(cls, BaseModel)
        and getattr(cls, "__getattr__", None) is getattr(BaseModel, "__getattr__", None)
        and "snapshot" not in cls.model_fields
        and not hasattr(cls, "snapshot")
    )


def _event_of(item: Any) -> Any:
    """``beta.chat.completions.stream`` yields helper events; only ``chunk`` carries wire data."""
    cls = type(item)
    plain = _PLAIN_CLASSES.get(cls)
    if plain is None:
        plain = _PLAIN_CLASSES[cls] = _plain_event_class(cls)
    if plain:
        extra = item.__pydantic_extra__
        if not extra or "snapshot" not in extra:
            return item
    kind = getattr(item, "type", None)
    if kind == "chunk" and hasattr(item, "chunk") and hasattr(item, "snapshot"):
        return item.chunk
    if isinstance(kind, str) and hasattr(item, "snapshot"):
        return None
    return item


class _SyncStreamTap(_Passthrough):
    __slots__ = ()

    def __iter__(self) -> Iterator[Any]:
        try:
            reshape = self._reshape
            for item in self._target:
                event = _event_of(item)
                if event is not None:
                    self._sink.raw_event(event)
                    if reshape is not None and event is item:
                        item = reshape(item)
                yield item
        except GeneratorExit:
            raise
        except BaseException as exc:
            self._sink.raw_end(exc)
            raise
        self._sink.raw_end(None)

    def __enter__(self) -> _SyncStreamTap:
        enter = getattr(self._target, "__enter__", None)
        if enter is not None:
            enter()
        return self

    def __exit__(self, *exc: Any) -> Any:
        leave = getattr(self._target, "__exit__", None)
        return leave(*exc) if leave is not None else None


class _AsyncStreamTap(_Passthrough):
    __slots__ = ()

    async def __aiter__(self) -> AsyncIterator[Any]:
        try:
            reshape = self._reshape
            async for item in self._target:
                event = _event_of(item)
                if event is not None:
                    self._sink.raw_event(event)
                    if reshape is not None and event is item:
                        item = reshape(item)
                yield item
        except GeneratorExit:
            raise
        except BaseException as exc:
            self._sink.raw_end(exc)
            raise
        self._sink.raw_end(None)

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


# -- which integrations can be tapped, and how -------------------------------------------------


def _openai_fields(model: Any, sink: RawSink) -> dict[str, Any] | None:
    update: dict[str, Any] = {}
    for name in ("client", "async_client"):
        value = getattr(model, name, None)
        if value is not None:
            update[name] = _NamespaceTap(value, sink, "openai", ("chat", "completions"))
    for name in ("root_client", "root_async_client"):
        value = getattr(model, name, None)
        if value is not None:
            update[name] = _NamespaceTap(value, sink, "openai")
    return update or None


def _anthropic_fields(model: Any, sink: RawSink) -> dict[str, Any] | None:
    # ``_client`` / ``_async_client`` are cached properties: reading them builds the SDK
    # client once on the user's model, and the copy gets the tapped one in its ``__dict__``.
    return {
        "_client": _NamespaceTap(model._client, sink, "anthropic"),
        "_async_client": _NamespaceTap(model._async_client, sink, "anthropic"),
    }


def _gemini_fields(model: Any, sink: RawSink) -> dict[str, Any] | None:
    client = getattr(model, "client", None)
    if client is None:
        return None
    return {"client": _NamespaceTap(client, sink, "gemini")}


def _kind(model: BaseChatModel) -> str | None:
    for cls in type(model).__mro__:
        module = cls.__module__
        if module.startswith("langchain_openai.") and cls.__name__ == "BaseChatOpenAI":
            return "openai"
        if module.startswith("langchain_anthropic.") and cls.__name__ == "ChatAnthropic":
            return "anthropic"
        if module.startswith("langchain_google_genai.") and cls.__name__ == "ChatGoogleGenerativeAI":
            return "gemini"
    return None


def tappable(model: BaseChatModel) -> str | None:
    """The SDK family whose raw stream the gate can see under ``model``, or ``None``."""
    return _kind(model)


def static_provider(model: BaseChatModel) -> str | None:
    """The provider when the class alone decides it (OpenAI needs the request to tell)."""
    kind = _kind(model)
    return {"anthropic": "anthropic", "gemini": "gemini"}.get(kind or "")


def tap_model(model: BaseChatModel, sink: RawSink) -> BaseChatModel | None:
    """A shallow copy of ``model`` whose SDK client feeds ``sink``; ``None`` if not supported."""
    kind = _kind(model)
    if kind is None:
        return None
    builders = {"openai": _openai_fields, "anthropic": _anthropic_fields, "gemini": _gemini_fields}
    try:
        update = builders[kind](model, sink)
    except Exception:  # an integration version we do not know: fall back, never break the call
        _log.warning("toolstream: cannot tap %s; using LangChain chunks", type(model).__name__,
                     exc_info=True)
        return None
    if not update:
        return None
    copy = model.model_copy()
    for name, value in update.items():
        # Fields go through the instance dict too: ``model_copy(update=...)`` would validate
        # nothing either, and cached properties live there.
        copy.__dict__[name] = value
    return copy
