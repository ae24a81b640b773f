# Sphinx configuration of asyncsolve's documentation (make docs: build/docs/html).
#
# Why Sphinx with MyST-Parser: the pages stay Markdown, readable as they are
# on a repository browser and in an editor, while Sphinx checks them as a
# whole: every internal link and #section anchor must resolve (with -W -n a
# broken one fails the build), the pages form one table of contents, and the
# same tool can take Breathe's Doxygen XML for the C and C++ API, as PETSc-
# and Ginkgo-like projects do. Both are pinned in python/requirements.lock
# and installed into the project's venv by make venv.

project = "asyncsolve"
author = "the asyncsolve developers"
copyright = "the asyncsolve developers"

extensions = ["myst_parser"]
source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build"]

# GitHub-style anchors for headings of levels 1 to 3, so that a link
# [text](page.md#section) resolves, and is checked, as it does on GitHub.
myst_heading_anchors = 3
myst_enable_extensions = ["dollarmath"]

html_theme = "alabaster"
html_title = "asyncsolve"
html_static_path = []
