# Sphinx configuration of asyncsolve's documentation (make docs: build/docs/html).
#
# Why Sphinx with MyST-Parser: the pages stay Markdown, readable as they are
# on a repository browser and in an editor, while Sphinx checks them as a
# whole: every internal link and #section anchor must resolve (with -W -n a
# broken one fails the build), the pages form one table of contents, and the
# same tool takes Breathe's rendering of Doxygen's XML for the C and C++
# channel API (api.md), as PETSc- and Ginkgo-like projects do. Sphinx,
# MyST-Parser and Breathe are pinned in python/requirements.lock and
# installed into the project's venv by make venv; Doxygen is Debian's.

import os
import sys

# docs/_ext: source_comment (a method's description included from its source file).
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "_ext"))

project = "asyncsolve"
author = "the asyncsolve developers"
copyright = "the asyncsolve developers"

extensions = ["myst_parser", "breathe", "source_comment"]

# The channel API page (api.md) reads Doxygen's XML of the public channel
# headers, which make docs writes into build/docs/doxygen/xml first.
breathe_projects = {
    "asyncsolve": os.environ.get("ASYNCSOLVE_DOXYGEN_XML",
                                 os.path.join(os.path.dirname(__file__), "..", "build",
                                              "docs", "doxygen", "xml")),
}
breathe_default_project = "asyncsolve"
# Types of the C library and of MPI, which no page of this site declares.
nitpick_ignore = [("cpp:identifier", "MPI_Comm"), ("cpp:identifier", "size_t")]
source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build"]

# GitHub-style anchors for headings of levels 1 to 3, so that a link
# [text](page.md#section) resolves, and is checked, as it does on GitHub.
myst_heading_anchors = 3

html_theme = "alabaster"
html_title = "asyncsolve"
html_static_path = ["_static"]
html_css_files = ["tables.css"]  # wide tables scroll within the column
html_theme_options = {"page_width": "1240px", "sidebar_width": "240px"}
