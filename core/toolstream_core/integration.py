"""What a framework integration needs from the core beyond ``Assembler`` and its results.

The shims (``langchain_toolstream``, ``llamaindex_toolstream``) import only the core's public
API, so the few helpers they share with it live here under stable names rather than being
reached for in private modules; a third integration (another framework, a web endpoint) uses
the same ones. Nothing here imports a framework, an SDK or OpenTelemetry: importing this
module costs what importing ``toolstream_core`` costs.

- :func:`with_string_arguments`: the copy of an OpenAI chat chunk a framework can digest
  (tool-call arguments sent as a JSON object, serialised), handed on after the core saw the
  original.
- :class:`ProgressEncoder`: the gate's UI events as plain JSON dicts (schema in
  ``docs/observability.md``), for LangGraph's custom stream, SSE or a log line.
- :func:`ungated_error_text`, :func:`unanswered_text`: the words of the error results the
  shims write themselves (a call an ungated framework could not parse; a call left without
  an answer by a cancelled run), so both shims say the same thing.
- :func:`responses_answer`, ``RESPONSES_OUTPUT_TYPES``: the Responses input item that answers
  a rejected call of each kind (``function_call_output``, ``computer_call_output``,
  ``mcp_approval_response``, ...), built from its ``ErrorResult``.
- :func:`tracing_active`, :func:`trace_parent`, :func:`untraced`: where the turn's OTel span
  goes, for frameworks that keep their own spans out of the OTel context, and how a
  display-only assembler stays out of the trace.
"""

from __future__ import annotations

from ._progress import SCHEMA_VERSION, ProgressEncoder
from ._results import OUTPUT_TYPES as RESPONSES_OUTPUT_TYPES
from ._results import responses_answer, unanswered_text, ungated_error_text
from ._string_arguments import with_string_arguments
from ._tracing import active as tracing_active
from ._tracing import trace_parent, untraced

__all__ = [
    "RESPONSES_OUTPUT_TYPES",
    "SCHEMA_VERSION",
    "ProgressEncoder",
    "responses_answer",
    "trace_parent",
    "tracing_active",
    "unanswered_text",
    "ungated_error_text",
    "untraced",
    "with_string_arguments",
]
