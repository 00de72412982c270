#!/usr/bin/python3
"""The fleet page (`workoutd fleet`) in headless chromium, against a central PostgreSQL a real hub replicates into.

Checks what a person opening it would: the hub is listed online with its version, a workout the hub's wearable
started shows among the workouts, the filter by hub narrows them and the CSV link follows the filter, a hostile
location is shown as text, and at 1280 px and at a 390 px phone no element is wider than the screen. Saves
screenshots.
"""
import argparse
import os
import sys
import time
import urllib.request

from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from browser_test import HOSTILE, Wearable, browser, check, emulate, no_alert, screenshots, start, too_wide  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    for name in ("--url", "--wearable", "--hub", "--screenshots"):
        parser.add_argument(name, required=True)
    args = parser.parse_args()
    reply = Wearable(args.wearable).request(start("fleet-1", HOSTILE))
    check(reply.get("status") == "ok", f"the hub's wearable started a workout ({reply})")
    # The hub ships it within a second or two; the fleet page reads what arrived.
    deadline = time.monotonic() + 30
    while True:
        with urllib.request.urlopen(args.url + "/api/workouts?hub=" + args.hub) as answer:
            if b"fleet" in answer.read() or time.monotonic() > deadline:
                break
        time.sleep(0.2)
    driver = browser(1280, 900)
    try:
        driver.get(args.url + "/")
        row = driver.find_element(By.CSS_SELECTOR, f'tr[data-hub="{args.hub}"]')
        check(row.find_element(By.CSS_SELECTOR, "td.state").text == "online", "the replicating hub is listed online")
        check(driver.find_element(By.CSS_SELECTOR, '[data-summary="hubs"]').text == "1", "the totals count one hub")
        locations = [cell.text for cell in driver.find_elements(By.CSS_SELECTOR, '#workout-rows td[data-label="Location"]')]
        check(HOSTILE in locations, "the workout's hostile location shows as text")
        check(not driver.find_elements(By.CSS_SELECTOR, "#workout-rows img"), "no element came from a location")
        no_alert(driver)
        emulate(driver, 1280, 900, False)
        check(not too_wide(driver), f"nothing is wider than the 1280 px window ({too_wide(driver)[:5]})")
        screenshots(driver, os.path.join(args.screenshots, "fleet-page.png"),
                    os.path.join(args.screenshots, "fleet-page-full.png"), 1280, 900, False)

        select = driver.find_element(By.ID, "filter-hub")
        select.find_element(By.CSS_SELECTOR, f'option[value="{args.hub}"]').click()
        driver.find_element(By.CSS_SELECTOR, "#workout-filter button[type=submit]").click()
        WebDriverWait(driver, 15).until(lambda d: "hub=" in d.current_url)
        csv = driver.find_element(By.ID, "workouts-csv").get_attribute("href")
        check(f"hub={args.hub}" in csv, f"the CSV link follows the filter ({csv})")
        with urllib.request.urlopen(csv) as answer:
            body = answer.read().decode()
        check(body.startswith("hub_id,workout_id,") and args.hub in body, "the CSV holds the hub's workouts")

        emulate(driver, 390, 844, True)
        width = driver.execute_script("return window.innerWidth")
        check(width == 390, f"the window is 390 px wide ({width})")
        overflow = driver.execute_script("return document.documentElement.scrollWidth - window.innerWidth")
        check(overflow <= 0, f"the fleet page fits a 390 px wide phone (horizontal overflow {overflow} px)")
        wide = too_wide(driver)
        check(not wide, f"no element is wider than 390 px ({wide[:8]})")
        screenshots(driver, os.path.join(args.screenshots, "fleet-page-phone.png"),
                    os.path.join(args.screenshots, "fleet-page-phone-full.png"), 390, 844, True)
    finally:
        driver.quit()
    print("all fleet page checks passed")


if __name__ == "__main__":
    try:
        main()
    except AssertionError as error:
        print(f"FAILED: {error}", file=sys.stderr)
        sys.exit(1)
