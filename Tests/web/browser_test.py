#!/usr/bin/python3
"""The web page in headless chromium (Selenium + chromium-driver), against workoutd serving pty wearables.

Checks what a person opening the page would: a command the wearable sends shows in the live feed within a
bound, the charts are drawn from stored data, a hostile location is shown as text (no element, no script),
a hub on a network address asks for the login first, and the page fits a phone. Saves screenshots.
"""
import argparse
import json
import os
import sys
import time
import urllib.error
import urllib.request

from selenium import webdriver
from selenium.common.exceptions import NoAlertPresentException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

HOSTILE = "<img src=x onerror=alert(1)>"
FEED_BOUND_S = 5  # a command must show in the live feed within this long (EventSource, SSE)


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


def full_page_screenshot(driver, path, width):
    height = driver.execute_script("return Math.max(document.body.scrollHeight, document.documentElement.scrollHeight)")
    driver.set_window_size(width, min(max(height + 40, 600), 6000))
    driver.execute_script("window.scrollTo(0, 0)")
    time.sleep(0.3)
    driver.save_screenshot(path)
    print(f"screenshot {path}")


def loopback_hub(args):
    wearable = Wearable(args.wearable)
    # Stored data first: workouts for the chart and the table, one of them with a hostile location.
    locations = ["Main hall", "Pool", "Spin studio", HOSTILE, "Rowing room", "Main hall"]
    for n, location in enumerate(locations):
        reply = wearable.request(start(f"seed-{n}", location, level=1 + n % 10))
        assert reply["status"] == "ok", reply
        assert wearable.request(command("end_workout", f"seed-end-{n}"))["status"] == "ok"
    stored = len(locations)

    driver = browser(1280, 900)
    try:
        driver.get(args.url + "/")
        wait = WebDriverWait(driver, 15)
        wait.until(lambda d: d.find_element(By.ID, "feed-state").text == "live")
        check(True, "the live feed connected (EventSource on /api/events)")

        # The live feed: a command sent now appears within the bound.
        marker = f"feed-{int(time.time())}"
        sent = time.monotonic()
        assert wearable.request(command("share_workout", marker, service="facebook"))["status"] == "ok"
        WebDriverWait(driver, FEED_BOUND_S).until(
            lambda d: any(marker in item.text for item in d.find_elements(By.CSS_SELECTOR, "#feed-list li")))
        check(True, f"a command sent by the wearable appeared in the live feed within {FEED_BOUND_S} s "
                    f"({time.monotonic() - sent:.2f} s)")
        wait.until(lambda d: "share_workout" in d.find_element(By.CSS_SELECTOR, "#device-rows tr .last-command").text)
        check(True, "the wearable's row shows its last command")

        # Charts from stored data: today's bar holds every workout stored.
        wait.until(lambda d: d.find_element(By.ID, "chart-daily").get_attribute("data-total") is not None)
        bars = driver.find_elements(By.CSS_SELECTOR, "#chart-daily svg rect.bar")
        check(len(bars) == 30, f"the workouts-per-day chart has 30 bars ({len(bars)})")
        total = sum(int(bar.get_attribute("data-count")) for bar in bars)
        check(total == stored, f"its bars add up to the {stored} stored workouts ({total})")
        check(int(bars[-1].get_attribute("data-count")) == stored and float(bars[-1].get_attribute("height")) > 0,
              "today's bar is drawn with them")
        # Commands per second: a burst of workouts, then the line has points.
        for n in range(20):
            wearable.request(start(f"burst-{n}", "Circuit", level=3))
            wearable.request(command("end_workout", f"burst-end-{n}"))
        stored += 20
        wait.until(lambda d: int(d.find_element(By.ID, "chart-rate").get_attribute("data-points") or 0) >= 2)
        polyline = driver.find_elements(By.CSS_SELECTOR, "#chart-rate svg polyline.line")
        check(len(polyline) == 1 and len(polyline[0].get_attribute("points").split()) >= 2,
              "the commands-per-second chart draws a line")

        # The hostile location: shown as text in the table, no element made of it, no script run.
        wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#workout-rows tr")) >= 6)
        cells = [cell.text for cell in driver.find_elements(By.CSS_SELECTOR, "#workout-rows td")]
        check(HOSTILE in cells, "the hostile location is shown as text in the workouts table")
        check(driver.execute_script("return document.querySelectorAll('img').length") == 0, "it made no <img> element")
        check(no_alert(driver), "it ran no script (no alert)")

        # Sorting and filtering.
        driver.find_element(By.CSS_SELECTOR, '#workout-table th[data-sort="location"]').click()
        names = [r.find_elements(By.TAG_NAME, "td")[2].text for r in driver.find_elements(By.CSS_SELECTOR, "#workout-rows tr")]
        check(names == sorted(names, reverse=True) or names == sorted(names), "clicking a heading sorts the table")

        # A workout in progress, then the page as someone opening it now sees it.
        assert wearable.request(start("active", "Track", level=7))["status"] == "ok"
        driver.get(args.url + "/")
        check("Track" in driver.find_element(By.ID, "active").text, "the server-rendered status shows the active workout")
        wait.until(lambda d: d.find_element(By.ID, "chart-daily").get_attribute("data-total") == str(stored + 1))
        for n in range(16):  # some seconds of uneven traffic for the feed and the rate chart
            for k in range(1 + (n * 7) % 9):
                wearable.request(command("share_workout", f"shot-{n}-{k}", service="instagram"))
            time.sleep(1)
        wait.until(lambda d: int(d.find_element(By.ID, "chart-rate").get_attribute("data-points") or 0) >= 2)
        full_page_screenshot(driver, os.path.join(args.screenshots, "desktop.png"), 1280)
        driver.set_window_size(390, 844)
        driver.get(args.url + "/")
        WebDriverWait(driver, 15).until(lambda d: d.find_element(By.ID, "chart-daily").get_attribute("data-total") is not None)
        wait.until(lambda d: d.find_element(By.ID, "feed-state").text == "live")
        wearable.request(command("share_workout", "phone", service="twitter"))
        time.sleep(2.5)
        overflow = driver.execute_script("return document.documentElement.scrollWidth - window.innerWidth")
        check(overflow <= 1, f"the page fits a 390 px wide phone (horizontal overflow {overflow} px)")
        full_page_screenshot(driver, os.path.join(args.screenshots, "phone.png"), 390)
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
    finally:
        driver.quit()


def main():
    parser = argparse.ArgumentParser()
    for name in ("--url", "--wearable", "--network-url", "--network-wearable", "--token", "--screenshots"):
        parser.add_argument(name, required=True)
    args = parser.parse_args()
    os.makedirs(args.screenshots, exist_ok=True)
    loopback_hub(args)
    network_hub(args)
    print("all browser checks passed")


if __name__ == "__main__":
    try:
        main()
    except AssertionError as error:
        print(f"FAILED: {error}", file=sys.stderr)
        sys.exit(1)
