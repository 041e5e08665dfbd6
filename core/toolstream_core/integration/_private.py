"""What the shims share with the core that is not an integration's API: the machinery for
recognising and touching another library's classes, and tracing internals.

Kept out of ``toolstream_core.integration.__all__`` (issue 39: that list holds what a framework
integration needs, and a third integration should not lean on these). The shims import them
from here; ``tests/test_shim_imports.py`` allows this one private module, and only the names
in its ``__all__``.

- :class:`ClassTable` (and :data:`ANY_CLASS`): a shim's table keyed by another library's
  classes by name, and the one search along a class's MRO that finds its row (which partner
  class keeps its client where, which converter needs which outgoing rule, which classes are
  the framework's test doubles).
- :data:`PRIVATE_CONTACTS`: every private name of another library that toolstream touches, why
  and where (the one table); :func:`rebuilt` (a model's copy through its public constructor)
  and :func:`private_copy` (a copy with a listed private attribute set) are how a shim makes its
  tapped copy; :func:`tap_unavailable` builds the ``TapUnavailableError`` a shim raises when a
  class it claims to tap cannot be tapped.
- :func:`openai_tool_calls`: a turn's calls in OpenAI's ``tool_calls`` shape, for the partner
  converters that read them from ``additional_kwargs`` (one entry and arguments text for both).
- :func:`trace_parent`, :func:`untraced`: which span a turn's span goes under, for frameworks
  that keep their own spans out of the OTel context, and how a display-only assembler stays
  out of the trace.
"""

from __future__ import annotations

from .._classes import ANY_CLASS, ClassTable
from .._contacts import PRIVATE_CONTACTS, private_copy, rebuilt, tap_unavailable
from .._requests import openai_tool_calls
from .._tracing import trace_parent, untraced

__all__ = ["ANY_CLASS", "PRIVATE_CONTACTS", "ClassTable", "openai_tool_calls", "private_copy",
           "rebuilt", "tap_unavailable", "trace_parent", "untraced"]
