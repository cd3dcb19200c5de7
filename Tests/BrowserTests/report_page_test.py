#!/usr/bin/python3
"""report.html in a real browser: Debian's headless Chromium driven over WebDriver (chromedriver, Selenium).

Renders two reports with the memharness under test (the sample report's run.json re-rendered, and a quick attributed
run of Scenarios/subscriptions.yaml with --attribute --heap-graph), opens each report.html from file://, and checks
what a reader does: no console error, no table wider than the page at 1,400 px, a timeline zoomed by dragging (its
axis changes) and reset by a double-click, a flame graph frame clicked (the view zooms into it), a search (the share
it states is the share of the sampled bytes whose stacks hold a matching function, computed here from the page's
data), a diff switched to another strategy, the live set moved to another moment, a cycle drawn. Then the page of
two runs (`compare --against DIR --html FILE`: the attributed run against the sample) switches its diff between the
runs, and a timeline of 12,000 samples per line is drawn with a bounded number of points per line (one column per
pixel), whatever the number of samples. Screenshots go to --screenshots; without it they are taken into the test's
temporary folder, which is removed when the test passes (and kept for a look when it fails).

Every wait is for a condition, with a bound. Everything started here (chromedriver, Chromium and its helpers)
is stopped at the end however the test ends: the driver is asked to quit, then chromedriver's process group is
killed, then any process still using this run's Chromium profile folder is killed by its pid, and the test fails
if one survives.
"""

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import traceback

from selenium import webdriver
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select, WebDriverWait

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
WAIT_SECONDS = 30


class Failure(Exception):
    pass


def check(condition, message):
    if not condition:
        raise Failure(message)


def wait_for(driver, predicate, what):
    try:
        return WebDriverWait(driver, WAIT_SECONDS, poll_frequency=0.05).until(lambda d: predicate(d))
    except Exception as error:
        raise Failure(f"timed out after {WAIT_SECONDS} s waiting for {what}") from error


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def render(memharness, run_json, folder):
    """A report folder holding only run.json, rendered by `memharness report`."""
    os.makedirs(folder)
    shutil.copyfile(run_json, os.path.join(folder, "run.json"))
    subprocess.run([memharness, "report", folder], check=True, stdout=subprocess.DEVNULL, timeout=300)
    return os.path.join(folder, "report.html")


def attributed_run(memharness, folder):
    """A quick run of the subscriptions scenario with allocation stacks and heap graphs."""
    scenario = os.path.join(os.path.dirname(__file__), "..", "..", "Scenarios", "subscriptions.yaml")
    result = subprocess.run(
        [memharness, "run", scenario, "--quick", "--attribute", "--heap-graph", "--out", folder],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=600, text=True)
    # 2: an unexpected leak or a failed check is a finding, not a failure to write the report.
    check(result.returncode in (0, 2), f"memharness run exited {result.returncode}: {result.stderr[-2000:]}")
    return os.path.join(folder, "report.html")


