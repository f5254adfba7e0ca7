#!/usr/bin/env python3
"""Opens an entry's Config editor in `cordis-console web` in a real browser (Debian's chromium and
chromium-driver, through Selenium) and saves it unchanged.

Run by WebConsoleConfigEditorTests with: the console's URL (with its token), a folder for a screenshot on
failure, and the entry as NODE:ENTRY. It opens the Plugins page, waits for the entry's row, opens its Config
editor, reads what the textarea holds, presses Save without touching it and waits for the page to say the
config was saved (or for the node's error). Every wait is for a state, with a deadline; it prints one JSON
line of findings at the end (the Swift test checks them) and exits non-zero on the first failure.
"""
import json
import os
import sys
import traceback

from selenium import webdriver
from selenium.common.exceptions import TimeoutException
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait


def main():
    url, shots, key = sys.argv[1], sys.argv[2], sys.argv[3]
    options = Options()
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--window-size=1360,900"):
        options.add_argument(argument)
    options.binary_location = os.environ.get("CHROMIUM", "/usr/bin/chromium")
    driver = webdriver.Chrome(service=Service(os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver")), options=options)
    findings = {}
    step = "start"

    def until(what, condition, timeout=20):
        nonlocal step
        step = what
        try:
            return WebDriverWait(driver, timeout).until(lambda _: condition())
        except TimeoutException:
            raise AssertionError("timed out waiting until " + what)

    def query(selector):
        found = driver.find_elements(By.CSS_SELECTOR, selector)
        return found[0] if found else None

    def text(selector):
        return driver.execute_script(
            "const e = document.querySelector(arguments[0]); return e ? (e.innerText ?? e.textContent) : ''", selector) or ""

    try:
        driver.get(url)
        until("the token is out of the address bar", lambda: "token=" not in driver.current_url)
        driver.find_element(By.CSS_SELECTOR, 'nav a[data-page="plugins"]').click()
        until("the plugins page shows", lambda: query("#page-plugins").is_displayed())
        until(key + " shows active", lambda: text('[data-state-of="%s"]' % key) == "active")
        query('button[data-edit="%s"]' % key).click()
        until("the config editor of " + key + " opens", lambda: query('textarea[data-config="%s"]' % key) is not None)
        findings["editorText"] = driver.execute_script(
            "return document.querySelector(arguments[0]).value", 'textarea[data-config="%s"]' % key)
        query('button[data-save="%s"]' % key).click()
        until("the save is answered", lambda: query('textarea[data-config="%s"]' % key) is None
              or text('[data-config-error="%s"]' % key) != "")
        findings["saveError"] = text('[data-config-error="%s"]' % key)
        findings["notice"] = text("#notice")
        print(json.dumps({"ok": True, "findings": findings}), flush=True)
    except Exception as error:  # the step and the page's text say what went wrong
        driver.save_screenshot(os.path.join(shots, "failure-config.png"))
        print(json.dumps({"ok": False, "step": step, "error": str(error), "findings": findings,
                          "page": driver.find_element(By.TAG_NAME, "body").text[:4000]}), flush=True)
        traceback.print_exc()
        sys.exit(1)
    finally:
        driver.quit()


if __name__ == "__main__":
    main()
