#!/usr/bin/env python3
"""Opens an entry's Config editor in `cordis-console web` in a real browser (Debian's chromium and
chromium-driver, through Selenium) and saves it unchanged.

Run by WebConsoleConfigEditorTests with: the console's URL (with its token), a folder for a screenshot on
failure, and the entry as NODE:ENTRY. It opens the Plugins page, waits for the entry's row, opens its Config
editor, reads what the textarea holds, presses Save without touching it and waits for the page to say the
config was saved (or for the node's error). Every wait is for a state, with a deadline; it prints one JSON
line of findings at the end (the Swift test checks them) and exits non-zero on the first failure.
"""
import os
import sys

from selenium.webdriver.common.by import By

from chromium_page import ChromiumPage


def main():
    url, shots, key = sys.argv[1], sys.argv[2], sys.argv[3]
    browser = ChromiumPage()
    driver, until, query, text = browser.driver, browser.until, browser.query, browser.text
    findings = {}

    def check():
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

    browser.run(findings, os.path.join(shots, "failure-config.png"), check)


if __name__ == "__main__":
    main()
