#!/usr/bin/python3
"""Opens rig report's page in headless Chromium from file:// and checks what a
person would see: the page is not blank (screenshot pixel variance), logs no
console error or exception, makes no network request (only the page itself
loads), and every <svg> has a non-zero size. At 1400 px wide (issue 38): no
element is wider than the window, and a bench's, a ladder's, a fit's and a
place's page each opens with its headline (answer, the three quantities, the
verdict and its reason) in the first screen, in figures a person reads. With
RIG_REPORT_SCREENS=DIR, those first screens are saved there as PNG.

Chromium is driven over the DevTools protocol through --remote-debugging-pipe
(fd 3: commands in, fd 4: replies out, each message NUL-terminated JSON).
Before judging the report, a control page with a console error, an exception,
a remote image and nothing drawn is opened, and each check must catch it: a
check that cannot fail proves nothing.

usage: browser_check.py RIG_BINARY FIXTURES_DIR SCRATCH_DIR
exit 0 pass, 1 fail, 77 skipped (chromium not installed).
"""
import base64
import glob
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
if not CHROMIUM:
    print("SKIP: chromium is not installed (scripts/install-deps.sh --test installs it)")
    sys.exit(77)
try:
    from PIL import Image
except ImportError:
    print("SKIP: python3-pil is not installed (scripts/install-deps.sh --test installs it)")
    sys.exit(77)


class Browser:
    def __init__(self, profile_dir):
        cmd_r, cmd_w = os.pipe()
        res_r, res_w = os.pipe()
        # High duplicates, so that placing them at 3 and 4 cannot clobber each other.
        child_in, child_out = os.dup(cmd_r), os.dup(res_w)

        def place():
            os.dup2(child_in, 3)
            os.dup2(child_out, 4)

        self.proc = subprocess.Popen(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe",
             "--no-first-run", "--no-default-browser-check", "--disable-extensions",
             "--disable-background-networking", "--disable-sync", "--disable-component-update",
             "--user-data-dir=" + profile_dir, "about:blank"],
            preexec_fn=place, close_fds=False, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL)
        for fd in (cmd_r, res_w, child_in, child_out):
            os.close(fd)
        self.w, self.r = cmd_w, res_r
        self.buf = b""
        self.next_id = 0
        self.events = []
        os.set_blocking(self.r, False)

    def _read_message(self, deadline):
        import select
        while b"\0" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no reply from chromium")
            ready, _, _ = select.select([self.r], [], [], left)
            if ready:
                chunk = os.read(self.r, 1 << 20)
                if not chunk:
                    raise RuntimeError("chromium closed the pipe")
                self.buf += chunk
        msg, self.buf = self.buf.split(b"\0", 1)
        return json.loads(msg)

    def call(self, method, params=None, session=None, timeout=60):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self.w, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            m = self._read_message(deadline)
            if m.get("id") == self.next_id:
                if "error" in m:
                    raise RuntimeError(f"{method}: {m['error']}")
                return m.get("result", {})
            self.events.append(m)

    def wait_event(self, method, session, timeout=60):
        deadline = time.monotonic() + timeout
        for i, m in enumerate(self.events):
            if m.get("method") == method and m.get("sessionId") == session:
                return self.events.pop(i)
        while True:
            m = self._read_message(deadline)
            if m.get("method") == method and m.get("sessionId") == session:
                return m
            self.events.append(m)

    def close(self):
        try:
            self.call("Browser.close", timeout=10)
        except Exception:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def inspect(browser, url):
    """Loads url in a fresh tab; returns (errors, requests, svg sizes, pixel stddev)."""
    target = browser.call("Target.createTarget", {"url": "about:blank"})["targetId"]
    session = browser.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
    for domain in ("Page", "Runtime", "Log", "Network"):
        browser.call(domain + ".enable", session=session)
    browser.call("Emulation.setDeviceMetricsOverride",
                 {"width": 1280, "height": 1600, "deviceScaleFactor": 1, "mobile": False},
                 session=session)
    browser.events.clear()
    browser.call("Page.navigate", {"url": url}, session=session)
    browser.wait_event("Page.loadEventFired", session)
    # Let late console messages and requests arrive.
    browser.call("Runtime.evaluate", {"expression": "new Promise(r => setTimeout(r, 300))",
                                      "awaitPromise": True}, session=session)
    sizes = browser.call("Runtime.evaluate", {
        "expression": "Array.from(document.querySelectorAll('svg')).map(s => {"
                      "const r = s.getBoundingClientRect(); return [r.width, r.height]; })",
        "returnByValue": True}, session=session)["result"]["value"]
    shot = browser.call("Page.captureScreenshot", {"format": "png"}, session=session)["data"]
    img = Image.open(io.BytesIO(base64.b64decode(shot))).convert("L")
    pixels = list(img.getdata())
    mean = sum(pixels) / len(pixels)
    stddev = (sum((p - mean) ** 2 for p in pixels[::7]) / len(pixels[::7])) ** 0.5
    errors, requests = [], []
    for m in browser.events:
        if m.get("sessionId") != session:
            continue
        method, p = m.get("method"), m.get("params", {})
        if method == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
            errors.append("console: " + " ".join(str(a.get("value", a.get("description", "")))
                                                  for a in p.get("args", [])))
        elif method == "Runtime.exceptionThrown":
            errors.append("exception: " + p.get("exceptionDetails", {}).get("text", ""))
        elif method == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
            errors.append("log: " + p["entry"].get("text", ""))
        elif method == "Network.requestWillBeSent":
            requests.append(p.get("request", {}).get("url", ""))
    browser.call("Target.closeTarget", {"targetId": target})
    return errors, [u for u in requests if u != url], sizes, stddev


