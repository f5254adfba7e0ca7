#!/usr/bin/env python3
"""A web console page whose console goes away, in headless Chromium.

Arguments: the console's URL with its token, and a screenshot path. Opens the Cluster page and prints
`page live` once it is live; the test then stops the console: the page must turn grey, turn every control
off and say the stream was lost (`page stale` is printed then). The test then starts another console on
the same port, with another token: the page must say its token is no longer valid. Prints one JSON line
of findings.
"""
import sys

from chromium_page import ChromiumPage

url, screenshot = sys.argv[1], sys.argv[2]
page = ChromiumPage()
findings = {}


def enabled_controls():
    return page.driver.execute_script(
        "return [...document.querySelectorAll('main button, main input, main select, main textarea')]"
        ".filter((c) => !c.disabled).length")


def body():
    page.driver.get(url)
    page.until("the page is live", lambda: page.text("#link").startswith("live") and page.query("tr[data-member]"))
    page.driver.get(url.split("?")[0].rstrip("/") + "/plugins")
    page.until("the Plugins page is live", lambda: page.text("#link").startswith("live") and enabled_controls() > 0)
    findings["liveControls"] = enabled_controls()
    print("page live", flush=True)
    page.until("the page turns stale", lambda: page.driver.execute_script(
        "return document.body.classList.contains('stale')"), timeout=60)
    findings["staleText"] = page.text("#stale")
    findings["staleLink"] = page.text("#link")
    findings["staleControls"] = enabled_controls()
    findings["staleFilter"] = page.driver.execute_script("return getComputedStyle(document.querySelector('main')).filter")
    print("page stale", flush=True)
    page.until("the page says its token is no longer valid",
               lambda: "no longer valid" in page.text("#stale"), timeout=60)
    findings["tokenText"] = page.text("#stale")
    findings["tokenLink"] = page.text("#link")
    findings["tokenControls"] = enabled_controls()


page.run(findings, screenshot, body)
