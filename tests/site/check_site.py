#!/usr/bin/env python3
"""Validates a site written by `kparity explain --site DIR` (issue 17), with the standard library only.

    python3 tests/site/check_site.py DIR

Checks: the marker, catalog.json and search-index.json parse; every catalog entry has its page
e/<id>/index.html (showing its id, slug, message and solutions) and its slug permalink
s/<slug>/index.html (forwarding to the id page); ids and slugs are unique; every HTML file parses
with balanced tags and unique element ids; every internal link and asset (href, src, meta refresh)
resolves to a file, and every #fragment to an element id on the target page; the index lists every
entry once; retired entries keep a page with the retirement note; the footer cites every upstream
commit. Prints one line per problem and exits 1 if there is any, else prints a summary and exits 0.
"""
import html
import html.parser
import json
import os
import re
import sys
import urllib.parse

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


class Page(html.parser.HTMLParser):
    """Collects links, ids, text and structural problems of one HTML file."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack, self.problems, self.links, self.ids = [], [], [], []
        self.text, self.rows, self.refresh, self.classes = [], [], None, {}
        self.doctype = False

    def handle_decl(self, decl):
        self.doctype = self.doctype or decl.lower() == "doctype html"

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a:
            self.ids.append(a["id"])
        for cls in (a.get("class") or "").split():
            self.classes[cls] = self.classes.get(cls, 0) + 1
        for key in ("href", "src"):
            if a.get(key) is not None:
                self.links.append((tag, a[key]))
        if tag == "meta" and (a.get("http-equiv") or "").lower() == "refresh":
            m = re.match(r"\s*\d+\s*;\s*url=(.+)", a.get("content") or "")
            if m:
                self.refresh = m.group(1).strip()
                self.links.append(("meta", self.refresh))
        if tag == "tr" and "data-id" in a:
            self.rows.append(a["data-id"])
        if tag not in VOID:
            self.stack.append((tag, self.getpos()))

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag not in VOID:
            self.stack.pop()

    def handle_endtag(self, tag):
        if tag in VOID:
            self.problems.append(f"line {self.getpos()[0]}: end tag </{tag}> of a void element")
            return
        if not self.stack:
            self.problems.append(f"line {self.getpos()[0]}: </{tag}> closes nothing")
            return
        open_tag, pos = self.stack.pop()
        if open_tag != tag:
            self.problems.append(f"line {self.getpos()[0]}: </{tag}> closes <{open_tag}> opened on line {pos[0]}")

    def handle_data(self, data):
        self.text.append(data)

    def finish(self):
        self.close()
        if not self.doctype:
            self.problems.append("no <!doctype html>")
        for tag, pos in self.stack:
            self.problems.append(f"line {pos[0]}: <{tag}> never closed")
        seen = set()
        for i in self.ids:
            if i in seen:
                self.problems.append(f"duplicate id '{i}'")
            seen.add(i)
        return self


def parse(path):
    with open(path, encoding="utf-8") as f:
        p = Page()
        p.feed(f.read())
    return p.finish()


def check(root):
    problems = []
    bad = problems.append
    root = os.path.abspath(root)

    def load_json(name):
        try:
            with open(os.path.join(root, name), encoding="utf-8") as f:
                return json.load(f)
        except (OSError, ValueError) as e:
            bad(f"{name}: {e}")
            return None

    marker = load_json(".kparity-site")
    catalog = load_json("catalog.json")
    index = load_json("search-index.json")
    if catalog is None:
        return problems, {}
    entries = catalog.get("entries", [])
    if not entries:
        bad("catalog.json: no entries")
    ids = [e["id"] for e in entries]
    slugs = [e["slug"] for e in entries]
    for name, values in (("id", ids), ("slug", slugs)):
        dup = sorted({v for v in values if values.count(v) > 1})
        if dup:
            bad(f"catalog.json: duplicate {name}s {dup}")
    if marker is not None and marker.get("entries") != len(entries):
        bad(f".kparity-site: says {marker.get('entries')} entries, catalog.json has {len(entries)}")
    if index is not None and [e["id"] for e in index.get("entries", [])] != ids:
        bad("search-index.json: entries differ from catalog.json (ids or order)")

    pages = {}
    for dirpath, _, files in os.walk(root):
        for f in files:
            if f.endswith(".html"):
                full = os.path.join(dirpath, f)
                pages[os.path.relpath(full, root).replace(os.sep, "/")] = parse(full)
    for rel, page in sorted(pages.items()):
        for p in page.problems:
            bad(f"{rel}: {p}")

    # Every entry: its page and its slug permalink.
    for e in entries:
        rel = f"e/{e['id']}/index.html"
        page = pages.get(rel)
        if page is None:
            bad(f"{rel}: missing (entry {e['slug']})")
            continue
        text = " ".join(" ".join(page.text).split())
        for what in (e["id"], e["slug"], " ".join(e["errorMessage"].split())):
            if what not in text:
                bad(f"{rel}: does not show {what!r}")
        if e.get("solutions") and "solutions" not in page.ids:
            bad(f"{rel}: no Solutions section")
        if e.get("status", "active") != "active" and "status-note" not in page.classes:
            bad(f"{rel}: {e['status']} entry without its status note")
        srel = f"s/{e['slug']}/index.html"
        spage = pages.get(srel)
        if spage is None:
            bad(f"{srel}: missing")
        elif spage.refresh != f"../../e/{e['id']}/index.html":
            bad(f"{srel}: forwards to {spage.refresh!r}, not e/{e['id']}/")

    index_page = pages.get("index.html")
    if index_page is None:
        bad("index.html: missing")
    else:
        if sorted(index_page.rows) != sorted(ids):
            missing = sorted(set(ids) - set(index_page.rows))
            extra = sorted(set(index_page.rows) - set(ids))
            bad(f"index.html: table rows differ from the catalog (missing {missing}, extra {extra}, {len(index_page.rows)} rows)")
        text = " ".join(index_page.text)
        for c in catalog.get("upstreamCommits", []):
            if c["commit"][:10] not in text:
                bad(f"index.html: footer does not cite {c['repo']}@{c['commit'][:10]}")
        if catalog.get("digest") and catalog["digest"] not in text:
            bad("index.html: footer lacks the catalog digest")

    # Every internal link resolves, fragments included.
    links = 0
    for rel, page in sorted(pages.items()):
        base = os.path.dirname(os.path.join(root, rel))
        for tag, url in page.links:
            parts = urllib.parse.urlsplit(html.unescape(url))
            if parts.scheme in ("http", "https", "mailto"):
                continue
            if parts.scheme or parts.netloc:
                bad(f"{rel}: <{tag}> link {url!r} is neither relative nor http(s)")
                continue
            links += 1
            target = os.path.normpath(os.path.join(base, urllib.parse.unquote(parts.path))) if parts.path else os.path.join(root, rel)
            if not target.startswith(root + os.sep) and target != root:
                bad(f"{rel}: link {url!r} leaves the site")
                continue
            if os.path.isdir(target):
                bad(f"{rel}: link {url!r} names a folder (file:// needs index.html)")
                continue
            if not os.path.isfile(target):
                bad(f"{rel}: link {url!r} -> {os.path.relpath(target, root)} does not exist")
                continue
            if parts.fragment:
                trel = os.path.relpath(target, root).replace(os.sep, "/")
                if trel in pages and parts.fragment not in pages[trel].ids:
                    bad(f"{rel}: link {url!r}: no element id '{parts.fragment}' in {trel}")
    return problems, {"pages": len(pages), "links": links, "entries": len(entries)}


def main(argv):
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    problems, stats = check(argv[1])
    for p in problems:
        print(p)
    if problems:
        print(f"site check FAILED: {len(problems)} problems", file=sys.stderr)
        return 1
    print(f"site check OK: {stats['entries']} entries, {stats['pages']} pages, {stats['links']} internal links resolved")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