# Issue 38: the page read at 1400 px wide. Each result opens with its headline
# (the answer, the three quantities where the kind measures them, the verdict
# and its reason) within the first screen, and nothing is wider than the
# window. Per page: the words its headline must hold.
LAYOUT_WIDTH, FIRST_SCREEN = 1400, 900
LAYOUT_PAGES = {
    # rig bench on sim:bw_in=400MB/s,bw_out=100MB/s,lat=0.45ms (a virtual clock)
    "bench-sim-v7.json": ["time to first output", "steady-state rate", "bytes per inference",
                          "verdict: VALID"],
    # rig ladder on the same asymmetric half-duplex link
    "ladder-asym-v7.json": ["the link: in 400 MB/s, out 100 MB/s", "half duplex",
                            "latency 0.45 ms per transfer", "verdict:"],
    # rig fit --params 12.0225e9 --device-memory 8GiB --link usb3-gen2
    "fit-streamed-v7.json": ["4-bit weights (6.011 GB)", "2.579 GB spare", "verdict:"],
    # rig place --workload fps=30,frame=64x64 over the bench above and one on cpu
    "place-v7.json": ["choice: ", "verdict:"],
}
# What a person should never have to read in a headline: an exponent, a raw
# byte count of many digits.
UNREADABLE = ("e+", "e-0", "e-1")


def layout(browser, url, shot_path=None):
    """(page width, [elements wider than the window], headline texts, the first headline's top)."""
    target = browser.call("Target.createTarget", {"url": "about:blank"})["targetId"]
    session = browser.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
    browser.call("Page.enable", session=session)
    browser.call("Emulation.setDeviceMetricsOverride",
                 {"width": LAYOUT_WIDTH, "height": FIRST_SCREEN, "deviceScaleFactor": 1,
                  "mobile": False}, session=session)
    browser.call("Page.navigate", {"url": url}, session=session)
    browser.wait_event("Page.loadEventFired", session)
    value = browser.call("Runtime.evaluate", {
        "expression": "(() => { const w = window.innerWidth;"
                      " const wide = Array.from(document.querySelectorAll('body *'))"
                      "  .filter(e => e.getBoundingClientRect().right > w + 1)"
                      "  .slice(0, 5).map(e => e.tagName + '.' + e.className + ' right '"
                      "   + Math.round(e.getBoundingClientRect().right));"
                      " const h = Array.from(document.querySelectorAll('div.headline'));"
                      " return [document.documentElement.scrollWidth, wide,"
                      "  h.map(e => e.innerText),"
                      "  h.length ? h[0].getBoundingClientRect().bottom : -1]; })()",
        "returnByValue": True}, session=session)["result"]["value"]
    if shot_path:
        shot = browser.call("Page.captureScreenshot", {"format": "png"}, session=session)["data"]
        with open(shot_path, "wb") as f:
            f.write(base64.b64decode(shot))
    browser.call("Target.closeTarget", {"targetId": target})
    return value


