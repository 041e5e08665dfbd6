"""A scenario script as one OpenAI-compatible server streams it (the profiles are ``_profiles``).

The rendering half of the profiles: the chunk dicts in a profile's shape (ids, indexes, role
repeats, whole or fragmented arguments, usage and finish chunks), framed as that server's SSE,
and a non-streamed answer with the profile's content. The profile classes say *what* each
server does; this module does it.
"""

from __future__ import annotations

import json
import random
from typing import Any

from ._profiles import ID_STYLES, Profile, output_limit
from ._scenarios import CallSpec, Script, split_text
from ._vendor_events import chat_base, chat_call_deltas, chat_chunk, chat_role_delta, chat_tool_delta, chat_usage_chunk
from ._wire_common import Rendered, Reply, rand_id, sse

__all__ = ["profiled_complete", "render_profiled"]


class _Chunks:
    """Chunk dicts for one answer in one profile's shape."""

    def __init__(self, p: Profile, rng: random.Random, model: str) -> None:
        self.p = p
        self.rng = rng
        self.base = chat_base(rand_id(rng, "chatcmpl-", 29), model, fingerprint=p.fingerprint,
                              **p.extra)

    def chunk(self, delta: dict[str, Any], finish: str | None = None,
              **top: Any) -> dict[str, Any]:
        p = self.p
        if p.repeat_role:
            delta = {**chat_role_delta("" if finish else None), **delta}
        out = chat_chunk(self.base, delta, finish, **top)
        if "provider" in p.extra:
            out["choices"][0]["native_finish_reason"] = finish
        if p.new_chunk_ids:
            out["id"] = "chatcmpl-" + rand_id(self.rng, "", 8)
        if p.usage_null and "usage" not in out:
            out["usage"] = None
        return out


def _index(p: Profile, i: int) -> int | None:
    """The ``index`` the profile's server puts on call ``i`` (``None``: it sends none)."""
    return {"keep": i, "zero": 0}.get(p.index)


def _tool(p: Profile, i: int, call_id: str, name: str, args: Any) -> dict[str, Any]:
    """A whole call in one ``tool_calls`` entry, in the profile's shape."""
    return chat_tool_delta(_index(p, i), args, ident=(call_id, name), typed=not p.omit_type)


def _whole_args(p: Profile, text: str) -> Any:
    if p.object_arguments:
        try:
            return json.loads(text) if text.strip() else {}
        except ValueError:
            return text
    return text


def _usage(body: dict[str, Any], script: Script) -> dict[str, Any]:
    prompt = 20 + len(body.get("messages") or []) * 10
    completion = sum(len(c.args_text) for c in script.calls) // 4 + 5
    limit = output_limit(body)
    if script.ending == "length" and limit is not None:
        completion = limit  # a cut by the limit spends exactly the limit
    elif limit is not None:
        completion = min(completion, max(limit - 1, 1))
    return {"prompt_tokens": prompt, "completion_tokens": completion,
            "total_tokens": prompt + completion}


def profiled_complete(p: Profile, reply: Reply) -> Reply:
    """A non-streamed answer (OpenAI's shape on every profile) with the profile's content."""
    if p.whole_content is None or not isinstance(reply.body, dict):
        return reply
    for choice in reply.body.get("choices") or []:
        message = choice.get("message") if isinstance(choice, dict) else None
        if isinstance(message, dict) and message.get("content") is None:
            message["content"] = p.whole_content
    return reply


def render_profiled(p: Profile, script: Script, rng: random.Random, model: str,
                    body: dict[str, Any]) -> Rendered:
    """The streamed answer for ``script`` as server ``p`` sends it."""
    ch = _Chunks(p, rng, model)
    make_id = ID_STYLES[p.id_style]
    ids = [make_id(rng, i, c.name) for i, c in enumerate(script.calls)]
    texts = [c.args_text for c in script.calls]
    if script.cut_at is not None and texts:
        texts[-1] = texts[-1][: script.cut_at]
    chunks = _opening_chunks(p, ch, script, rng)
    chunks.extend(_call_chunks(p, ch, script, ids, texts, rng))
    frames: list[bytes] = list(p.comments)
    if script.ending == "error":
        frames.extend(sse(c) for c in chunks)
        frames.append(sse(p.error_body, p.error_event))
        return Rendered(frames)
    if script.ending in ("drop", "no_finish"):
        frames.extend(sse(c) for c in chunks)
        if script.ending == "drop":
            return Rendered(frames, drop=True)
        frames.append(sse("[DONE]"))
        return Rendered(frames)
    _finish_chunks(p, ch, script, rng, body, chunks)
    if p.summary_chunk and script.calls:
        chunks.append(ch.chunk({"tool_calls": [
            _tool(p, i, ids[i], c.name, json.dumps(t))
            for i, (c, t) in enumerate(zip(script.calls, texts, strict=True))]}))
    if bool((body.get("stream_options") or {}).get("include_usage")) and p.usage in ("requested", "groq"):
        chunks.append(chat_usage_chunk(ch.base, _usage(body, script)))
    frames.extend(sse(c) for c in chunks)
    frames.append(sse("[DONE]"))
    return Rendered(frames)


