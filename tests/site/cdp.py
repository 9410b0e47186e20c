"""A small Chrome DevTools Protocol client over --remote-debugging-pipe (standard library only).

Chromium reads commands from fd 3 and writes replies and events to fd 4, one JSON message per
NUL-terminated frame; no websocket and no network port are involved.

Every wait is on something Chromium reports: a reply, an event, or a page condition polled through
Runtime.evaluate. The clock is only a backstop for a browser that stays alive but never reports
(KPARITY_BROWSER_TIMEOUT seconds per wait, default 180): on a loaded machine a wait simply lasts
longer (issue 32: a 30-second clock failed the suite beside the deploy tests). A browser that exits
fails the wait at once, with its stderr.
"""
import base64
import json
import os
import select
import shutil
import subprocess
import tempfile
import time


class CdpError(RuntimeError):
    pass


# Runtime.evaluate errors that mean "the page is between two documents".
NAVIGATING = ("Inspected target navigated or closed", "Execution context was destroyed",
              "Cannot find context with specified id")


def find_chromium():
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    return None


class Browser:
    def __init__(self, binary, width=1280, height=900, timeout=None):
        self.timeout = timeout or float(os.environ.get("KPARITY_BROWSER_TIMEOUT") or 180)
        self.profile = tempfile.mkdtemp(prefix="kparity-chromium-")
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()
        os.set_inheritable(to_browser_r, True)
        os.set_inheritable(from_browser_w, True)
        args = [binary, "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--no-first-run", "--no-default-browser-check", "--disable-extensions", "--mute-audio",
                "--hide-scrollbars", "--allow-file-access-from-files", f"--user-data-dir={self.profile}",
                f"--window-size={width},{height}", "--remote-debugging-pipe", "about:blank"]
        # The shell moves the pipe ends to the fds Chromium expects (3: commands in, 4: replies out).
        self.proc = subprocess.Popen(
            ["sh", "-c", f'exec "$0" "$@" 3<&{to_browser_r} 4>&{from_browser_w}'] + args,
            pass_fds=(to_browser_r, from_browser_w), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._buf = b""
        self._waiting_for = "Chromium's start"
        self._next = 0
        self.events = []
        self.session = None
        self.width, self.height = width, height

    def close(self):
        try:
            self.call("Browser.close", session=False, timeout=5)
        except Exception:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for fd in (self._to_browser, self._from_browser):
            try:
                os.close(fd)
            except OSError:
                pass
        shutil.rmtree(self.profile, ignore_errors=True)

    def _read_message(self, deadline):
        while b"\0" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise CdpError(f"Chromium is running but reported nothing for {self.timeout:.0f} s "
                               f"(KPARITY_BROWSER_TIMEOUT) while the test waited for {self._waiting_for}")
            ready, _, _ = select.select([self._from_browser], [], [], left)
            if not ready:
                continue
            chunk = os.read(self._from_browser, 1 << 20)
            if not chunk:
                err = self.proc.stderr.read().decode(errors="replace") if self.proc.poll() is not None else ""
                raise CdpError("Chromium closed the pipe" + (": " + err[-2000:] if err else ""))
            self._buf += chunk
        frame, self._buf = self._buf.split(b"\0", 1)
        return json.loads(frame)

    def call(self, method, params=None, session=True, timeout=None):
        self._next += 1
        msg = {"id": self._next, "method": method, "params": params or {}}
        if session and self.session:
            msg["sessionId"] = self.session
        data = json.dumps(msg).encode() + b"\0"
        while data:
            data = data[os.write(self._to_browser, data):]
        deadline = time.monotonic() + (timeout or self.timeout)
        self._waiting_for = f"the reply to {method}"
        while True:
            reply = self._read_message(deadline)
            if reply.get("id") == self._next:
                if "error" in reply:
                    raise CdpError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def wait_event(self, method, timeout=None, match=None):
        """The first event `method` (whose params satisfy `match`, if given), seen or still to come."""
        deadline = time.monotonic() + (timeout or self.timeout)
        self._waiting_for = f"the event {method}"
        while True:
            for i, ev in enumerate(self.events):
                if ev.get("method") == method and (match is None or match(ev.get("params", {}))):
                    return self.events.pop(i)
            self.events.append(self._read_message(deadline))

    def forget_loads(self):
        """Drops the load events seen so far: they belong to documents before the next one."""
        self.events = [e for e in self.events if e.get("method") not in ("Page.loadEventFired", "Page.lifecycleEvent")]

    def open_page(self):
        targets = self.call("Target.getTargets", session=False)["targetInfos"]
        page = next((t for t in targets if t["type"] == "page"), None)
        target = page["targetId"] if page else self.call("Target.createTarget", {"url": "about:blank"}, session=False)["targetId"]
        self.session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True}, session=False)["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            self.call(f"{domain}.enable")
        self.call("Page.setLifecycleEventsEnabled", {"enabled": True})
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": self.width, "height": self.height, "deviceScaleFactor": 1, "mobile": False})

    def navigate(self, url):
        reply = self.call("Page.navigate", {"url": url})
        if reply.get("errorText"):
            raise CdpError(f"navigate {url}: {reply['errorText']}")
        # Wait for the load of this navigation's document: a load event of the page before it (a
        # meta refresh that finished late) may still be in flight, and carries another loader id.
        self.wait_event("Page.lifecycleEvent",
                        match=lambda p: p.get("name") == "load" and p.get("loaderId") == reply.get("loaderId"))
        self.forget_loads()

    def eval(self, expression):
        reply = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True})
        if "exceptionDetails" in reply:
            raise CdpError(f"{expression}: {reply['exceptionDetails'].get('text')} {reply['exceptionDetails'].get('exception', {}).get('description', '')}")
        return reply["result"].get("value")

    def wait_for(self, expression, timeout=None, what=None):
        deadline = time.monotonic() + (timeout or self.timeout)
        while True:
            try:
                value = self.eval(expression)
            except CdpError as e:
                # A poll that lands during a navigation (a meta refresh, a form submit) sees the old
                # document torn down: the condition is simply not true yet.
                if not any(m in str(e) for m in NAVIGATING):
                    raise
                value = None
            if value:
                return value
            if time.monotonic() > deadline:
                raise CdpError(f"timed out waiting for {what or expression}")
            time.sleep(0.05)

    def click(self, selector):
        """A mouse click at the centre of `selector`'s element. The page notes the element its click
        event reached; a click that reached another one (the element was replaced between press
        and release, so the browser sends the click to an ancestor, and a link does not navigate)
        fails here, at once, instead of as a load event that never comes."""
        self.forget_loads()  # a click may navigate
        box = self.eval(f"(() => {{ const el = document.querySelector({json.dumps(selector)}); if (!el) return null;"
                        " el.scrollIntoView({block: 'center'}); const r = el.getBoundingClientRect();"
                        " window.__kparityClick = {want: el, got: null};"
                        " document.addEventListener('click', ev => { window.__kparityClick.got = ev.target; },"
                        " {capture: true, once: true});"
                        " return {x: r.left + r.width / 2, y: r.top + r.height / 2}; })()")
        if not box:
            raise CdpError(f"nothing to click at {selector}")
        for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
            self.call("Input.dispatchMouseEvent", {"type": kind, "x": box["x"], "y": box["y"], "button": "left", "clickCount": 1})
        # The reply to mouseReleased comes after the page handled it, click listeners included. A new
        # document (no __kparityClick) or one being torn down means the click navigated.
        try:
            landed = self.eval("(() => { const c = window.__kparityClick; if (!c) return 'navigated';"
                               " return c.got && c.want.contains(c.got) ? 'hit' : 'missed: ' +"
                               " (c.got ? c.got.nodeName + ' ' + (c.got.isConnected ? 'in the page' : 'no longer in the page')"
                               " : 'no click event'); })()")
        except CdpError as e:
            if not any(m in str(e) for m in NAVIGATING):
                raise
            landed = "navigated"
        if landed.startswith("missed"):
            raise CdpError(f"the click on {selector} did not reach it ({landed[8:]})")

    def type_text(self, text):
        self.call("Input.insertText", {"text": text})

    def press_enter(self):
        for kind in ("rawKeyDown", "keyUp"):
            self.call("Input.dispatchKeyEvent", {"type": kind, "key": "Enter", "code": "Enter", "windowsVirtualKeyCode": 13})

    def color_scheme(self, scheme):
        self.call("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": scheme}]})

    def screenshot(self, path, full_page=True):
        params = {"format": "png"}
        if full_page:
            size = self.call("Page.getLayoutMetrics")["cssContentSize"]
            params["clip"] = {"x": 0, "y": 0, "width": self.width, "height": min(size["height"], 8000), "scale": 1}
            params["captureBeyondViewport"] = True
        data = self.call("Page.captureScreenshot", params)["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))

    def page_errors(self):
        """JavaScript exceptions and console errors seen so far."""
        out = []
        for ev in self.events:
            if ev.get("method") == "Runtime.exceptionThrown":
                d = ev["params"]["exceptionDetails"]
                out.append(d.get("exception", {}).get("description") or d.get("text"))
            elif ev.get("method") == "Log.entryAdded" and ev["params"]["entry"].get("level") == "error":
                out.append(ev["params"]["entry"].get("text"))
        return out