def layout_failures(browser, rig, fixtures, scratch, all_page):
    """The layout checks, after a control page too wide for the window is caught."""
    failures = []
    control = os.path.join(scratch, "control-wide.html")
    with open(control, "w") as f:
        f.write("<!DOCTYPE html><html><head><title>c</title></head><body>"
                "<div class='headline'>3.1e+05 B</div><table><tr><td style='min-width:3000px'>"
                "x</td></tr></table></body></html>")
    width, wide, _, _ = layout(browser, "file://" + control)
    if width <= LAYOUT_WIDTH or not wide:
        failures.append(f"the too-wide control page was not caught (width {width})")
    shots = os.environ.get("RIG_REPORT_SCREENS")
    pages = [(all_page, None)]
    for name, words in LAYOUT_PAGES.items():
        page = os.path.join(scratch, "layout-" + name.replace(".json", ".html"))
        done = subprocess.run([rig, "report", os.path.join(fixtures, name), "-o", page],
                              capture_output=True, text=True)
        if done.returncode != 0:
            failures.append(f"rig report {name} failed: {done.stderr.strip()}")
            continue
        pages.append((page, (name, words)))
    for page, expect in pages:
        shot = None
        if shots and expect:
            os.makedirs(shots, exist_ok=True)
            shot = os.path.join(shots, os.path.basename(page).replace(".html", ".png"))
        width, wide, heads, bottom = layout(browser, "file://" + page, shot)
        where = expect[0] if expect else "every fixture on one page"
        if width > LAYOUT_WIDTH or wide:
            failures.append(f"{where}: wider than {LAYOUT_WIDTH} px (page {width} px): {wide}")
        if not heads:
            failures.append(f"{where}: no headline")
            continue
        if expect:
            if bottom > FIRST_SCREEN:
                failures.append(f"{where}: the headline ends at {bottom:.0f} px, below the "
                                f"first screen ({FIRST_SCREEN} px)")
            missing = [w for w in expect[1] if w not in heads[0]]
            if missing:
                failures.append(f"{where}: the headline lacks {missing}: {heads[0]!r}")
            odd = [u for u in UNREADABLE if u in heads[0]]
            if odd:
                failures.append(f"{where}: the headline shows {odd}: {heads[0]!r}")
    return failures, len(pages)


def main():
    rig, fixtures, scratch = sys.argv[1], sys.argv[2], sys.argv[3]
    os.makedirs(scratch, exist_ok=True)
    page = os.path.join(scratch, "report.html")
    results = sorted(glob.glob(os.path.join(fixtures, "*.json")))
    done = subprocess.run([rig, "report", *results, "-o", page], capture_output=True, text=True)
    if done.returncode != 0:
        print("rig report failed:", done.stderr)
        return 1
    with open(page, encoding="utf-8") as f:
        svgs_in_file = f.read().count("<svg")
    control = os.path.join(scratch, "control.html")
    with open(control, "w") as f:
        f.write("<!DOCTYPE html><html><head><title>c</title></head><body style='background:#fff'>"
                "<img src='http://127.0.0.1:9/x.png' alt=''>"
                "<script>console.error('control error'); throw new Error('control');</script>"
                "</body></html>")
    failures = []
    with tempfile.TemporaryDirectory(dir=scratch) as profile:
        browser = Browser(profile)
        try:
            c_errors, c_requests, _, c_stddev = inspect(browser, "file://" + control)
            if not any("control error" in e for e in c_errors) or \
                    not any("exception" in e for e in c_errors):
                failures.append(f"the control page's console error was not caught: {c_errors}")
            if not c_requests:
                failures.append("the control page's remote image was not caught")
            if c_stddev >= 2:
                failures.append(f"the blank control page has pixel stddev {c_stddev:.2f}")
            errors, requests, sizes, stddev = inspect(browser, "file://" + page)
            layout_fails, layout_pages = layout_failures(browser, rig, fixtures, scratch, page)
            failures += layout_fails
        finally:
            browser.close()
    if errors:
        failures.append("console errors: " + "; ".join(errors[:5]))
    if requests:
        failures.append("network requests: " + ", ".join(requests[:5]))
    if len(sizes) != svgs_in_file:
        failures.append(f"{len(sizes)} <svg> in the page, {svgs_in_file} in the file")
    if any(w <= 0 or h <= 0 for w, h in sizes):
        failures.append(f"an <svg> of zero size: {sizes}")
    if stddev < 10:
        failures.append(f"the page looks blank (pixel stddev {stddev:.2f})")
    if failures:
        print("browser check FAILED: " + " | ".join(failures))
        return 1
    print(f"browser check passed: {len(results)} results, {len(sizes)} svgs, "
          f"pixel stddev {stddev:.1f}, no console errors, no network requests "
          f"(control page: {len(c_errors)} errors, {len(c_requests)} requests caught); "
          f"{layout_pages} pages at {LAYOUT_WIDTH} px: no horizontal overflow, each headline "
          f"in the first screen with its figures")
    return 0


if __name__ == "__main__":
    sys.exit(main())
