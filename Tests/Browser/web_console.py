#!/usr/bin/env python3
"""Drives `cordis-console web` in a real browser (Debian's chromium and chromium-driver, through Selenium).

Run by WebConsoleBrowserTests with: the console's URL (with its token), a folder for the screenshots, the
pid of the node to kill (node c, which the test started) and the node whose link the console holds (a).
It opens every page, flips an enable switch and waits for the entry's new state, submits an invalid config
and waits for the node's error beside the field, calls a service method, kills node c and waits for it to
turn unreachable, and saves a screenshot of each page. Every wait is for a state, with a deadline; it prints
one JSON line of findings at the end (the Swift test checks them) and exits non-zero on the first failure.
"""
import os
import signal
import sys

from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.common.by import By

from chromium_page import ChromiumPage


def main():
    url, shots, kill_pid = sys.argv[1], sys.argv[2], int(sys.argv[3])
    browser = ChromiumPage(("--hide-scrollbars", "--force-device-scale-factor=1"))
    driver, until, query, text, attribute = (
        browser.driver, browser.until, browser.query, browser.text, browser.attribute)
    findings = {}

    def rows(selector):
        """The cells' text of each row, read in the page at once (rows are redrawn as events come)."""
        return driver.execute_script(
            "return [...document.querySelectorAll(arguments[0])].map((row) => [...row.cells].map((cell) => cell.innerText))",
            selector)

    def page(name):
        driver.find_element(By.CSS_SELECTOR, 'nav a[data-page="%s"]' % name).click()
        until("the %s page shows" % name, lambda: query("#page-%s" % name).is_displayed())

    def shot(name):
        driver.save_screenshot(os.path.join(shots, "web-%s.png" % name))

    def check():
        driver.get(url)
        # The token URL redirects to the page without the token, and the cookie keeps it.
        until("the token is out of the address bar", lambda: "token=" not in driver.current_url)
        cookie = driver.get_cookie("cordis_console")
        findings["cookie"] = {"httpOnly": cookie and cookie.get("httpOnly"), "sameSite": cookie and cookie.get("sameSite")}

        until("three members are up", lambda: driver.execute_script(
            "return document.querySelectorAll('#members tr[data-health=\"up\"]').length") == 3)
        findings["incarnation"] = text('#members tr[data-member="a"] td:nth-child(3)')
        findings["incarnationTitle"] = attribute('#members tr[data-member="a"] td:nth-child(3)', "title")
        shot("cluster")

        page("plugins")
        until("a:spare shows disabled", lambda: text('[data-state-of="a:spare"]') == "disabled")
        driver.execute_script("arguments[0].click()", query('input[data-switch="a:spare"]'))
        until("a:spare turns active after its switch is flipped", lambda: text('[data-state-of="a:spare"]') == "active")
        findings["enabled"] = text('[data-state-of="a:spare"]')

        query('button[data-edit="a:counter"]').click()
        until("the config editor of a:counter opens", lambda: query('textarea[data-config="a:counter"]') is not None)
        editor = query('textarea[data-config="a:counter"]')
        editor.clear()
        editor.send_keys('{"start": "ten"}')
        query('button[data-save="a:counter"]').click()
        until("the node's error shows beside the config", lambda: text('[data-config-error="a:counter"]') != "")
        findings["configError"] = text('[data-config-error="a:counter"]')
        findings["fieldMarked"] = text('tr[data-editor="a:counter"] .fields .bad')
        shot("plugins")

        page("graph")
        until("the graph's SVG is drawn", lambda: query("#graph svg") is not None and "greeter" in text("#graph"))
        findings["graphHasBinding"] = "clock" in text("#graph svg")
        shot("graph")

        page("services")
        until("counter is offered for a call", lambda: query('#call-service option[value="counter"]') is not None)
        driver.execute_script("arguments[0].value = 'counter'; arguments[0].dispatchEvent(new Event('change'))", query("#call-service"))
        until("counter's interface is listed", lambda: query('#interfaces tr[data-interface="counter"]') is not None)
        findings["counterMethods"] = text('#interfaces tr[data-interface="counter"]')
        findings["methodChoices"] = driver.execute_script(
            "return [...document.querySelectorAll('#call-methods option')].map((option) => option.value).join(',')")
        query("#call-method").send_keys("add")
        args = query("#call-args")
        args.clear()
        args.send_keys("[5]")
        query("#call-submit").click()
        until("the call's result shows", lambda: query("#call-result").is_displayed())
        findings["callResult"] = text("#call-result")
        shot("services")

        page("timeline")
        until("the switch's change shows with its operator",
              lambda: any("enable entry spare" in " ".join(row) for row in rows("#timeline tbody tr")))
        select = query("#filter-node")
        driver.execute_script("arguments[0].value = 'b'; arguments[0].dispatchEvent(new Event('change'))", select)
        until("the node filter keeps only b's events",
              lambda: all(row[1] == "b" for row in rows("#timeline tbody tr")))
        driver.execute_script("arguments[0].value = ''; arguments[0].dispatchEvent(new Event('change'))", select)
        entry = query("#filter-entry")
        entry.send_keys("spare")
        until("the entry filter keeps only spare's events",
              lambda: len(rows("#timeline tbody tr")) > 0 and all("spare" in " ".join(row) for row in rows("#timeline tbody tr")))
        entry.clear()
        driver.execute_script("arguments[0].dispatchEvent(new Event('input'))", entry)
        until("every event shows again", lambda: len(rows("#timeline tbody tr")) > 3)
        findings["operator"] = next((row[4] for row in rows("#timeline tbody tr") if "enable entry spare" in " ".join(row)), "")
        shot("timeline")

        os.kill(kill_pid, signal.SIGKILL)
        page("cluster")
        until("c turns unreachable", lambda: attribute('#members tr[data-member="c"]', "data-health") not in ("up", None), timeout=30)
        findings["killedHealth"] = attribute('#members tr[data-member="c"]', "data-health")
        shot("cluster-unreachable")
        page("plugins")
        until("c's entries show as last known", lambda: "last known" in text('[data-node="c"]'))
        page("graph")
        until("c's fibers are drawn as last known", lambda: "last known" in text("#graph svg"))
        shot("graph-unreachable")
        page("cluster")
        until("c can be forgotten", lambda: query('button[data-forget="c"]') is not None)
        forget = query('button[data-forget="c"]')
        # The "last seen" count ticks every second: the row, and the button a user is pressing, stay.
        seen = text('#members tr[data-member="c"] td:nth-child(2) .muted')
        until("c's last seen count ticks", lambda: text('#members tr[data-member="c"] td:nth-child(2) .muted') not in ("", seen), timeout=5)
        try:
            findings["forgetKept"] = driver.execute_script("return arguments[0].isConnected", forget)
        except StaleElementReferenceException:
            raise AssertionError("the Forget button was replaced when the last seen count ticked")
        forget.click()
        until("c shows as left", lambda: attribute('#members tr[data-member="c"]', "data-health") == "left", timeout=30)
        findings["forgottenHealth"] = attribute('#members tr[data-member="c"]', "data-health")
        findings["latenciesMs"] = driver.execute_script("return window.cordisLatencies")
    browser.run(findings, os.path.join(shots, "failure.png"), check)


if __name__ == "__main__":
    main()
