"""The catalog page (`GET /`) in a real headless browser: Debian's Chromium, driven through
its ChromeDriver by Selenium. The page lists the tools, a form call succeeds and shows the
output, and a bad value shows the runtime's own error, naming the parameter.

Usage: catalog_page.py <a tool binary built from tests/fixtures/agent.rs>
"""

import subprocess
import sys
import tempfile

from checks import free_port, wait_for_port
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions
from selenium.webdriver.support.ui import WebDriverWait



def browser(profile):
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    # This machine's network is closed: Chromium's own background traffic is turned off.
    for flag in ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage", f"--user-data-dir={profile}"]:
        options.add_argument(flag)
    return webdriver.Chrome(options=options, service=Service("/usr/bin/chromedriver"))


def result_of(driver, tool):
    card = driver.find_element(By.ID, f"tool-{tool}")
    result = card.find_element(By.CSS_SELECTOR, "pre.result")
    WebDriverWait(driver, 10).until(
        lambda _: "ok" in result.get_attribute("class") or "error" in result.get_attribute("class"))
    return result.get_attribute("class"), result.text


def main():
    binary = sys.argv[1]
    port = free_port()
    server = subprocess.Popen([binary, "serve", "--http", f"127.0.0.1:{port}"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_for_port(port)
        with tempfile.TemporaryDirectory() as profile:
            driver = browser(profile)
            try:
                driver.get(f"{base}/")
                WebDriverWait(driver, 10).until(
                    expected_conditions.presence_of_element_located((By.ID, "tool-get_weather")))
                names = [card.get_attribute("id") for card in driver.find_elements(By.CSS_SELECTOR, "article.tool")]
                for expected in ["tool-get_weather", "tool-get_time", "tool-weather_chart"]:
                    assert expected in names, names
                card = driver.find_element(By.ID, "tool-get_weather")
                assert "Get the weather forecast for a city." in card.text, card.text
                assert '{"city":"Paris","days":2}' in card.text, "the doc example is shown"
                assert driver.find_element(By.ID, "mcp-url").text == f"{base}/mcp"
                print(f"ok: the page lists {len(names)} tools with their docs and examples")

                driver.find_element(By.ID, "get_weather--city").send_keys("Oslo")
                driver.find_element(By.ID, "get_weather--days").send_keys("3")
                card.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
                kind, text = result_of(driver, "get_weather")
                assert "ok" in kind and '"city": "Oslo"' in text and '"days": 3' in text, (kind, text)
                print("ok: a form call succeeds and shows the output")

                days = driver.find_element(By.ID, "get_weather--days")
                days.clear()
                days.send_keys("many")
                card.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
                WebDriverWait(driver, 10).until(lambda _: "days" in result_of(driver, "get_weather")[1])
                kind, text = result_of(driver, "get_weather")
                assert "error" in kind and "'days'" in text and "many" in text, (kind, text)
                print(f"ok: a bad value shows the runtime's error: {text}")

                # The refused call is logged as a failed request (network); anything else
                # severe (a script error, a blocked resource) fails the test.
                errors = [entry for entry in driver.get_log("browser")
                          if entry["level"] == "SEVERE" and entry["source"] != "network"]
                assert not errors, errors
            finally:
                driver.quit()
    finally:
        server.terminate()
        _, logs = server.communicate(timeout=10)
    assert f"the catalog page is at {base}/" in logs, logs
    print("ok: the start-up log names the MCP URL and the page's")


if __name__ == "__main__":
    main()
