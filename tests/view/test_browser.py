"""The report in a real headless browser (Debian's chromium driven by playwright): it loads from
disk with no request beyond the file itself and no script error, and its controls work: sorting,
filtering, problems only, links that open the folds they point into, run tabs, and a comparison
ordered by the largest difference. ``make test-browser`` runs these; they skip without a browser.
"""

from __future__ import annotations

import json
import os
import shutil

import pytest

pytestmark = pytest.mark.browser

ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def _chromium() -> str | None:
    given = os.environ.get("RECALLBENCH_CHROMIUM")
    if given and os.access(given, os.X_OK):
        return given
    return shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="session")
def browser():
    executable = _chromium()
    if executable is None:
        why = "no chromium on PATH (apt-get install chromium; or set RECALLBENCH_CHROMIUM)"
        if os.environ.get("RECALLBENCH_REQUIRE_BROWSER"):  # CI: a missing browser is a failure
            pytest.fail(why)
        pytest.skip(why)
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=executable, args=ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def open_page(browser):
    """Open a report file; every request and every script error is recorded on the page."""
    pages = []

    def open_(path, fragment: str = ""):
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.requests, page.errors = [], []
        page.on("request", lambda r: page.requests.append(r.url))
        page.on("pageerror", lambda e: page.errors.append(str(e)))
        page.on("console", lambda m: page.errors.append(m.text) if m.type == "error" else None)
        page.goto(path.as_uri() + fragment)
        page.wait_for_selector("html[data-ready='1']")
        pages.append(page)
        return page

    yield open_
    for page in pages:
        page.close()


def _report(run_dir, name, **kw):
    from recallbench.view import write_report

    return write_report(run_dir, run_dir.parent / name, **kw)


def _shown(page, scope: str) -> int:
    return page.evaluate(f"document.querySelectorAll('#{scope} [data-item]:not(.hidden)').length")


def test_run_report_loads_offline_and_its_controls_work(open_page, run_copy):
    run_dir = run_copy("memory_retrieval")
    lines = (run_dir / "predictions.jsonl").read_text().splitlines()
    i = next(i for i, line in enumerate(lines) if '"kind": "response"' in line)
    failed = json.loads(lines[i])
    failed["failure"] = "RateLimitError: 429"
    lines[i] = json.dumps(failed)
    (run_dir / "predictions.jsonl").write_text("\n".join(lines) + "\n")
    path = _report(run_dir, "run.html")
    page = open_page(path)
    assert page.requests == [path.as_uri()] and page.errors == []
    total = _shown(page, "r1-items")
    assert total == sum(json.loads(x)["kind"] == "response" for x in lines) > 1

    page.fill(".toolbar[data-target='r1-items'] input[type=search]", failed["pred_id"])
    assert _shown(page, "r1-items") == 1
    assert page.inner_text(".toolbar[data-target='r1-items'] .count") == f"1 of {total} shown"
    page.fill(".toolbar[data-target='r1-items'] input[type=search]", "")
    page.check(".toolbar[data-target='r1-items'] input[type=checkbox]")
    assert _shown(page, "r1-items") == 1  # only the failed item
    page.uncheck(".toolbar[data-target='r1-items'] input[type=checkbox]")

    heads = page.eval_on_selector_all("#r1-items th", "hs => hs.map(h => h.textContent.trim())")
    column = next(i for i, h in enumerate(heads) if h.startswith("rouge_l"))
    page.click(f"#r1-items th:nth-child({column + 1})")  # first click: largest first
    values = page.eval_on_selector_all(
        f"#r1-items tbody tr td:nth-child({column + 1})", "tds => tds.map(t => t.dataset.v)"
    )
    numbers = [float(v) for v in values if v != ""]
    assert numbers == sorted(numbers, reverse=True) and numbers[0] > numbers[-1]

    # the problems list links into a closed episode: the link opens it and shows the item
    link = page.locator("ul.problems a").first
    target = link.get_attribute("href")[1:]
    assert not page.is_visible(f"#{target}")
    link.click()
    assert page.is_visible(f"#{target}")
    assert "RateLimitError: 429" in page.inner_text(f"#{target}")


def test_a_recalled_id_leads_to_the_turn_it_came_from(open_page, view_runs):
    path = _report(view_runs["memory_retrieval"], "recall.html")
    page = open_page(path)
    link = page.locator("details.recall a[href]").first
    target = link.get_attribute("href")[1:]
    assert not page.is_visible(f"#{target}")  # inside a closed episode
    page.click("button[data-open='1'][data-scope='r1-episodes']")
    link.click()
    assert page.is_visible(f"#{target}")
    top = page.eval_on_selector(f"#{target}", "e => e.getBoundingClientRect().top")
    assert 0 <= top <= 900  # scrolled into view
    # a shared link (file.html#turn) opens the folds around its turn on load
    page = open_page(path, f"#{target}")
    assert page.is_visible(f"#{target}")
    assert page.requests == [path.as_uri()] and page.errors == []


def test_comparison_and_sweep_pages(open_page, view_runs):
    a, b = view_runs["full_history"], view_runs["memory_retrieval"]
    page = open_page(_report(a, "cmp.html", compare=b, metric="rouge_l"))
    deltas = page.eval_on_selector_all("details.pairitem", "ds => ds.map(d => d.dataset.delta)")
    magnitudes = [abs(float(d)) for d in deltas if d != ""]
    assert magnitudes == sorted(magnitudes, reverse=True) and magnitudes[0] > 0
    same = page.eval_on_selector_all("details.pairitem[data-flag='0']", "ds => ds.length")
    page.check(".toolbar[data-target='pairs'] input[type=checkbox]")
    assert _shown(page, "pairs") == len(deltas) - same
    page.click("button[data-open='1'][data-scope='pairs']")
    assert page.is_visible("details.pairitem:not(.hidden) .pair.three")
    assert page.requests[1:] == [] and page.errors == []

    page = open_page(_report(a.parent, "sweep.html"))
    assert page.is_visible("#run1") and not page.is_visible("#run2")
    page.click("nav.runs button[data-run='run2']")
    assert page.is_visible("#run2") and not page.is_visible("#run1")
    page.click("nav.runs button[data-run='all']")
    assert page.is_visible("#run1") and page.is_visible("#run2")
    assert page.requests[1:] == [] and page.errors == []
