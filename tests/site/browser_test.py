#!/usr/bin/env python3
"""The generated site in a real browser (issue 17): headless Chromium opens it from disk (file://).

    python3 tests/site/browser_test.py SITE_DIR ARTEFACT_DIR [--queries tests/diagnostics/search_queries.json]

For the three seed messages and a pasted message with concrete numbers it types the text into the
index's search box, requires the right entry as the first result, follows that result's link with a
mouse click and requires the entry page to show the id and its solutions. It also runs every query of
the search table through the page (same first result as the C++ engine's test), checks the slug
permalink and the op filter, fails on any JavaScript error, and saves screenshots of the index with
results and of an entry page, light and dark, plus report.json, into ARTEFACT_DIR.
Exit status: 0 passed, 1 failed, 77 Chromium is not installed.
"""
import argparse
import json
import os
import pathlib
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cdp import Browser, CdpError, find_chromium  # noqa: E402

# The messages of the three seed pages (000 force_flush device, 002 g_cache dtype, 003 sparse
# prefill CUDA), as a user pastes them, and a message with concrete numbers.
REQUIRED = [
    ("ValueError: `force_flush` must be on the same device as the inputs.", "b62325e96d849b25"),
    ("`g_cache` must have dtype torch.float32.", "066bd06e9ab538bd"),
    ("Triton sparse_attn_v4_paged_prefill requires CUDA/HIP tensors", "5d9da259c68eb6c4"),
    ("`write_pos` must have shape (3,).", "89c9b2132ca9bde9"),
]


# Counts the page's renders: every search (site.js's update()) rewrites the entry count's text, and
# the results when there is a query. Installed once per document; returns the count so far.
RENDERS = ("(() => { if (window.__kparityRenders === undefined) { window.__kparityRenders = 0;"
           " new MutationObserver(() => { window.__kparityRenders += 1; })"
           ".observe(document.body, {childList: true, subtree: true}); }"
           " return window.__kparityRenders; })()")


