#!/usr/bin/env python3
"""The web console's figures, measured in headless Chromium against real nodes (scripts/web-console-figures.sh
starts them and passes their addresses here).

  latency  BIN FOLDER NODE URL ROUNDS   flips NODE:spare ROUNDS times with `cordis-console enable/disable`
                                        and reports, from the page, how long each fiber change took from the
                                        node's event (its timestamp) to the page's DOM: p50, p99, max (ms)
  large    URL CONSOLE_PID NODES ENTRIES the Plugins page's first render of NODES x ENTRIES entries, the Graph
                                        page's SVG, and the console's resident memory

Prints one JSON object. Each wait is for a state, with a deadline.
"""
import json
import os
import subprocess
import sys
import time

from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait


def browser():
    options = Options()
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1360,900"):
        options.add_argument(argument)
    options.binary_location = os.environ.get("CHROMIUM", "/usr/bin/chromium")
    return webdriver.Chrome(service=Service(os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver")), options=options)


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


def latency(binary, folder, node, url, rounds):
    driver = browser()
    try:
        driver.get(url.replace("/?token", "/plugins?token"))
        key = node + ":spare"
        selector = '[data-state-of="%s"]' % key
        WebDriverWait(driver, 60).until(lambda d: d.find_elements(By.CSS_SELECTOR, selector))
        console = [binary, "--node", "unix:" + os.path.join(folder, node + ".sock")]
        for round_number in range(rounds):
            enable = round_number % 2 == 0
            subprocess.run(console + ["enable" if enable else "disable", key], check=True, stdout=subprocess.DEVNULL)
            wanted = "active" if enable else "disabled"
            # Read in the page (the row is redrawn when the status comes, so no element is held on to).
            WebDriverWait(driver, 30).until(lambda d: d.execute_script(
                "const e = document.querySelector(arguments[0]); return e && e.textContent", selector) == wanted)
        samples = driver.execute_script("return window.cordisLatencies")
        return {"rounds": rounds, "samples": len(samples), "p50_ms": round(percentile(samples, 0.5), 1),
                "p99_ms": round(percentile(samples, 0.99), 1), "max_ms": round(max(samples), 1)}
    finally:
        driver.quit()


def resident_kib(pid):
    with open("/proc/%d/status" % pid) as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def large(url, console_pid, nodes, entries):
    driver = browser()
    try:
        total = nodes * entries
        rows = "return document.querySelectorAll('tr[data-entry]').length"
        # The cluster has settled (the script waited for every fiber to be active): a new page's first render.
        driver.get(url)
        WebDriverWait(driver, 60).until(lambda d: "token=" not in d.current_url)
        start = time.monotonic()
        driver.get(url.split("?")[0] + "plugins")
        WebDriverWait(driver, 600, poll_frequency=0.05).until(lambda d: d.execute_script(rows) >= total)
        plugins_s = time.monotonic() - start
        rss_after_plugins = resident_kib(console_pid)
        # The console lays the graph out with dot when the status comes (layoutSeconds); a page opened
        # then gets the SVG with the state and draws it.
        WebDriverWait(driver, 900, poll_frequency=0.1).until(
            lambda d: d.execute_script("return (model.graph && model.graph.svg || '').split('class=\"node\"').length - 1") >= total)
        layout_s = driver.execute_script("return window.cordisGraphLayoutSeconds")
        start = time.monotonic()
        driver.get(url.split("?")[0] + "graph")
        WebDriverWait(driver, 900, poll_frequency=0.05).until(
            lambda d: d.execute_script("return document.querySelectorAll('#graph svg g.node').length") >= total)
        graph_s = time.monotonic() - start
        return {"nodes": nodes, "entries_per_node": entries, "plugins_first_render_s": round(plugins_s, 2),
                "graph_dot_layout_s": round(layout_s or 0, 2), "graph_page_svg_s": round(graph_s, 2),
                "console_rss_mib": round(max(rss_after_plugins, resident_kib(console_pid)) / 1024, 1)}
    finally:
        driver.quit()


if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "latency":
        print(json.dumps(latency(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5], int(sys.argv[6]))))
    elif mode == "large":
        print(json.dumps(large(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]))))
    else:
        sys.exit("usage: web_console_figures.py latency|large …")