class Browser:
    """chromedriver in its own process group and the session it drives; `close` stops both whatever happened."""

    def __init__(self, workspace, dark=False):
        self.dark = dark
        self.profile = os.path.join(workspace, "chromium-profile-dark" if dark else "chromium-profile")
        port = free_port()
        self.log = open(os.path.join(workspace, "chromedriver.log"), "w")
        self.server = subprocess.Popen(
            [CHROMEDRIVER, f"--port={port}"], stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)
        self.port = port
        self.driver = None

    def connect(self):
        """Waits for chromedriver to listen, then opens the session (Chromium starts here)."""
        deadline = time.monotonic() + WAIT_SECONDS
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                break
            except OSError:
                check(time.monotonic() < deadline, "chromedriver did not listen within the bound")
                try:
                    self.server.wait(timeout=0.05)  # returns early only when chromedriver exited
                    raise Failure("chromedriver exited at start; see chromedriver.log")
                except subprocess.TimeoutExpired:
                    pass
        options = webdriver.ChromeOptions()
        options.binary_location = CHROMIUM
        for argument in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                         "--window-size=1280,1000", "--force-device-scale-factor=1", "--hide-scrollbars",
                         f"--user-data-dir={self.profile}",
                         # Blink's preferred scheme: 0 dark, 1 light (the README's screenshots are light).
                         f"--blink-settings=preferredColorScheme={0 if self.dark else 1}"]:
            options.add_argument(argument)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        self.driver = webdriver.Remote(command_executor=f"http://127.0.0.1:{self.port}", options=options)
        self.driver.set_page_load_timeout(WAIT_SECONDS)

    def close(self):
        if self.driver is not None:
            try:
                self.driver.quit()
            except Exception:
                pass  # the kills below stop whatever the quit left
        try:
            os.killpg(self.server.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.server.wait(timeout=WAIT_SECONDS)
        self.log.close()
        survivors = self.processes_using_profile()
        for pid in survivors:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + WAIT_SECONDS
        while self.processes_using_profile() and time.monotonic() < deadline:
            time.sleep(0.05)
        check(not self.processes_using_profile(), "Chromium processes survived the test")

    def processes_using_profile(self):
        found = []
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            try:
                with open(f"/proc/{name}/cmdline", "rb") as file:
                    if self.profile.encode() in file.read():
                        found.append(int(name))
            except OSError:
                continue  # ended meanwhile
        return found


class Page:
    def __init__(self, browser, path, screenshots):
        self.driver = browser.driver
        self.screenshots = screenshots
        self.driver.get("file://" + os.path.abspath(path))
        wait_for(self.driver, lambda d: d.execute_script("return document.documentElement.dataset.ready"),
                 "the page's script to finish")
        self.data = json.loads(self.driver.find_element(By.ID, "mh-data").get_attribute("textContent"))
        self.load_milliseconds = self.driver.execute_script(
            "const n = performance.getEntriesByType('navigation')[0]; return n.loadEventEnd - n.startTime;")
        self.views_milliseconds = self.driver.execute_script(
            "return performance.getEntriesByName('memharness-views')[0].duration;")
        self.check_console()

    def check_console(self):
        errors = [entry for entry in self.driver.get_log("browser") if entry.get("level") == "SEVERE"]
        check(not errors, f"console errors: {errors}")

    def scenario_index(self, name):
        names = [scenario["name"] for scenario in self.data["scenarios"]]
        check(name in names, f"no scenario {name} in the page (has {names})")
        return names.index(name)

    def element(self, selector):
        found = self.driver.find_elements(By.CSS_SELECTOR, selector)
        check(found, f"no element {selector}")
        self.driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", found[0])
        return found[0]

    def view(self, selector):
        """A view scrolled into sight, once the page has built it (flame graphs and explore views are built as
        they come near the viewport)."""
        host = self.element(selector)
        wait_for(self.driver, lambda d: host.get_attribute("data-drawn") == "true", f"{selector} to be drawn")
        return host

    def shot(self, element, name):
        path = os.path.join(self.screenshots, name)
        check(element.screenshot(path), f"could not save {path}")
        return path


def timeline_zoom(page, scenario_name, phase_name):
    """Drags across most of `phase_name` on the timeline: the axis must show that span, then reset on dblclick."""
    index = page.scenario_index(scenario_name)
    host = page.view(f'.mh-timeline[data-scenario="{index}"]')
    canvas = host.find_element(By.TAG_NAME, "canvas")
    timeline = page.data["scenarios"][index]["timeline"]
    end = max(line["timeMicroseconds"][-1] for line in timeline["lines"] if line["timeMicroseconds"])
    before = (host.get_attribute("data-t0"), host.get_attribute("data-t1"))
    check(before == ("0", str(end)), f"the timeline does not start on the whole run: {before}, end {end}")
    phase = next((p for p in timeline["phases"] if p["name"] == phase_name), None)
    check(phase is not None, f"no phase {phase_name} in {scenario_name}")
    width = canvas.size["width"]
    plot = width - 76 - 16

    def offset(t):  # from the canvas's centre, as Selenium's move_to_element_with_offset counts
        return round(76 + t / end * plot - width / 2)

    # The phase's first 70%: a span narrower than the run whatever the phase (burst is most of live-query).
    start = phase["startMicroseconds"]
    stop = start + (phase["endMicroseconds"] - start) * 0.7
    ActionChains(page.driver).move_to_element_with_offset(canvas, offset(max(0, start)), 0).click_and_hold() \
        .move_by_offset(offset(min(end, stop)) - offset(max(0, start)), 0).release().perform()
    wait_for(page.driver, lambda d: host.get_attribute("data-t1") != str(end), "the timeline to zoom")
    t0, t1 = int(host.get_attribute("data-t0")), int(host.get_attribute("data-t1"))
    pixel = end / plot
    check(abs(t0 - max(0, start)) <= 2 * pixel and abs(t1 - min(end, stop)) <= 2 * pixel,
          f"zoomed to {t0}-{t1} µs, dragged across {start:.0f}-{stop:.0f} µs")
    range_text = host.find_element(By.CSS_SELECTOR, ".mh-range").text
    check("showing 0.00 ms" not in range_text, f"the axis readout did not change: {range_text}")
    ActionChains(page.driver).move_to_element_with_offset(canvas, offset((t0 + t1) / 2), 20).perform()
    tip = page.driver.find_element(By.ID, "mh-tip")
    wait_for(page.driver, lambda d: tip.is_displayed() and "at " in tip.text, "the hover readout")
    check("phase" in tip.text, f"the hover readout has no phase: {tip.text}")
    shot = page.shot(host, f"timeline-{scenario_name}-zoomed.png")
    ActionChains(page.driver).double_click(canvas).perform()
    wait_for(page.driver,
             lambda d: host.get_attribute("data-t1") == str(end) and host.get_attribute("data-t0") == "0",
             "a double-click to reset the zoom")
    canvas.send_keys("+")  # the keyboard zooms too: the canvas is focusable
    wait_for(page.driver, lambda d: host.get_attribute("data-t1") != str(end), "the + key to zoom in")
    canvas.send_keys("0")
    wait_for(page.driver, lambda d: host.get_attribute("data-t1") == str(end), "the 0 key to reset the zoom")
    return shot


def peak_column(scenario, strategy):
    """The index of the column of the scenario's flame tree that is `strategy`'s peak in this run."""
    columns = scenario["flame"]["columns"]
    return next(i for i, c in enumerate(columns)
                if c["strategy"] == strategy and "mark" not in c and "earlierRun" not in c)


def expected_share(flame, column, query):
    """The share of the column's sampled bytes under a function containing `query`: the bytes of each matching node
    with no matching caller (a stack passing two matches counts once)."""
    nodes = flame["nodes"]
    weights = {node: amount for node, amount, _ in flame["columns"][column]["weights"]}

    def matches(index):
        return index > 0 and query in nodes[index]["name"].lower()

    def under_match(index):
        parent = nodes[index]["parent"]
        while parent > 0:
            if matches(parent):
                return True
            parent = nodes[parent]["parent"]
        return False

    total = weights.get(0, 0)
    matched = sum(amount for node, amount in weights.items() if matches(node) and not under_match(node))
    return matched / total if total else 0


def flame_zoom_and_search(page, scenario_name, name):
    """Clicks a frame of the first flame graph of the scenario, then searches a function of its subtree."""
    index = page.scenario_index(scenario_name)
    host = page.view(f'.mh-flame[data-scenario="{index}"]')
    strategy = host.get_attribute("data-strategy")
    scenario = page.data["scenarios"][index]
    column = peak_column(scenario, strategy)
    view = host.find_element(By.CSS_SELECTOR, ".mh-flame-view")
    svg = host.find_element(By.TAG_NAME, "svg")
    full = svg.size["width"]
    # A frame narrower than the graph (zooming must widen it), wide enough to click; in a profile of one
    # stack every frame is full width, and the frame above the root is taken.
    frames = [g for g in host.find_elements(By.CSS_SELECTOR, "g.fr[tabindex]")
              if g.get_attribute("data-name") != "all"]
    check(frames, f"no frame to click in {scenario_name}/{strategy}")
    widths = {g.id: g.find_element(By.TAG_NAME, "rect").size["width"] for g in frames}
    narrow = sorted((g for g in frames if widths[g.id] < full * 0.9), key=lambda g: -widths[g.id])
    target = narrow[0] if narrow else frames[min(2, len(frames) - 1)]
    target_name = target.get_attribute("data-name")
    page.driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", target)
    target.click()
    wait_for(page.driver, lambda d: view.get_attribute("data-zoom") == target_name, f"the zoom into {target_name}")
    zoomed = [g for g in host.find_elements(By.CSS_SELECTOR, "g.fr:not(.dim)")
              if g.get_attribute("data-name") == target_name]
    check(zoomed and zoomed[0].find_element(By.TAG_NAME, "rect").size["width"] >= full * 0.98,
          f"{target_name} does not fill the width after the click")
    check(host.find_elements(By.CSS_SELECTOR, "g.fr.dim"), "the callers of the zoomed frame are not shown dimmed")
    query = target_name.split("(")[0].lower()  # the function without its arguments: the frames of that function
    search = host.find_element(By.CSS_SELECTOR, "input.mh-search")
    search.send_keys(query)
    wait_for(page.driver, lambda d: view.get_attribute("data-matched-share") not in (None, ""), "the search result")
    share = float(view.get_attribute("data-matched-share"))
    expected = expected_share(scenario["flame"], column, query)
    check(abs(share - expected) < 1e-9, f"search '{query}': the page says {share}, the data {expected}")
    check(share > 0, f"search '{query}' matched nothing")
    text = host.find_element(By.CSS_SELECTOR, ".mh-match").text
    check(f"{share * 100:.1f}%" in text, f"the stated share '{text}' is not {share * 100:.1f}%")
    check(host.find_elements(By.CSS_SELECTOR, "g.fr.match"), "no frame highlighted")
    return page.shot(host, name)


def diff_switch(page, scenario_name, name):
    """Chooses another compared strategy: the differential flame graph and its summary follow."""
    index = page.scenario_index(scenario_name)
    host = page.view(f'.mh-explore[data-scenario="{index}"]').find_element(By.CSS_SELECTOR, ".mh-diff")
    page.driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", host)
    choice = Select(host.find_element(By.CSS_SELECTOR, "select.mh-compared"))
    before = host.get_attribute("data-compared")
    options = [o.text for o in choice.options]
    check(len(options) >= 2, "fewer than two strategies to compare")
    other = next(o for o in options if o != before and o != host.get_attribute("data-base"))
    choice.select_by_visible_text(other)
    wait_for(page.driver, lambda d: host.get_attribute("data-compared") == other, "the diff to switch")
    summary = host.find_element(By.CSS_SELECTOR, ".mh-diff-summary").text
    check(summary.startswith(other + " vs " + host.get_attribute("data-base")), f"diff summary: {summary}")
    check(host.find_elements(By.CSS_SELECTOR, "g.fr"), "the differential flame graph is empty")
    return page.shot(host, name)


def runs_diff(page, scenario_name, name):
    """On a comparison page: the diff opens on the same strategy of the two runs, and follows another base."""
    index = page.scenario_index(scenario_name)
    flame = page.data["scenarios"][index].get("flame") or {"columns": []}
    earlier = [c for c in flame["columns"] if "earlierRun" in c and "mark" not in c]
    check(earlier, f"the comparison page has no strategy of the earlier run in {scenario_name}")
    host = page.view(f'.mh-explore[data-scenario="{index}"]').find_element(By.CSS_SELECTOR, ".mh-diff")
    page.driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", host)
    compared = host.get_attribute("data-compared")
    check(compared.endswith(" (this run)"), f"the diff does not compare a strategy of this run: {compared}")
    strategy = compared[:-len(" (this run)")]
    if any(p["strategy"] == strategy for p in earlier):
        check(host.get_attribute("data-base") == strategy + " (earlier run)",
              f"the diff of {strategy} does not start against the earlier run: {host.get_attribute('data-base')}")
    choice = Select(host.find_element(By.CSS_SELECTOR, "select.mh-base"))
    other = next((o.text for o in choice.options
                  if o.text.endswith(" (earlier run)") and o.text != host.get_attribute("data-base")), None)
    if other:
        choice.select_by_visible_text(other)
        wait_for(page.driver, lambda d: host.get_attribute("data-base") == other, "the base to switch runs")
    summary = host.find_element(By.CSS_SELECTOR, ".mh-diff-summary").text
    check(summary.startswith(compared + " vs " + host.get_attribute("data-base")), f"diff summary: {summary}")
    check(host.find_elements(By.CSS_SELECTOR, "g.fr"), "the differential flame graph of two runs is empty")
    check(page.driver.find_elements(By.ID, "since"), "the comparison page has no section of the sites that grew")
    return page.shot(host, name)


def upsampled(run_json, scenario_name, rows, path):
    """run.json with every case of `scenario_name` resampled to `rows` rows (linear between the recorded rows,
    phases and gauges held): a long run's timeline, to check what the page draws does not grow with the samples."""
    with open(run_json) as file:
        record = json.load(file)
    record["rendering"]["samplesMaxRows"] = 0
    scenario = next(s for s in record["report"]["scenarios"] if s["name"] == scenario_name)
    for case in scenario["cases"] + scenario["instrumentedCases"]:
        measurements = next(iter(case["outcome"].values())).get("measurements")
        if not measurements or "samples" not in measurements:
            continue
        samples = measurements["samples"]
        n = len(samples["timeNanoseconds"].split())
        if n < 2:
            continue
        positions = [j * (n - 1) / (rows - 1) for j in range(rows)]

        def resample(text, step):
            values = [int(v) for v in text.split()]
            out = []
            for x in positions:
                i = min(int(x), n - 2)
                f = x - i
                out.append(values[i] if step else round(values[i] + (values[i + 1] - values[i]) * f))
            return " ".join(str(v) for v in out)
        for key, value in list(samples.items()):
            if isinstance(value, str) and len(value.split()) == n:
                samples[key] = resample(value, step=key == "phaseIndex")
        samples["gauges"] = [resample(g, step=True) if len(g.split()) == n else g for g in samples["gauges"]]
    with open(path, "w") as file:
        json.dump(record, file)
    return path


def long_timeline(page, scenario_name):
    """Counts the points each line of the timeline is drawn with (moveTo/lineTo between a beginPath and its
    stroke) over a redraw of the whole run and of a zoomed span: at most 4 per pixel column of the plot (lowest,
    highest, last and the step to the next column), far fewer than the samples."""
    index = page.scenario_index(scenario_name)
    host = page.view(f'.mh-timeline[data-scenario="{index}"]')
    canvas = host.find_element(By.TAG_NAME, "canvas")
    lines = page.data["scenarios"][index]["timeline"]["lines"]
    samples = max(len(line["timeMicroseconds"]) for line in lines)
    page.driver.execute_script("""
        const proto = CanvasRenderingContext2D.prototype;
        const counts = window.mhPathCounts = {current: 0, strokes: []};
        for (const name of ['moveTo', 'lineTo']) {
          const original = proto[name];
          proto[name] = function (...args) { counts.current += 1; return original.apply(this, args); };
        }
        const begin = proto.beginPath;
        proto.beginPath = function () { counts.current = 0; return begin.call(this); };
        const stroke = proto.stroke;
        proto.stroke = function (...args) { counts.strokes.push(counts.current); return stroke.apply(this, args); };
    """)
    columns = canvas.size["width"]
    check(samples > 4 * (columns + 2), f"{samples} samples are too few to tell a bounded drawing on {columns} px")
    most = []
    for key, what in (("+", "zoom in"), ("0", "reset")):
        page.driver.execute_script("window.mhPathCounts.strokes = []")
        before = host.get_attribute("data-t1")
        canvas.send_keys(key)
        wait_for(page.driver, lambda d: host.get_attribute("data-t1") != before, f"the {what} redraw")
        wait_for(page.driver, lambda d: d.execute_script("return window.mhPathCounts.strokes.length") > 0,
                 f"the {what} redraw to stroke")
        most.append(max(page.driver.execute_script("return window.mhPathCounts.strokes")))
    check(max(most) <= 4 * (columns + 2),
          f"a line of {samples} samples was drawn with {max(most)} points on a {columns} px canvas")
    check(min(most) >= columns / 4, f"the lines were drawn with only {min(most)} points: not drawn across the plot")
    page.check_console()
    return f"{samples:,} samples per line drawn with at most {max(most):,} points on {columns} px"


def over_time_moment(page, scenario_name, name=None):
    """Moves the live set over time to the first iteration mark: its label and flame graph follow."""
    index = page.scenario_index(scenario_name)
    host = page.view(f'.mh-explore[data-scenario="{index}"]').find_element(By.CSS_SELECTOR, ".mh-over-time")
    page.driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", host)
    label = host.find_element(By.CSS_SELECTOR, ".mh-range")
    before = label.text
    slider = host.find_element(By.CSS_SELECTOR, "input[type=range]")
    slider.send_keys(Keys.HOME)
    wait_for(page.driver, lambda d: label.text != before, "another moment of the live set")
    check(host.find_elements(By.CSS_SELECTOR, "g.fr"), "no live set drawn at the first moment")
    slider.send_keys(Keys.END)
    wait_for(page.driver, lambda d: label.text == before, "the last moment again")
    return page.shot(host, name) if name else None


def cycle_drawn(page, scenario_name, name):
    index = page.scenario_index(scenario_name)
    views = page.view(f'.mh-explore[data-scenario="{index}"]').find_elements(By.CSS_SELECTOR, ".mh-heap")
    check(views, f"no heap graph view in {scenario_name}")
    with_cycles = [v for v in views if v.find_elements(By.CSS_SELECTOR, "svg.mh-cycle")]
    check(with_cycles, f"no cycle drawn in {scenario_name}")

    def named(view):  # blocks the capture named by their type, in the view's first cycle
        nodes = view.find_element(By.CSS_SELECTOR, "svg.mh-cycle").find_elements(By.CSS_SELECTOR, ".node text")
        return sum(1 for node in nodes if not node.text.startswith("block of"))
    host = max(with_cycles, key=named)
    cycles = host.find_elements(By.CSS_SELECTOR, "svg.mh-cycle")
    labels = [t.text for t in cycles[0].find_elements(By.CSS_SELECTOR, "text.label")]
    check(labels and all(labels), "a reference of the cycle has no field name")
    page.driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", cycles[0])
    return page.shot(host, name)


TABLES_WIDER_THAN_THEIR_BOX = """
return Array.from(document.querySelectorAll('div.table'))
  .filter(host => host.scrollWidth > host.clientWidth)
  .map(host => (host.id ? host.id + ': ' : '') + host.scrollWidth + ' px in ' + host.clientWidth + ' px: '
    + Array.from(host.querySelectorAll('th')).map(th => th.textContent).join(' | ').slice(0, 120));"""


def tables_fit(page, width=1400):
    """At a window `width` px wide, no table of the page is wider than its box (none scrolls sideways): the check
    first sees one that is (a table whose cell cannot wrap, added to the page for it and removed), then finds none
    among the page's tables, measured after the page's resize handler has run."""
    driver = page.driver
    size = driver.get_window_size()
    driver.set_window_size(width, size["height"])
    try:
        wait_for(driver, lambda d: d.execute_script("return window.innerWidth") == width, f"a {width} px window")
        driver.execute_async_script(  # two frames: the page's resize handler runs in the first
            "const done = arguments[0]; requestAnimationFrame(() => requestAnimationFrame(() => done()));")
        driver.execute_script(
            "const probe = document.createElement('div'); probe.className = 'table'; probe.id = 'mh-probe';"
            "probe.innerHTML = '<table><tr><td style=\"white-space: nowrap\">' + 'x'.repeat(2000) + '</td></tr>"
            "</table>'; document.querySelector('main').appendChild(probe);")
        seen = driver.execute_script(TABLES_WIDER_THAN_THEIR_BOX)
        driver.execute_script("document.getElementById('mh-probe').remove();")
        check(any(line.startswith("mh-probe: ") for line in seen), f"the check does not see a wide table: {seen}")
        wide = driver.execute_script(TABLES_WIDER_THAN_THEIR_BOX)
        check(not wide, f"tables wider than their box at {width} px: {wide}")
        return f"{len(driver.find_elements(By.CSS_SELECTOR, 'div.table'))} tables fit a {width} px window"
    finally:
        driver.set_window_size(size["width"], size["height"])


def dark_scheme(arguments, workspace, html):
    """The page in a browser that prefers dark: dark background, the timeline drawn, no console error."""
    browser = Browser(workspace, dark=True)
    try:
        browser.connect()
        page = Page(browser, html, arguments.screenshots)
        background = page.driver.execute_script("return getComputedStyle(document.body).backgroundColor")
        check(background == "rgb(13, 17, 23)", f"the page is not dark when the reader prefers dark: {background}")
        index = page.scenario_index("live-query")
        shot = page.shot(page.element(f'.mh-timeline[data-scenario="{index}"]'), "dark-timeline-live-query.png")
        page.check_console()
        return shot
    finally:
        browser.close()


def run_checks(arguments, workspace, browser):
    results = []
    sample_html = render(arguments.memharness, os.path.join(arguments.sample, "run.json"),
                         os.path.join(workspace, "sample"))
    sample = Page(browser, sample_html, arguments.screenshots)
    results.append(f"sample report.html: {os.path.getsize(sample_html):,} bytes, loaded in "
                   f"{sample.load_milliseconds:.0f} ms, of which {sample.views_milliseconds:.0f} ms drawing the views")
    results.append("sample tables: " + tables_fit(sample))
    results.append("timeline zoomed: " + timeline_zoom(sample, "live-query", "burst"))
    attributed_sample = [s["name"] for s in sample.data["scenarios"] if s.get("flame")]
    if "live-query" in attributed_sample:
        results.append("flame zoomed and searched: "
                       + flame_zoom_and_search(sample, "live-query", "flame-live-query.png"))
        results.append("diff switched: " + diff_switch(sample, "live-query", "diff-live-query.png"))
    if any(s["name"] == "subscriptions" and any("mark" in c for c in (s.get("flame") or {}).get("columns", []))
           for s in sample.data["scenarios"]):
        results.append("live set over time: "
                       + over_time_moment(sample, "subscriptions", "over-time-subscriptions.png"))
    if any(s["name"] == "subscriptions" and s["heapGraphs"] for s in sample.data["scenarios"]):
        results.append("cycle drawn: " + cycle_drawn(sample, "subscriptions", "cycle-subscriptions.png"))
    sample.check_console()
    background = sample.driver.execute_script("return getComputedStyle(document.body).backgroundColor")
    check(background == "rgb(255, 255, 255)", f"the page is not light when the reader prefers light: {background}")
    results.append("dark scheme: " + dark_scheme(arguments, workspace, sample_html))

    folder = os.path.join(workspace, "attributed")
    attributed_html = (render(arguments.memharness, os.path.join(arguments.attributed, "run.json"), folder)
                       if arguments.attributed else attributed_run(arguments.memharness, folder))
    attributed = Page(browser, attributed_html, arguments.screenshots)
    results.append("attributed tables: " + tables_fit(attributed))
    results.append("flame zoomed and searched: "
                   + flame_zoom_and_search(attributed, "subscriptions", "quick-subscriptions-flame.png"))
    results.append("diff switched: " + diff_switch(attributed, "subscriptions", "quick-subscriptions-diff.png"))
    over_time_moment(attributed, "subscriptions")
    results.append("live set over time: moved to the first iteration mark")
    results.append("cycle drawn: " + cycle_drawn(attributed, "subscriptions", "quick-subscriptions-cycle.png"))
    attributed.check_console()

    comparison_html = os.path.join(workspace, "since.html")
    subprocess.run([arguments.memharness, "compare", folder, "--against", os.path.join(workspace, "sample"),
                    "--html", comparison_html], check=True, stdout=subprocess.DEVNULL, timeout=300)
    comparison = Page(browser, comparison_html, arguments.screenshots)
    results.append("diff between runs: " + runs_diff(comparison, "subscriptions", "compare-runs-subscriptions.png"))
    comparison.check_console()

    long_json = upsampled(os.path.join(arguments.sample, "run.json"), "live-query", 12000,
                          os.path.join(workspace, "long.json"))
    long_html = render(arguments.memharness, long_json, os.path.join(workspace, "long"))
    long_page = Page(browser, long_html, arguments.screenshots)
    results.append(f"long timeline: {os.path.getsize(long_html):,} bytes, loaded in {long_page.load_milliseconds:.0f}"
                   f" ms; " + long_timeline(long_page, "live-query"))
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memharness", required=True, help="the memharness executable under test")
    parser.add_argument("--sample", required=True, help="a report folder whose run.json is re-rendered")
    parser.add_argument("--attributed", help="a report folder with stacks and heap graphs to re-render instead of "
                        "running subscriptions --quick --attribute --heap-graph")
    parser.add_argument("--screenshots", help="where screenshots are kept (default: none kept when the test passes)")
    arguments = parser.parse_args()
    workspace = tempfile.mkdtemp(prefix="memharness-browser-")
    keep_screenshots = bool(arguments.screenshots)
    if not keep_screenshots:
        arguments.screenshots = os.path.join(workspace, "screenshots")
    os.makedirs(arguments.screenshots, exist_ok=True)
    browser = None
    status = 1
    try:
        browser = Browser(workspace)
        browser.connect()
        for line in run_checks(arguments, workspace, browser):
            print("ok:", line)
        status = 0
    except Failure as failure:
        print(f"FAILED: {failure}", file=sys.stderr)
    except Exception:
        traceback.print_exc()
    finally:
        if browser is not None:
            try:
                browser.close()
            except Failure as failure:
                print(f"FAILED: {failure}", file=sys.stderr)
                status = 1
        for profile in ["chromium-profile", "chromium-profile-dark"]:
            shutil.rmtree(os.path.join(workspace, profile), ignore_errors=True)
        if status == 0:
            # Passed: nothing of the test stays behind but the screenshots asked for with --screenshots.
            shutil.rmtree(workspace, ignore_errors=True)
            if keep_screenshots:
                print(f"screenshots: {arguments.screenshots}")
        else:
            print(f"kept for a look: {workspace}", file=sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(main())
