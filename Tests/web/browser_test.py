#!/usr/bin/python3
"""The web page in headless chromium (Selenium + chromium-driver), against workoutd serving pty wearables.

Checks what a person opening the page would: a command the wearable sends shows in the live feed within a
bound, every panel follows the event stream (a workout ended on one wearable and another started on a second
show in the cards, the active list, the wearables and the workouts within a second), the charts are drawn from
stored data with their values written on them, a wearable's name shows wherever it does, the CSV link gives the
filtered workouts, a hostile location is shown as text (no element, no script), a hub on a network address
asks for the login first, and at 390 px no element is wider than the screen. Saves screenshots.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time
import urllib.error
import urllib.request

from selenium import webdriver
from selenium.common.exceptions import NoAlertPresentException, StaleElementReferenceException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

HOSTILE = "<img src=x onerror=alert(1)>"
FEED_BOUND_S = 5  # a command must show in the live feed within this long (EventSource, SSE)
LIVE_BOUND_S = 1  # a workout's start or end must show in every panel within this long of the reply
SHORT_TIME = re.compile(r"^\d{4}-\d{2}-\d{2} \d{2}:\d{2}$")
NAME = "Treadmill 3"


class Wearable:
    """The wearable's end of a socat pty pair: writes command lines, reads reply lines."""

    def __init__(self, path):
        self.fd = os.open(path, os.O_RDWR | os.O_NOCTTY)
        self.buffer = b""

    def request(self, line):
        os.write(self.fd, (line + "\n").encode())
        deadline = time.monotonic() + 30
        while b"\n" not in self.buffer:
            if time.monotonic() > deadline:
                raise AssertionError(f"no reply to {line}")
            self.buffer += os.read(self.fd, 4096)
        reply, self.buffer = self.buffer.split(b"\n", 1)
        return json.loads(reply)


def command(kind, cid, **fields):
    body = {"command_type": kind, "id": cid}
    body.update(fields)
    return json.dumps(body)


def start(cid, location, level=5):
    return command("start_workout", cid, location=location, date="2020-03-16 19:45:13 +0000", intensityLevel=level)


def browser(width, height):
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                     f"--window-size={width},{height}", "--hide-scrollbars"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(executable_path="/usr/bin/chromedriver"), options=options)


def check(condition, message):
    if not condition:
        raise AssertionError(message)
    print(f"ok - {message}")


def no_alert(driver):
    try:
        text = driver.switch_to.alert.text
    except NoAlertPresentException:
        return True
    raise AssertionError(f"an alert opened: {text!r}")


def emulate(driver, width, height, mobile):
    """A screen of exactly width × height CSS pixels (a phone's when mobile: the viewport meta tag applies)."""
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile})
    time.sleep(0.5)  # the charts redraw at the new width


def screenshots(driver, image, full_page, width, height, mobile):
    """The screen as the user sees it (image, width × height) and the whole page at that width (full_page)."""
    emulate(driver, width, height, mobile)
    driver.execute_script("window.scrollTo(0, 0)")
    driver.save_screenshot(image)
    print(f"screenshot {image} ({driver.execute_script('return window.innerWidth')}x"
          f"{driver.execute_script('return window.innerHeight')})")
    total = driver.execute_script("return Math.max(document.body.scrollHeight, document.documentElement.scrollHeight)")
    emulate(driver, width, min(max(total, height), 6000), mobile)
    driver.save_screenshot(full_page)
    print(f"screenshot {full_page}")
    emulate(driver, width, height, mobile)


# The page redraws its panels as the event stream says they changed: everything is read in one script call, so
# no element found in one call is gone by the next.
def texts(driver, selector):
    return driver.execute_script(
        "return Array.from(document.querySelectorAll(arguments[0]))"
        ".map(function (e) { return e.innerText === undefined ? e.textContent : e.innerText; })", selector)


def attributes(driver, selector, name):
    return driver.execute_script(
        "var name = arguments[1]; "
        "return Array.from(document.querySelectorAll(arguments[0])).map(function (e) { return e.getAttribute(name); })",
        selector, name)


def section_text(driver, ident):
    return driver.execute_script("return document.getElementById(arguments[0]).innerText", ident)


def summary(driver, key):
    return driver.execute_script(
        "return document.querySelector('[data-summary=\"' + arguments[0] + '\"]').innerText", key)


def device_cell(driver, node_suffix, label):
    text = driver.execute_script("""
        var rows = document.querySelectorAll("#device-rows tr");
        for (var i = 0; i < rows.length; i++) {
          if ((rows[i].dataset.device || "").endsWith(arguments[0])) {
            var td = rows[i].querySelector('td[data-label="' + arguments[1] + '"]');
            return td ? td.innerText : null;
          }
        }
        return null;""", node_suffix, label)
    if text is None:
        raise AssertionError(f"no {label!r} cell for the wearable on {node_suffix}")
    return text


