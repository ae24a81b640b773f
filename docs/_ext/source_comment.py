"""The `source-comment` directive: a method's description as its source file
keeps it.

Each solver and preconditioner opens with a comment that says what it does
(the algorithm, its reference, what it overlaps, how it breaks down). The
pages include that comment rather than a copy of it, so the two cannot
drift apart, as PETSc's manual pages come from its sources:

    ```{source-comment} src/solvers/bicgstab.cpp
    ```

renders the file's leading `//` or `///` comment (after a first
`#pragma once`, the lines before the first line that is not a comment),
without the comment markers, as a literal block followed by the file's
path. A file without a leading comment is an
error, so `make docs` (warnings as errors) fails when a description is
removed.
"""

from pathlib import Path

from docutils import nodes
from sphinx.util.docutils import SphinxDirective

ROOT = Path(__file__).resolve().parents[2]


def leading_comment(path):
    """The text of the `//` comment lines at the top of `path`."""
    lines = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
        stripped = line.strip()
        if number == 0 and stripped == "#pragma once":
            continue
        if not stripped.startswith("//"):
            break
        text = stripped[3:] if stripped.startswith("///") else stripped[2:]
        lines.append(text.removeprefix(" "))
    while lines and not lines[-1].strip():
        lines.pop()
    return "\n".join(lines)


class SourceComment(SphinxDirective):
    """```{source-comment} PATH```: PATH's leading comment, as a literal block."""

    required_arguments = 1
    has_content = False

    def run(self):
        relative = self.arguments[0]
        path = ROOT / relative
        if not path.is_file():
            raise self.error(f"source-comment: no file {relative}")
        text = leading_comment(path)
        if not text:
            raise self.error(f"source-comment: {relative} opens with no // comment")
        self.env.note_dependency(str(path))
        block = nodes.literal_block(text, text)
        block["language"] = "none"
        caption = nodes.paragraph()
        caption += nodes.emphasis(text=f"from {relative}")
        return [block, caption]


def setup(app):
    app.add_directive("source-comment", SourceComment)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
