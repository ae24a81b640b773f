#!/usr/bin/env python3
"""The documentation site as a browser renders it: title and a table per page.

Runs headless Chromium on built pages of the site (make docs), takes a
screenshot of each and reads back the DOM the browser built, then checks that
each page shows its Markdown source's title as its heading and at least one
table with rows. Exits 1 naming every page that fails, 0 otherwise.

Usage: tests/docs/check_rendered.py HTML_DIR SCREENSHOT_DIR [PAGE ...]
(pages as docs/ names without .md; default: index matrix PERFORMANCE)
"""

import html.parser
import os
import re
import shutil
import subprocess
import sys

DOCS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs")


class Page(html.parser.HTMLParser):
    """The text of the first <h1> and the number of table rows (<tr> in <tbody>)."""

    def __init__(self):
        super().__init__()
        self.h1, self.in_h1, self.h1_done, self.rows, self.in_tbody = "", False, False, 0, False

    def handle_starttag(self, tag, attrs):
        if tag == "h1" and not self.h1_done:
            self.in_h1 = True
        elif tag == "tbody":
            self.in_tbody = True
        elif tag == "tr" and self.in_tbody:
            self.rows += 1

    def handle_endtag(self, tag):
        if tag == "h1" and self.in_h1:
            self.in_h1, self.h1_done = False, True
        elif tag == "tbody":
            self.in_tbody = False

    def handle_data(self, data):
        if self.in_h1:
            self.h1 += data


def title_of(page):
    with open(os.path.join(DOCS, page + ".md"), encoding="utf-8") as f:
        first = f.readline()
    return re.sub(r"[`*]", "", first.lstrip("#").strip())


def browser():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    sys.exit("check_rendered: no Chromium on PATH (make docs-check installs Debian's chromium)")


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    html_dir, shots = sys.argv[1], sys.argv[2]
    pages = sys.argv[3:] or ["index", "matrix", "PERFORMANCE"]
    os.makedirs(shots, exist_ok=True)
    chrome = browser()
    common = [chrome, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
              "--window-size=1280,1600"]
    failures = []
    for page in pages:
        url = "file://" + os.path.abspath(os.path.join(html_dir, page + ".html"))
        shot = os.path.join(shots, page + ".png")
        subprocess.run(common + [f"--screenshot={shot}", url], capture_output=True, timeout=120)
        dom = subprocess.run(common + ["--dump-dom", url], capture_output=True, text=True,
                             timeout=120).stdout
        parsed = Page()
        parsed.feed(dom)
        heading = parsed.h1.replace("\N{PILCROW SIGN}", "").replace("#", "").strip()
        problems = []
        if heading != title_of(page):
            problems.append(f"heading {heading!r}, expected {title_of(page)!r}")
        if parsed.rows == 0:
            problems.append("no table rows")
        if not os.path.exists(shot) or os.path.getsize(shot) < 10_000:
            problems.append(f"no screenshot (or a blank one) at {shot}")
        verdict = "ok" if not problems else "FAILED: " + "; ".join(problems)
        print(f"{page}: {verdict} (heading {heading!r}, {parsed.rows} table rows, {shot})")
        if problems:
            failures.append(page)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
