#!/usr/bin/env python3
"""Opens a rocegate report.html in headless Chromium (driven by Selenium
over chromedriver) and prints one JSON object: console errors, which
sections exist, whether the hostile-input canary fired, how long the page
took to load and run its script, and what the interactive parts did
(filtering, sorting, the canvas heatmap). Used by tests/browser.rs and the
scale benchmark; it asserts nothing itself.

usage: check_report.py REPORT_HTML SCREENSHOT_PNG
"""
import base64
import json
import sys
import time

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By

SECTIONS = ["gate", "reason", "suspects", "heatmaps", "distribution", "curves",
            "faults", "counters", "audit", "baseline", "preflight", "plan", "results"]


def main():
    report, shot = sys.argv[1], sys.argv[2]
    opts = webdriver.ChromeOptions()
    for a in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
              "--window-size=1400,1000", "--disable-extensions", "--no-first-run"]:
        opts.add_argument(a)
    opts.binary_location = "/usr/bin/chromium"
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=opts)
    out = {}
    try:
        # The page must not reach the network: any request is an error.
        driver.execute_cdp_cmd("Network.enable", {})
        t0 = time.monotonic()
        driver.get("file://" + report)
        for _ in range(600):
            if driver.execute_script("return document.documentElement.getAttribute('data-ready')") == "1":
                break
            time.sleep(0.05)
        out["ready"] = driver.execute_script("return document.documentElement.getAttribute('data-ready')") == "1"
        out["load_s"] = round(time.monotonic() - t0, 3)
        out["timing_ms"] = driver.execute_script(
            "var t=performance.getEntriesByType('navigation')[0];"
            "return t ? {dom: t.domContentLoadedEventEnd, load: t.loadEventEnd} : null")
        out["sections"] = {s: bool(driver.find_elements(By.ID, s)) for s in SECTIONS}
        # What a person sees first, then each view, before anything is clicked.
        out["screenshots"] = []
        for name in ["top"] + SECTIONS[2:]:
            if name != "top":
                if not driver.find_elements(By.ID, name):
                    continue
                driver.execute_script("document.getElementById(arguments[0]).scrollIntoView()", name)
            else:
                driver.execute_script("window.scrollTo(0, 0)")
            path = shot.replace(".png", "-" + name + ".png")
            data = driver.execute_cdp_cmd("Page.captureScreenshot", {"format": "png"})
            with open(path, "wb") as f:
                f.write(base64.b64decode(data["data"]))
            out["screenshots"].append(path)
        out["canary"] = driver.execute_script("return window.__canary === undefined ? null : String(window.__canary)")
        out["foreign_elements"] = driver.execute_script(
            "return document.querySelectorAll('img, iframe, object, embed, svg script, [onerror], [onload]').length")
        out["scripts"] = driver.execute_script(
            "return document.querySelectorAll(\"script:not([type='application/json'])\").length")
        out["gate"] = driver.execute_script("var g=document.getElementById('gate');return g?g.textContent:null")
        out["suspects"] = len(driver.find_elements(By.CSS_SELECTOR, "details.suspect"))
        out["heat_tables"] = len(driver.find_elements(By.CSS_SELECTOR, "table.heat:not(.leafheat)"))
        out["heat_canvases"] = driver.execute_script(
            "return Array.prototype.map.call(document.querySelectorAll('canvas.heat'), function(c){return Number(c.getAttribute('data-drawn')||0)})")
        out["svg_charts"] = len(driver.find_elements(By.CSS_SELECTOR, "svg"))
        rows = driver.execute_script("var t=document.getElementById('results-table');return t?t.tBodies[0].rows.length:0")
        out["result_rows"] = rows
        if rows:
            # Filter to the failing rows, then clear.
            out["fail_rows_shown"] = driver.execute_script(
                "var f=document.getElementById('filters');f.elements.verdict.value='fail';"
                "f.dispatchEvent(new Event('change'));"
                "return Array.prototype.filter.call(document.getElementById('results-table').tBodies[0].rows,function(r){return !r.hidden}).length")
            out["fail_rows_total"] = driver.execute_script(
                "return document.querySelectorAll('#results-table tbody tr[data-verdict=fail]').length")
            driver.execute_script("document.getElementById('filters').reset()")
            time.sleep(0.05)
            # Sort by value: the header's button, as a keyboard user would.
            btn = driver.find_elements(By.CSS_SELECTOR, "#results-table thead th:nth-child(4) button")
            if btn:
                btn[0].click()
                out["sorted"] = driver.execute_script(
                    "var v=Array.prototype.map.call(document.querySelectorAll('#results-table tbody tr td:nth-child(4)'),function(c){return parseFloat(c.getAttribute('data-v'))}).filter(function(x){return !isNaN(x)});"
                    "for(var i=1;i<v.length;i++){if(v[i]<v[i-1])return false}return v.length>0")
        # A heatmap cell leads to its pair's evidence.
        link = driver.find_elements(By.CSS_SELECTOR, "table.heat:not(.leafheat) td a")
        if link:
            href = link[0].get_attribute("href").split("#")[-1]
            driver.execute_script("location.hash = arguments[0]", href)
            time.sleep(0.1)
            out["heat_link_target"] = driver.execute_script(
                "var e=document.getElementById(arguments[0]);return e?e.className:null", href)
        # Printed: every collapsed section opens (beforeprint), controls hide.
        pdf = driver.execute_cdp_cmd("Page.printToPDF", {"printBackground": True})
        pdf_bytes = base64.b64decode(pdf["data"])
        with open(shot.replace(".png", ".pdf"), "wb") as f:
            f.write(pdf_bytes)
        out["pdf_bytes"] = len(pdf_bytes)
        # A leaf x leaf cell draws just its two leaves' nodes on the canvas.
        drill = driver.find_elements(By.CSS_SELECTOR, "a[data-drill][data-a]")
        if drill:
            driver.execute_script("arguments[0].click()", drill[0])
            time.sleep(0.1)
            out["drilled_cells"] = driver.execute_script(
                "var c=document.getElementById(arguments[0]);return c?Number(c.getAttribute('data-drawn')):null",
                drill[0].get_attribute("data-drill"))
        logs = driver.get_log("browser")
        out["console"] = [l["message"] for l in logs if l.get("level") in ("SEVERE", "WARNING")]
        out["canary"] = out["canary"] or driver.execute_script(
            "return window.__canary === undefined ? null : String(window.__canary)")
    finally:
        driver.quit()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
