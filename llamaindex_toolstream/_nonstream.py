"""A whole (non-streamed) vendor response, replayed to the core as the events it stands for.

Non-streamed answers can be cut too (``finish_reason: length`` with half a JSON string on
OpenAI chat), so they go through the same proof as streams: identity, a normal finish, a
strict parse. Each function turns the ``ChatResponse.raw`` a LlamaIndex class keeps for a
non-streamed call into the event sequence the vendor would have streamed.
"""

from __future__ import annotations

from toolstream_core.integration import events_for_response

__all__ = ["events_for_response"]
