"""The headless Chromium the web console's browser tests drive (Debian's chromium and chromium-driver,
through Selenium), with the page reads and waits they share.

Every read runs in the page (`document.querySelector`), so no element is held on to while rows are
redrawn; every wait is for a state, with a deadline, and remembers what it waited for (`step`) so a
failure can say where it stopped.
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


class ChromiumPage:
    def __init__(self, extra_arguments=()):
        options = Options()
        for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                         "--window-size=1360,900") + tuple(extra_arguments):
            options.add_argument(argument)
        options.binary_location = os.environ.get("CHROMIUM", "/usr/bin/chromium")
        self.driver = webdriver.Chrome(
            service=Service(os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver")), options=options)
        self.step = "start"

    def until(self, what, condition, timeout=20):
        self.step = what
        try:
            return WebDriverWait(self.driver, timeout).until(lambda _: condition())
        except TimeoutException:
            raise AssertionError("timed out waiting until " + what)

    def query(self, selector):
        found = self.driver.find_elements(By.CSS_SELECTOR, selector)
        return found[0] if found else None

    def text(self, selector):
        return self.driver.execute_script(
            "const e = document.querySelector(arguments[0]); return e ? (e.innerText ?? e.textContent) : ''",
            selector) or ""

    def attribute(self, selector, name):
        return self.driver.execute_script(
            "const e = document.querySelector(arguments[0]); return e ? e.getAttribute(arguments[1]) : null",
            selector, name)

    def run(self, findings, screenshot, body):
        """Runs `body`, then prints one JSON line: the findings, or where and why it failed (with a
        screenshot at `screenshot` and the page's text), exiting 1 then. The browser quits either way."""
        try:
            body()
            print(json.dumps({"ok": True, "findings": findings}), flush=True)
        except Exception as error:  # the step and the page's text say what went wrong
            self.driver.save_screenshot(screenshot)
            print(json.dumps({"ok": False, "step": self.step, "error": str(error), "findings": findings,
                              "page": self.driver.find_element(By.TAG_NAME, "body").text[:4000]}), flush=True)
            traceback.print_exc()
            sys.exit(1)
        finally:
            self.driver.quit()