def too_wide(driver):
    """Every element whose box reaches past the viewport's width (hidden ones have no box)."""
    return driver.execute_script("""
        var limit = window.innerWidth, found = [];
        document.querySelectorAll("body *").forEach(function (e) {
          var r = e.getBoundingClientRect();
          if (r.width > 0 && (r.right > limit + 0.5 || r.left < -0.5))
            found.push(e.tagName.toLowerCase() + (e.id ? "#" + e.id : "") + (e.className && e.className.baseVal === undefined ? "." + e.className : "")
                       + " " + Math.round(r.left) + ".." + Math.round(r.right));
        });
        return found;""")


def loopback_hub(args):
    wearable = Wearable(args.wearable)
    second = Wearable(args.second_wearable)
    # Stored data first: workouts for the chart and the table, one of them with a hostile location.
    locations = ["Main hall", "Pool", "Spin studio", HOSTILE, "Rowing room", "Main hall"]
    for n, location in enumerate(locations):
        reply = wearable.request(start(f"seed-{n}", location, level=1 + n % 10))
        assert reply["status"] == "ok", reply
        assert wearable.request(command("end_workout", f"seed-end-{n}"))["status"] == "ok"
    assert second.request(start("seed-second", "Cycling", level=4))["status"] == "ok"
    assert second.request(command("end_workout", "seed-second-end"))["status"] == "ok"
    stored = len(locations) + 1
    # The first wearable gets a name, as the manager would give it.
    labelled = subprocess.run([args.workoutctl, "--socket", args.socket, "label", args.serial, NAME],
                              capture_output=True, text=True, check=False)
    check(labelled.returncode == 0, f"workoutctl label names the wearable ({labelled.stdout.strip()})")

    driver = browser(1280, 900)
    try:
        driver.get(args.url + "/")
        wait = WebDriverWait(driver, 15, ignored_exceptions=[StaleElementReferenceException])
        # Before anything happens, the feed shows what the store holds.
        wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#feed-list li.earlier")) > 0)
        check(True, "on load the feed shows the latest stored events")
        wait.until(lambda d: d.find_element(By.ID, "feed-state").text == "live")
        check(True, "the live feed connected (EventSource on /api/events)")
        header = driver.find_element(By.TAG_NAME, "header").text
        check("pid" not in header, f"the header shows no pid ({header!r})")

        # The live feed: a command sent now appears within the bound.
        marker = f"feed-{int(time.time())}"
        sent = time.monotonic()
        assert wearable.request(command("share_workout", marker, service="facebook"))["status"] == "ok"
        WebDriverWait(driver, FEED_BOUND_S).until(
            lambda d: any(marker in item for item in texts(d, "#feed-list li")))
        check(True, f"a command sent by the wearable appeared in the live feed within {FEED_BOUND_S} s "
                    f"({time.monotonic() - sent:.2f} s)")
        wait.until(lambda d: "share_workout" in device_cell(d, "-A1", "Last command"))
        check(True, "the wearable's row shows its last command")
        check(NAME in device_cell(driver, "-A1", "Wearable"), "the wearables table shows the wearable's name")

        # Charts from stored data: today's bar holds every workout stored, its value written on it.
        wait.until(lambda d: d.find_element(By.ID, "chart-daily").get_attribute("data-total") == str(stored))
        counts = [int(c) for c in attributes(driver, "#chart-daily svg rect.bar", "data-count")]
        heights = [float(h) for h in attributes(driver, "#chart-daily svg rect.bar", "height")]
        check(len(counts) == 30, f"the workouts-per-day chart has 30 bars ({len(counts)})")
        check(sum(counts) == stored, f"its bars add up to the {stored} stored workouts ({sum(counts)})")
        check(counts[-1] == stored and heights[-1] > 0, "today's bar is drawn with them")
        values = texts(driver, "#chart-daily svg text.value")
        check(str(stored) in values, f"today's count is written on its bar without hovering ({values})")
        titles = texts(driver, "#chart-daily svg text.axis-title")
        check(len(titles) == 2, f"the chart's axes are labelled ({titles})")
        ticks = texts(driver, "#chart-daily svg text.tick")
        check(len(ticks) >= 5, f"the value axis has ticks between 0 and the top ({ticks})")
        check(summary(driver, "today") == str(stored) and int(summary(driver, "week")) >= stored,
              f"the cards count today's workouts and this week's ({summary(driver, 'today')}, {summary(driver, 'week')})")
        # Commands per second: a burst of workouts, then the line has points.
        for n in range(20):
            wearable.request(start(f"burst-{n}", "Circuit", level=3))
            wearable.request(command("end_workout", f"burst-end-{n}"))
        stored += 20
        wait.until(lambda d: int(d.find_element(By.ID, "chart-rate").get_attribute("data-points") or 0) >= 2)
        points = attributes(driver, "#chart-rate svg polyline.line", "points")
        check(len(points) == 1 and len(points[0].split()) >= 2, "the commands-per-second chart draws a line")
        wait.until(lambda d: summary(d, "today") == str(stored))
        check(True, "the today card followed the burst")

        # The hostile location: shown as text in the table, no element made of it, no script run.
        driver.find_element(By.ID, "filter-device").send_keys("treadm")
        driver.find_element(By.CSS_SELECTOR, "#workout-filter button[type=submit]").click()
        wait.until(lambda d: len(texts(d, "#workout-rows tr")) == stored - 1)
        cells = texts(driver, "#workout-rows td")
        check(HOSTILE in cells, "the hostile location is shown as text in the workouts table")
        check(driver.execute_script("return document.querySelectorAll('img').length") == 0, "it made no <img> element")
        check(no_alert(driver), "it ran no script (no alert)")
        wearables = set(texts(driver, '#workout-rows td[data-label="Wearable"]'))
        check(all(NAME in w for w in wearables) and "Cycling" not in cells,
              f"the filter 'treadm' matched part of the wearable's name, and only it ({wearables})")
        times = texts(driver, '#workout-rows td[data-label="Started"]')
        check(all(SHORT_TIME.match(t) for t in times), f"times are in one short format ({times[:3]})")
        durations = texts(driver, '#workout-rows td[data-label="Duration"]')
        check(all(re.match(r"^\d+ (s|min)$|^\d+ h \d\d min$", d) for d in durations),
              f"durations are said as people say them ({durations[:3]})")

        # The CSV link follows the filter and gives the same workouts, as CSV.
        link = driver.find_element(By.ID, "workouts-csv")
        href = link.get_attribute("href")
        check("/api/workouts.csv?" in href and "device=treadm" in href, f"the CSV link carries the filter ({href})")
        with urllib.request.urlopen(href, timeout=10) as response:
            content_type = response.headers.get("Content-Type", "")
            csv_text = response.read().decode("utf-8")
        csv_lines = csv_text.split("\r\n")
        check(content_type.startswith("text/csv") and csv_lines[0].startswith("id,device,device_name,location"),
              f"it is CSV with a header row ({content_type})")
        check(len(csv_lines) == stored - 1 + 2 and all(f",{NAME}," in line for line in csv_lines[1:-1]),
              f"one row per filtered workout, each with the wearable's name ({len(csv_lines) - 2} rows)")
        driver.find_element(By.ID, "filter-device").clear()
        driver.find_element(By.CSS_SELECTOR, "#workout-filter button[type=submit]").click()
        wait.until(lambda d: len(texts(d, "#workout-rows tr")) == stored)

        # Sorting.
        driver.find_element(By.CSS_SELECTOR, '#workout-table th[data-sort="location"]').click()
        names = texts(driver, '#workout-rows td[data-label="Location"]')
        check(names == sorted(names, reverse=True) or names == sorted(names), "clicking a heading sorts the table")
        driver.find_element(By.CSS_SELECTOR, '#workout-table th[data-sort="id"]').click()

        # Live panels: a workout running on the first wearable, then, with the page open, it ends and another
        # starts on the second. Every panel follows within the bound, and the cards agree with the lists.
        assert wearable.request(start("active", "Track", level=7))["status"] == "ok"
        wait.until(lambda d: "Track" in section_text(d, "active"))
        check(re.search(r"running \d+ (s|min)", section_text(driver, "active")) is not None,
              f"the active workout says how long it has been running ({section_text(driver, 'active')!r})")
        check(NAME in section_text(driver, "active"), "the active list names the wearable")
        assert wearable.request(command("end_workout", "active-end"))["status"] == "ok"
        assert second.request(start("second-active", "Spin", level=6))["status"] == "ok"
        replied = time.monotonic()

        def live(d):
            active = section_text(d, "active")
            rows = texts(d, "#workout-rows tr")
            return ("Spin" in active and "Track" not in active
                    and "Spin" in device_cell(d, "-A2", "Active workout")
                    and device_cell(d, "-A1", "Active workout") == "—"
                    and "Spin" in rows[0] and "running" in rows[0]
                    and not any("Track" in r and "running" in r for r in rows))
        WebDriverWait(driver, LIVE_BOUND_S + 1).until(live)
        elapsed = time.monotonic() - replied
        check(elapsed <= LIVE_BOUND_S, f"the end and the start showed in every panel {elapsed:.2f} s after the replies")
        listed = len(texts(driver, "#active-list li:not(.empty)"))
        check(summary(driver, "active") == str(listed) == "1",
              f"the active card agrees with the list under it ({summary(driver, 'active')} and {listed})")
        check(summary(driver, "today") == str(stored + 2), f"the today card counts both ({summary(driver, 'today')})")

        for n in range(16):  # some seconds of uneven traffic for the feed and the rate chart
            for k in range(1 + (n * 7) % 9):
                wearable.request(command("share_workout", f"shot-{n}-{k}", service="instagram"))
            time.sleep(1)
        wait.until(lambda d: int(d.find_element(By.ID, "chart-rate").get_attribute("data-points") or 0) >= 2)
        emulate(driver, 1280, 900, False)
        check(not too_wide(driver), f"nothing is wider than the 1280 px window ({too_wide(driver)[:5]})")
        screenshots(driver, os.path.join(args.images, "web-page.png"), os.path.join(args.screenshots, "desktop.png"),
                    1280, 900, False)

        # A phone: 390 × 844; nothing may be wider than the screen.
        emulate(driver, 390, 844, True)
        driver.get(args.url + "/")
        WebDriverWait(driver, 15).until(lambda d: d.find_element(By.ID, "chart-daily").get_attribute("data-total") is not None)
        wait.until(lambda d: d.find_element(By.ID, "feed-state").text == "live")
        wearable.request(command("share_workout", "phone", service="twitter"))
        time.sleep(2.5)
        width = driver.execute_script("return window.innerWidth")
        check(width == 390, f"the window is 390 px wide ({width})")
        overflow = driver.execute_script("return document.documentElement.scrollWidth - window.innerWidth")
        check(overflow <= 0, f"the page fits a 390 px wide phone (horizontal overflow {overflow} px)")
        wide = too_wide(driver)
        check(not wide, f"no element is wider than 390 px ({wide[:8]})")
        check(driver.find_element(By.ID, "chart-daily").get_attribute("data-days") == "14",
              "the daily chart shows two weeks on a phone")
        screenshots(driver, os.path.join(args.images, "web-page-phone.png"), os.path.join(args.screenshots, "phone.png"),
                    390, 844, True)
        check(not [e for e in driver.get_log("browser") if "Content Security Policy" in e.get("message", "")],
              "no Content-Security-Policy violation was reported")
    finally:
        driver.quit()


