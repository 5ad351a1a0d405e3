#!/usr/bin/python3
"""Validates a rig report page: a strict HTML5 parse (html5lib, strict=True:
any parse error fails), one <section class="result"> per result, and no
reference to anything outside the page (no src/href to another resource, no
<script>, <link> or @import).

usage: check_html.py REPORT.html RESULTS [--svgs N]  (exit 0 ok, 1 invalid, 77 no html5lib)
"""
import sys

try:
    import html5lib
except ImportError:
    print("check_html.py: python3-html5lib is not installed (scripts/install-deps.sh --test)")
    sys.exit(77)


def main():
    path, results = sys.argv[1], int(sys.argv[2])
    min_svgs = int(sys.argv[4]) if len(sys.argv) > 4 and sys.argv[3] == "--svgs" else 0
    with open(path, "rb") as f:
        data = f.read()
    parser = html5lib.HTMLParser(strict=True, namespaceHTMLElements=False)
    try:
        doc = parser.parse(data)
    except Exception as e:  # html5lib raises ParseError with the position
        print(f"{path}: not valid HTML5: {e!r}; errors: {parser.errors[:5]}")
        return 1
    problems = []
    sections = [s for s in doc.iter("section") if "result" in (s.get("class") or "").split()]
    if len(sections) != results:
        problems.append(f"{len(sections)} result sections, expected {results}")
    svg_tag = "{http://www.w3.org/2000/svg}svg"
    svgs = [e for e in doc.iter() if e.tag == svg_tag]
    if len(svgs) < min_svgs:
        problems.append(f"{len(svgs)} <svg> elements, expected at least {min_svgs}")
    for e in doc.iter():
        tag = e.tag if isinstance(e.tag, str) else ""
        local = tag.split("}")[-1]
        if local in ("script", "link", "iframe", "img", "object", "embed"):
            problems.append(f"<{local}> element: the page must be self-contained")
        for k, v in e.attrib.items():
            name = k.split("}")[-1]
            if name in ("src", "href") and not v.startswith("#"):
                problems.append(f"<{local} {name}={v!r}>: a reference outside the page")
    if b"@import" in data or b"url(http" in data:
        problems.append("a stylesheet import or remote url()")
    if problems:
        print(f"{path}: " + "; ".join(problems[:10]))
        return 1
    print(f"{path}: valid HTML5, {len(sections)} results, {len(svgs)} svgs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
