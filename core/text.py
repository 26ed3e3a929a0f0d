"""Words for people: counts with their noun in the right number ("1 node", "2 nodes")."""

from __future__ import annotations


def plural(count: int, word: str, many: str | None = None) -> str:
    """`count` with `word`, or `many` (default: word + "s") unless it is one; thousands
    separated, as the pages show them."""
    return f"{count:,} {word if count == 1 else many or word + 's'}"
