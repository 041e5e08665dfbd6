"""Markdown pieces the benchmark reports share."""

from __future__ import annotations


def table_head(title: str, intro: str, header: str) -> list[str]:
    """A report section's opening: heading, intro paragraph, table header and its rule.

    The rule is derived from the header so the two can never disagree on the column count.
    """
    columns = header.count("|") - 1
    return [title, "", intro, "", header, "|" + "---|" * columns]