def search(b, text):
    """Types `text` into the index's search box, presses Enter and returns the ids of the results,
    best first. The box also searches by itself 120 ms after the last keystroke (site.js): that
    search must have run before Enter, or it rewrites the results later, possibly under a click on
    them, which then reaches no link (issue 32: the click was lost and the test waited for a page
    load that never came). So: type, wait for the page's own search, then Enter and its search."""
    b.eval("(() => { const q = document.getElementById('q'); q.value = ''; q.focus(); return true; })()")
    before = b.eval(RENDERS)
    b.type_text(text)
    b.wait_for(f"window.__kparityRenders > {before}", what=f"the search box's own search for {text!r}")
    typed = b.eval(RENDERS)
    b.press_enter()
    b.wait_for(f"window.__kparityRenders > {typed} && document.getElementById('q').value === " + json.dumps(text) +
               " && !document.getElementById('results').hidden", what=f"results for {text!r} after Enter")
    return b.eval("Array.from(document.querySelectorAll('#result-list > li')).map(li => li.dataset.id)")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("site")
    ap.add_argument("artefacts")
    ap.add_argument("--queries")
    ap.add_argument("--chromium", default=os.environ.get("KPARITY_CHROMIUM") or find_chromium())
    args = ap.parse_args()
    if not args.chromium:
        print("skipped: chromium not installed (apt-get install -y chromium)")
        return 77
    site = pathlib.Path(args.site).resolve()
    out = pathlib.Path(args.artefacts)
    out.mkdir(parents=True, exist_ok=True)
    index_url = (site / "index.html").as_uri()
    catalog = json.loads((site / "catalog.json").read_text(encoding="utf-8"))
    by_id = {e["id"]: e for e in catalog["entries"]}
    failures, report = [], {"chromium": args.chromium, "required": [], "table": []}
    started = time.monotonic()

    step = "start-up and the required searches"
    b = Browser(args.chromium)
    try:
        b.open_page()
        report["version"] = b.call("Browser.getVersion", session=False).get("product")
        b.color_scheme("light")
        b.navigate(index_url)
        b.wait_for("document.documentElement.dataset.ready === '1'", what="site.js")
        if b.eval("typeof window.KPARITY_SEARCH_INDEX") != "object":
            failures.append("the search index did not load from file://")

        for text, want in REQUIRED:
            b.navigate(index_url)
            b.wait_for("document.documentElement.dataset.ready === '1'")
            ids = search(b, text)
            row = {"query": text, "expect": want, "got": ids[:3]}
            report["required"].append(row)
            if not ids or ids[0] != want:
                failures.append(f"{text!r}: first result {ids[:1]}, expected {want}")
                continue
            if want == "b62325e96d849b25":
                b.screenshot(str(out / "index-search.png"), full_page=False)
            b.click("#result-list > li:first-child a")
            b.wait_event("Page.loadEventFired")
            b.wait_for("document.readyState === 'complete'")
            page = b.eval("({href: location.href, id: (document.querySelector('h1 .id') || {}).textContent,"
                          " title: document.title, solutions: document.querySelectorAll('#solutions li').length,"
                          " text: document.body.innerText})")
            row["page"] = page["href"]
            n_solutions = len(by_id[want].get("solutions", []))
            if not page["href"].endswith(f"/e/{want}/index.html"):
                failures.append(f"{text!r}: the first result's link led to {page['href']}")
            if page["id"] != want or want not in page["title"]:
                failures.append(f"{text!r}: the entry page shows id {page['id']!r} (title {page['title']!r})")
            if n_solutions == 0 or page["solutions"] != n_solutions or "Solutions" not in page["text"]:
                failures.append(f"{text!r}: the entry page shows {page['solutions']} solutions, the catalog has {n_solutions}")
            if want == "066bd06e9ab538bd":
                b.screenshot(str(out / "entry.png"))
                b.color_scheme("dark")
                b.screenshot(str(out / "entry-dark.png"))
                b.color_scheme("light")

        # The whole query table: the page ranks like the C++ engine's test requires.
        step = "the query table"
        if args.queries:
            b.navigate(index_url)
            b.wait_for("document.documentElement.dataset.ready === '1'")
            for q in json.loads(pathlib.Path(args.queries).read_text(encoding="utf-8"))["queries"]:
                ids = search(b, q["q"])
                report["table"].append({"query": q["q"], "expect": q["expect"], "got": ids[:1]})
                if not ids or ids[0] != q["expect"]:
                    failures.append(f"table {q['kind']}: {q['q']!r}: first result {ids[:1]}, expected {q['expect']}")

        # The header search of an entry page leads to the index with the results.
        step = "the header search"
        b.navigate((site / "e" / "5d9da259c68eb6c4" / "index.html").as_uri())
        b.eval("document.querySelector('.top-search input').focus()")
        b.type_text("force_flush on wrong device")
        b.click(".top-search button")
        b.wait_event("Page.loadEventFired")
        b.wait_for("document.documentElement.dataset.ready === '1' && !document.getElementById('results').hidden",
                   what="the index after the header search")
        first = b.eval("(document.querySelector('#result-list > li') || {dataset: {}}).dataset.id")
        if first != "b62325e96d849b25":
            failures.append(f"header search from an entry page: first result {first}, expected b62325e96d849b25")

        # A slug permalink forwards to the id page.
        step = "the slug permalink"
        seed = by_id["066bd06e9ab538bd"]
        b.navigate((site / "s" / seed["slug"] / "index.html").as_uri())
        b.wait_for("location.pathname.endsWith('/e/066bd06e9ab538bd/index.html') && document.readyState === 'complete'",
                   what="the slug page to forward")

        # The op filter hides every other op, and the count says so.
        step = "the op filter"
        b.navigate(index_url + "?op=sparse/paged_prefill")
        b.wait_for("document.documentElement.dataset.ready === '1'")
        shown = b.eval("Array.from(document.querySelectorAll('#entries tr.row')).filter(r => !r.hidden).map(r => r.dataset.op)")
        want_n = sum(1 for e in catalog["entries"] if e["op"] == "sparse/paged_prefill")
        if len(shown) != want_n or set(shown) != {"sparse/paged_prefill"}:
            failures.append(f"op filter: {len(shown)} rows shown ({sorted(set(shown))}), expected {want_n}")
        b.navigate(index_url)
        b.wait_for("document.documentElement.dataset.ready === '1'")
        b.screenshot(str(out / "index.png"), full_page=False)
        b.color_scheme("dark")
        search(b, "g_cache must be float32")
        b.screenshot(str(out / "index-dark.png"), full_page=False)

        errors = b.page_errors()
        if errors:
            failures.append(f"JavaScript errors: {errors}")
    except CdpError as e:
        failures.append(f"browser, during {step}: {e}")
    finally:
        b.close()

    report["seconds"] = round(time.monotonic() - started, 2)
    report["failures"] = failures
    (out / "report.json").write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    for f in failures:
        print("FAIL:", f)
    shots = sorted(p.name for p in out.glob("*.png"))
    print(f"browser test {'FAILED' if failures else 'passed'} in {report['seconds']} s ({report.get('version')}); "
          f"{len(report['required'])} required searches, {len(report['table'])} table queries; artefacts in {out}: {shots}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