def network_hub(args):
    Wearable(args.network_wearable).request(start(1, "Hall B"))
    try:
        urllib.request.urlopen(args.network_url + "/api/status", timeout=10)
        raise AssertionError("the API answered without a login on a network address")
    except urllib.error.HTTPError as error:
        check(error.code == 401, f"on {args.network_url} the API refuses a request without a login ({error.code})")
    driver = browser(1280, 900)
    try:
        driver.get(args.network_url + "/")
        WebDriverWait(driver, 15).until(lambda d: d.find_elements(By.ID, "token"))
        check(driver.current_url.endswith("/login"), "the page sends the browser to the login form")
        check("Hall B" not in driver.page_source, "and shows nothing of the hub before the login")
        driver.save_screenshot(os.path.join(args.screenshots, "login.png"))
        driver.find_element(By.ID, "token").send_keys("wrong-token")
        driver.find_element(By.ID, "login").click()
        WebDriverWait(driver, 15).until(lambda d: d.find_elements(By.ID, "login-problem"))
        check("Wrong token" in driver.find_element(By.ID, "login-problem").text, "a wrong token is refused")
        driver.find_element(By.ID, "token").send_keys(args.token)
        driver.find_element(By.ID, "login").click()
        WebDriverWait(driver, 15).until(lambda d: d.find_elements(By.ID, "summary"))
        check("Hall B" in driver.find_element(By.ID, "active").text, "the right token opens the page")
        cookie = driver.get_cookie("workoutd_session")
        check(cookie is not None and cookie.get("httpOnly") and cookie.get("sameSite") == "Strict",
              "the session cookie is HttpOnly and SameSite=Strict")
        WebDriverWait(driver, 15).until(lambda d: d.find_element(By.ID, "feed-state").text == "live")
        check(True, "the logged-in page's live feed connects")
        driver.find_element(By.ID, "logout").click()
        WebDriverWait(driver, 15).until(lambda d: d.find_elements(By.ID, "token"))
        check(driver.current_url.endswith("/login"), "logging out leads back to the login form")
    finally:
        driver.quit()


def main():
    parser = argparse.ArgumentParser()
    for name in ("--url", "--wearable", "--second-wearable", "--workoutctl", "--socket", "--serial", "--network-url",
                 "--network-wearable", "--token", "--screenshots", "--images"):
        parser.add_argument(name, required=True)
    args = parser.parse_args()
    os.makedirs(args.screenshots, exist_ok=True)
    os.makedirs(args.images, exist_ok=True)
    loopback_hub(args)
    network_hub(args)
    print("all browser checks passed")


if __name__ == "__main__":
    try:
        main()
    except AssertionError as error:
        print(f"FAILED: {error}", file=sys.stderr)
        sys.exit(1)