def _opening_chunks(p: Profile, ch: _Chunks, script: Script, rng: random.Random) -> list[dict[str, Any]]:
    """The role delta, then the reasoning and the text pieces the server streams first."""
    chunks: list[dict[str, Any]] = []
    if p.reasoning:
        chunks.append(ch.chunk(chat_role_delta(reasoning_content="")))
        chunks.extend(ch.chunk({"content": None, "reasoning_content": piece})
                      for piece in split_text(p.reasoning, rng, max_piece=12))
    if script.text is not None:
        chunks.append(ch.chunk(chat_role_delta("")))
        chunks.extend(ch.chunk({"content": piece})
                      for piece in split_text(script.text, rng, max_piece=8))
    elif not p.reasoning:
        chunks.append(ch.chunk(chat_role_delta()))
    return chunks


def _call_chunks(p: Profile, ch: _Chunks, script: Script, ids: list[str], texts: list[str],
                 rng: random.Random) -> list[dict[str, Any]]:
    """The tool-call deltas: whole calls (grouped per the profile) or incremental pieces;
    each twice for the ``resent_duplicate`` scenario."""
    copies = 2 if script.scenario == "resent_duplicate" else 1
    chunks: list[dict[str, Any]] = []
    if p.whole_calls:
        entries = [_tool(p, i, ids[i], call.name, _whole_args(p, text))
                   for i, (call, text) in enumerate(zip(script.calls, texts, strict=True))
                   for _copy in range(copies)]
        groups = [entries] if p.calls_in_one_delta and entries else [[e] for e in entries]
        chunks.extend(ch.chunk({"content": None, "tool_calls": g}) for g in groups)
        return chunks
    for i, (call, text) in enumerate(zip(script.calls, texts, strict=True)):
        for _copy in range(copies):
            chunks.extend(_incremental(p, ch, i, ids[i], call, text, rng))
    return chunks


def _finish_chunks(p: Profile, ch: _Chunks, script: Script, rng: random.Random,
                   body: dict[str, Any], chunks: list[dict[str, Any]]) -> None:
    """Append the finish reason (on the last call's delta or a chunk of its own) with the
    usage the profile puts beside it."""
    usage = _usage(body, script)
    finish = p.finish_for_calls if script.calls else "stop"
    if script.ending == "length":
        # A server's rewrite of the cut's finish reason follows its tool-call deltas
        # (vLLM's): a text cut by the limit is reported as ``length``.
        finish = p.finish_on_cut if script.calls else "length"
    top: dict[str, Any] = {}
    if p.usage == "final_chunk":
        top["usage"] = usage
    elif p.usage == "groq":
        top = {"x_groq": {"id": "req_" + rand_id(rng, "", 26), "usage": usage},
               "usage": usage}
    if p.finish_on_last_call and len(chunks) > 1 and script.calls:
        last = chunks.pop()
        last["choices"][0]["finish_reason"] = finish
        chunks.append({**last, **top})
        return
    if p.repeat_finish:
        chunks.append(ch.chunk({}, finish))
    chunks.append(ch.chunk({"content": ""} if p.usage_null else {}, finish, **top))


def _incremental(p: Profile, ch: _Chunks, i: int, call_id: str, call: CallSpec, text: str,
                 rng: random.Random) -> list[dict[str, Any]]:
    """Opening delta (id, name, ``""``), optional empty fragments, then the pieces."""
    fragments = [""] * p.empty_fragments + split_text(text, rng)
    return [ch.chunk({"tool_calls": [tc]})
            for tc in chat_call_deltas(_index(p, i), call_id, call.name, fragments, typed=not p.omit_type)]
