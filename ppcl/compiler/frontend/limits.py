"""How deep and how large a program the front end accepts, and the deep stack it runs on.

pycparser's parser and the semantic analysis are recursive descents: each level of
parentheses costs the parser about a dozen Python frames, each operand of a flat sum a few
frames of the analysis. Python's default limit (1000 frames on an 8 MiB stack) stops at about
80 parentheses or 300 terms with a bare ``RecursionError``. So the front end runs in a thread of
its own with a large stack and a raised recursion limit (``run_deep``, used when a first run on
the caller's thread runs out of recursion; see ``compiler/deepstack.py``), and inputs deeper than
the documented limits below get a located error instead of exhausting even that stack:

* ``MAX_BRACKET_DEPTH``: parentheses, brackets and braces open at once, checked on the text
  before it is parsed ("expression nests deeper than N").
* ``MAX_TREE_DEPTH``: depth of the syntax tree (a flat sum of n terms is n deep), checked by an
  iterative walk before the analysis.
* Input that stays under those limits and still exhausts the deep stack (twenty thousand
  nested ``if`` statements, say) is reported where the parser stopped ("program nests too
  deeply to parse").
* ``MAX_INCLUDE_DEPTH``: ``#include`` nesting; the error names the chain of headers.
* ``MAX_EXPANSION_TOKENS``: tokens produced while expanding one macro use, so a macro that
  doubles itself twenty times fails in well under a second instead of running for minutes.
"""

from __future__ import annotations

from typing import Any

from pycparser import c_ast

MAX_BRACKET_DEPTH = 1000
MAX_TREE_DEPTH = 5000
MAX_INCLUDE_DEPTH = 64
MAX_EXPANSION_TOKENS = 1 << 17

_OPENING = "([{"
_CLOSING = ")]}"


def too_deep_bracket(text: str) -> tuple[int, int] | None:
    """(line, column) of the first bracket of ``text`` that opens more than
    ``MAX_BRACKET_DEPTH`` at once, or None. Brackets inside string and character literals and
    comments do not count; lines are physical lines of ``text``."""
    depth = 0
    line, line_start = 1, 0
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == "\n":
            line += 1
            line_start = i + 1
        elif ch in "\"'":
            i = _end_of_literal(text, i)
            continue
        elif ch == "/" and text.startswith("//", i):
            end = text.find("\n", i)
            i = n if end < 0 else end
            continue
        elif ch in _OPENING:
            depth += 1
            if depth > MAX_BRACKET_DEPTH:
                return line, i - line_start + 1
        elif ch in _CLOSING:
            depth = max(depth - 1, 0)
        i += 1
    return None


def _end_of_literal(text: str, start: int) -> int:
    quote = text[start]
    i = start + 1
    while i < len(text) and text[i] not in (quote, "\n"):
        i += 2 if text[i] == "\\" else 1
    return i + 1


def too_deep_node(ast: c_ast.Node) -> Any:
    """The coordinate (of the node, or its nearest ancestor that has one) of the first node of
    ``ast`` deeper than ``MAX_TREE_DEPTH``, or None. Walked with an explicit stack, so a tree
    of any depth is measured."""
    stack: list[tuple[c_ast.Node, int, Any]] = [(ast, 0, ast.coord)]
    while stack:
        node, depth, coord = stack.pop()
        coord = node.coord or coord
        if depth > MAX_TREE_DEPTH:
            return coord
        stack.extend((child, depth + 1, coord) for _, child in node.children())
    return None
