"""The catalog page (`GET /`) in a real headless browser: Debian's Chromium, driven through
its ChromeDriver by Selenium, with axe-core (npm) checking its accessibility in the light
and the dark scheme.

What it checks: the side list, counts, filter and deep links; descriptions rendered as
Markdown with nothing executable let through; each parameter's own doc; forms built from
the schema (choices, checkboxes, nested objects, lists, a JSON box only for open schemas),
filled by an example in one click; calls that show formatted results, images, resource
links, progress and tool errors; prompts got and resources read from the page; a copy
button; keyboard use; no axe-core violation of serious or critical impact; another MCP
server's tools mounted beside the binary's own, shown and called from the page like them.

Usage: catalog_page.py <page-tools binary> <axe.min.js> <upstream-tools binary>
       catalog_page.py --screenshots <dir> <tool to try> <binary> [options before `serve`...]
"""

import base64
import os
import sys
import tempfile

from checks import check, finish, serve_http, server_log
from selenium import webdriver
from selenium.common.exceptions import SessionNotCreatedException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions
from selenium.webdriver.support.ui import Select, WebDriverWait

WAIT = 20


def browser(profile):
    """Chromium under ChromeDriver, its profile in `profile`. A start that fails is tried
    again, twice at most, each in a fresh profile: on a busy machine Chromium can give up
    before its session begins (its GPU process too slow to come up), and what this test
    checks is the page, not how fast a browser starts. The last failure is raised with the
    end of ChromeDriver's log."""
    attempts = 3
    for attempt in range(1, attempts + 1):
        attempt_profile = os.path.join(profile, f"attempt-{attempt}")
        log = os.path.join(profile, f"chromedriver-{attempt}.log")
        options = webdriver.ChromeOptions()
        options.binary_location = "/usr/bin/chromium"
        # This machine's network is closed: Chromium's own background traffic is turned off.
        for flag in ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                     "--disable-background-networking", "--disable-component-update", "--disable-sync",
                     "--disable-dev-shm-usage", "--window-size=1280,1000",
                     f"--user-data-dir={attempt_profile}"]:
            options.add_argument(flag)
        service = Service("/usr/bin/chromedriver", service_args=["--enable-chrome-logs"], log_output=log)
        try:
            return webdriver.Chrome(options=options, service=service)
        except SessionNotCreatedException as error:
            print(f"Chromium did not start (attempt {attempt} of {attempts}): {error.msg}", file=sys.stderr)
            if attempt == attempts:
                with open(log, encoding="utf-8", errors="replace") as text:
                    tail = text.readlines()[-40:]
                raise SessionNotCreatedException(
                    f"{error.msg}; the end of ChromeDriver's log:\n{''.join(tail)}") from error


def scheme(driver, name):
    """Makes the page see the system's colour scheme as `name` ("light" or "dark")."""
    driver.execute_cdp_cmd("Emulation.setEmulatedMedia",
                           {"features": [{"name": "prefers-color-scheme", "value": name}]})


class Page:
    def __init__(self, driver, base):
        self.driver = driver
        self.base = base

    def find(self, selector, within=None):
        return (within or self.driver).find_element(By.CSS_SELECTOR, selector)

    def finds(self, selector, within=None):
        return (within or self.driver).find_elements(By.CSS_SELECTOR, selector)

    def card(self, kind, name):
        return self.driver.find_element(By.ID, f"{kind}-{name}")

    def submit(self, card):
        self.find("button[type=submit]", card).click()
        return self.result(card)

    def result(self, card):
        """Waits for the card's result to settle; its class ("ok" or "error"), title and text."""
        box = self.find(".result", card)
        WebDriverWait(self.driver, WAIT).until(
            lambda _: set(box.get_attribute("class").split()) & {"ok", "error"})
        return box.get_attribute("class"), self.find(".result-head strong", box).text, self.find(".result-body", box).text

    def visible_ids(self, selector):
        return [node.get_attribute("id") for node in self.finds(selector) if node.is_displayed()]

    def axe(self, axe_source, label):
        """Runs axe-core on the page; checks that nothing serious or critical is found."""
        self.driver.execute_script(axe_source)
        self.driver.set_script_timeout(60)
        report = self.driver.execute_async_script(
            "const done = arguments[arguments.length - 1];"
            "axe.run(document, {resultTypes: ['violations']})"
            ".then((r) => done({violations: r.violations.map((v) => ({id: v.id, impact: v.impact,"
            " nodes: v.nodes.slice(0, 3).map((n) => n.target.join(' '))}))}))"
            ".catch((e) => done({error: String(e)}));")
        check(f"axe-core ran on the page ({label})", "violations" in report, report.get("error", ""))
        violations = report.get("violations", [])
        grave = [v for v in violations if v["impact"] in ("serious", "critical")]
        check(f"no serious or critical axe-core violation ({label})", not grave, grave)
        minor = [f"{v['id']} ({v['impact']})" for v in violations if v not in grave]
        if minor:
            print(f"note     axe-core, minor or moderate ({label}): {', '.join(minor)}")


def check_lists(page):
    driver = page.driver
    tools = page.finds("article.tool")
    counts = driver.find_element(By.ID, "counts").text
    check("the counts are written with correct plurals", counts == f"{len(tools)} tools, 1 prompt, 2 resources", counts)
    side = [link.get_attribute("href").split("#")[1] for link in page.finds("nav.side a")]
    cards = [card.get_attribute("id") for card in page.finds("article.card")]
    check("the side list links every tool, prompt and resource card", side == cards, (side, cards))
    check("the side list has a heading per kind",
          [h.get_attribute("textContent") for h in page.finds("nav.side h2")] == ["Tools", "Prompts", "Resources"])
    filter_box = driver.find_element(By.ID, "filter")
    filter_box.send_keys("weather")
    shown = page.visible_ids("article.card")
    check("the filter keeps the cards whose name or description matches",
          "tool-get_weather" in shown and "tool-weather_chart" in shown and "tool-plan_trip" not in shown, shown)
    shown_links = [a.text for a in page.finds("nav.side a") if a.is_displayed()]
    check("the filter narrows the side list the same way", len(shown_links) == len(shown), (shown_links, shown))
    check("the filter says how many match",
          driver.find_element(By.ID, "filter-status").text == f"{len(shown)} matches")
    filter_box.send_keys(Keys.CONTROL, "a")
    filter_box.send_keys("no such thing")
    check("a filter nothing matches says so", driver.find_element(By.ID, "filter-status").text == "Nothing matches.")
    filter_box.send_keys(Keys.CONTROL, "a")
    filter_box.send_keys(Keys.BACKSPACE)
    check("an empty filter shows every card again", len(page.visible_ids("article.card")) == len(cards))

    driver.get(f"{page.base}/#tool-plan_trip")
    WebDriverWait(driver, WAIT).until(expected_conditions.presence_of_element_located((By.ID, "tool-plan_trip")))
    target = driver.execute_script("const t = document.querySelector(':target'); return t && t.id;")
    top = driver.execute_script("return document.getElementById('tool-plan_trip').getBoundingClientRect().top;")
    check("a deep link opens the page at its card", target == "tool-plan_trip" and abs(top) < 50, (target, top))


def check_descriptions(page):
    driver = page.driver
    card = page.card("tool", "format_note")
    description = page.find(".md", card)
    check("Markdown emphasis and code are rendered",
          page.find("strong", description).text == "30 days" and page.find("code", description).text == "**bold**")
    items = [li.text for li in page.finds("ul li", description)]
    check("a Markdown list is a list", len(items) == 2 and items[0].startswith("keeps notes"), items)
    links = page.finds("a", description)
    check("a web link is a link", [a.get_attribute("href") for a in links] == ["https://example.com/feed"],
          [a.get_attribute("href") for a in links])
    check("markup in a description is shown as text, never run",
          '<script>document.title = "injected"</script>' in description.text
          and driver.title != "injected" and not page.finds("script", description), description.text)
    check("a link to a script stays text", "[a script link](javascript:alert(1))" in description.text)

    rows = {page.find("td code", row).text: row.text for row in page.finds("tr.parameter", page.card("tool", "plan_trip"))}
    check("each parameter shows its own doc, not its type's",
          "Where to go." in rows["destination"] and "A postal address." not in rows["destination"]
          and "How to travel." in rows["mode"], rows)
    check("a choice is shown with its values", 'one of train, car, plane' in rows["mode"], rows["mode"])
    check("a list is shown with its item type", "list of Stop" in rows["stops"], rows["stops"])
    inspect = page.find("tr.parameter", page.card("tool", "inspect")).text
    check("a serde_json::Value parameter is called any JSON value", "any JSON value" in inspect, inspect)


def check_forms(page):
    driver = page.driver
    trip = page.card("tool", "plan_trip")
    mode = driver.find_element(By.ID, "plan_trip--mode")
    check("an enum is a choice list", mode.tag_name == "select"
          and [o.text for o in Select(mode).options][1:] == ["train", "car", "plane"],
          [o.text for o in Select(mode).options])
    check("a nested object is nested fields",
          driver.find_element(By.ID, "plan_trip--destination").tag_name == "fieldset"
          and driver.find_element(By.ID, "plan_trip--destination.city").tag_name == "input")
    check("a boolean is a checkbox",
          driver.find_element(By.ID, "format_note--pinned").get_attribute("type") == "checkbox")
    check("an open schema (a map) is a JSON box", driver.find_element(By.ID, "tag_items--tags").tag_name == "textarea")
    value = driver.find_element(By.ID, "inspect--value")
    check("an any-value parameter is a JSON box saying so",
          value.tag_name == "textarea" and value.get_attribute("placeholder") == "any JSON value")

    page.find("button.use-example", trip).click()
    filled = (driver.find_element(By.ID, "plan_trip--destination.city").get_attribute("value"),
              driver.find_element(By.ID, "plan_trip--destination.country").get_attribute("value"),
              Select(mode).first_selected_option.text)
    check("'use this example' fills the form", filled == ("Lima", "PE", "plane"), filled)
    kind, title, text = page.submit(trip)
    check("the example's call succeeds", "ok" in kind and '"to": "Lima"' in text and '"mode": "plane"' in text,
          (kind, text))

    city = driver.find_element(By.ID, "plan_trip--destination.city")
    city.clear()
    city.send_keys("Oslo")
    Select(mode).select_by_visible_text("train")
    page.find("fieldset.list > button", trip).click()
    driver.find_element(By.ID, "plan_trip--stops.1.city").send_keys("Bergen")
    driver.find_element(By.ID, "plan_trip--stops.1.nights").send_keys("2")
    kind, title, text = page.submit(trip)
    check("nested fields and list items are sent as nested JSON",
          "ok" in kind and '"to": "Bergen"' in text and '"to": "Oslo"' in text and '"total_nights": 2' in text,
          (kind, text))

    note = page.card("tool", "format_note")
    driver.find_element(By.ID, "format_note--text").send_keys("hi")
    driver.find_element(By.ID, "format_note--pinned").click()
    kind, title, text = page.submit(note)
    check("a ticked checkbox is sent as true", "ok" in kind and "📌 hi" in text and "🔔" not in text, (kind, text))


def check_results(page):
    driver = page.driver
    weather = page.card("tool", "get_weather")
    driver.find_element(By.ID, "get_weather--city").send_keys("Oslo")
    driver.find_element(By.ID, "get_weather--days").send_keys("3")
    kind, title, text = page.submit(weather)
    check("a form call shows the output formatted",
          "ok" in kind and '{\n  "city": "Oslo",' in text and '\n  "days": 3' in text, (kind, text))

    driver.execute_cdp_cmd("Browser.grantPermissions", {
        "origin": page.base, "permissions": ["clipboardReadWrite", "clipboardSanitizedWrite"]})
    copy = page.find(".result-head button", weather)
    copy.click()
    WebDriverWait(driver, WAIT).until(lambda _: copy.text != "Copy")
    pasted = driver.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "navigator.clipboard.readText().then(done, (e) => done('unreadable: ' + e));")
    check("the copy button puts the result on the clipboard", copy.text == "Copied" and '"city": "Oslo"' in pasted,
          (copy.text, pasted))

    days = driver.find_element(By.ID, "get_weather--days")
    days.clear()
    days.send_keys("many")
    kind, title, text = page.submit(weather)
    check("a bad value shows the runtime's error, naming the parameter",
          "error" in kind and "'days'" in text and "many" in text, (kind, text))

    chart = page.card("tool", "weather_chart")
    kind, title, text = page.submit(chart)
    images = page.finds(".result img", chart)
    check("an image in a result is shown as an image",
          "ok" in kind and len(images) == 1 and images[0].get_attribute("src").startswith("data:image/png;base64,")
          and "the week's temperatures" in text, (kind, text))

    rain = page.card("tool", "rain_sensor")
    kind, title, text = page.submit(rain)
    check("a tool error is plainly marked", "error" in kind and title == "The tool reported an error"
          and "the rain sensor is offline" in text, (kind, title, text))

    guide = page.card("tool", "find_guide")
    driver.find_element(By.ID, "find_guide--city").send_keys("Paris")
    kind, title, text = page.submit(guide)
    check("a resource link is shown", "ok" in kind and "guides://Paris" in text, (kind, text))
    page.find(".result .linked", guide)
    page.find(".result-body button", guide).click()
    WebDriverWait(driver, WAIT).until(lambda _: "walk, eat, rest" in page.find(".result .linked", guide).text)
    check("a resource link can be read from the page", True)

    count = page.card("tool", "count_to")
    driver.execute_script(
        "window.seen = []; new MutationObserver((records) => { for (const r of records)"
        " for (const n of r.addedNodes) if (n.classList && n.classList.contains('progress')) window.seen.push(n.textContent); })"
        ".observe(arguments[0], {childList: true, subtree: true});", count)
    driver.find_element(By.ID, "count_to--to").send_keys("4")
    kind, title, text = page.submit(count)
    seen = driver.execute_script("return window.seen;")
    check("progress is shown while a tool works", "4 of 4: counting" in seen and "ok" in kind, (seen, kind, text))


def check_prompts_and_resources(page):
    driver = page.driver
    trip = page.card("prompt", "day_trip")
    driver.find_element(By.ID, "prompt-day_trip--city").send_keys("Kyoto")
    kind, title, text = page.submit(trip)
    check("a prompt can be got from the page", "ok" in kind and title == "1 message"
          and "Suggest a day trip from Kyoto for people who like anything." in text, (kind, title, text))
    about = page.card("resource", "about")
    kind, title, text = page.submit(about)
    check("a resource can be read from the page", "ok" in kind and "Tools for planning trips." in text, (kind, text))
    guide = page.card("resource", "guide")
    driver.find_element(By.ID, "resource-guide--city").send_keys("Rome")
    kind, title, text = page.submit(guide)
    check("a resource template's variables are filled in from the page",
          "ok" in kind and "The guide of Rome: walk, eat, rest." in text, (kind, text))


def check_keyboard(page):
    driver = page.driver
    driver.get(f"{page.base}/")
    body = page.find("body")
    body.send_keys(Keys.TAB)
    first = driver.switch_to.active_element
    check("the first Tab reaches the skip link", first.get_attribute("class") == "skip", first.get_attribute("outerHTML"))
    first.send_keys(Keys.TAB)
    check("the next Tab reaches the filter", driver.switch_to.active_element.get_attribute("id") == "filter")
    city = driver.find_element(By.ID, "get_weather--city")
    city.send_keys("Lima", Keys.ENTER)
    kind, title, text = page.result(page.card("tool", "get_weather"))
    check("Enter in a field calls the tool", "ok" in kind and '"city": "Lima"' in text, (kind, text))
    use = page.find("button.use-example", page.card("tool", "get_weather"))
    use.send_keys(Keys.ENTER)
    check("an example is used from the keyboard",
          driver.find_element(By.ID, "get_weather--city").get_attribute("value") == "Paris"
          and driver.switch_to.active_element.get_attribute("id") == "get_weather--city")


def check_mounted(driver, binary, upstream):
    """The page of `binary` serving `upstream`'s tools under the prefix `up`: their cards,
    forms built from the schemas their server gave, and calls that go through to it."""
    server, port = serve_http([binary, "serve", "--mount", f"up={upstream} serve"])
    base = f"http://127.0.0.1:{port}"
    page = Page(driver, base)
    try:
        # The mount connects once the server runs: the page lists what is mounted when it
        # is loaded, so it is loaded again until the mounted tools are in.
        def mounted(_):
            driver.get(f"{base}/")
            return page.finds("#tool-up_add")
        WebDriverWait(driver, WAIT, poll_frequency=0.5).until(mounted)
        add = page.card("tool", "up_add")
        check("a mounted tool's card shows its server's description",
              "Add two integers." in add.text, add.text)
        check("and a form built from its server's schema (numbers for its integers)",
              driver.find_element(By.ID, "up_add--a").get_attribute("inputmode") == "decimal")
        check("beside the binary's own tools", page.finds("#tool-get_weather") != [])
        driver.find_element(By.ID, "up_add--a").send_keys("40")
        driver.find_element(By.ID, "up_add--b").send_keys("2")
        kind, title, text = page.submit(add)
        check("a mounted tool is called from the page through its server", "ok" in kind and "42" in text,
              (kind, text))
        broken = page.card("tool", "up_broken")
        kind, title, text = page.submit(broken)
        check("a mounted tool's error is shown as the tool's error", "error" in kind
              and title == "The tool reported an error" and "failed on purpose" in text, (kind, title, text))
    finally:
        server.terminate()
        server.wait(timeout=10)


def background(driver):
    return driver.execute_script("return getComputedStyle(document.documentElement).backgroundColor;")


def luminance(css):
    red, green, blue = [int(part) for part in css[css.index("(") + 1:css.index(")")].split(",")[:3]]
    return (0.2126 * red + 0.7152 * green + 0.0722 * blue) / 255


def serve(binary, options):
    """Starts `binary [options...] serve` over HTTP; the process and the port."""
    return serve_http([binary, *options, "serve"])


def screenshots(directory, tool, binary, options):
    """Writes two pictures of the page `binary` serves: catalog-light.png, its top in the
    light scheme, and catalog-dark.png, the card of `tool` called with its first example,
    in the dark scheme."""
    server, port = serve(binary, options)
    base = f"http://127.0.0.1:{port}"
    try:
        with tempfile.TemporaryDirectory() as profile:
            driver = browser(profile)
            page = Page(driver, base)
            try:
                for name in ["light", "dark"]:
                    scheme(driver, name)
                    driver.get(f"{base}/")
                    WebDriverWait(driver, WAIT).until(
                        expected_conditions.presence_of_element_located((By.CSS_SELECTOR, "article.tool")))
                    if name == "dark":
                        card = page.card("tool", tool)
                        page.find("button.use-example", card).click()
                        page.submit(card)
                        driver.execute_script("arguments[0].scrollIntoView();", page.find("form", card))
                    path = os.path.join(directory, f"catalog-{name}.png")
                    with open(path, "wb") as out:
                        out.write(base64.b64decode(driver.get_screenshot_as_base64()))
                    print(f"wrote {path}")
            finally:
                driver.quit()
    finally:
        server.terminate()
        server.wait(timeout=10)


def main():
    if sys.argv[1] == "--screenshots":
        screenshots(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:])
        return
    binary, axe_path, upstream = sys.argv[1], sys.argv[2], sys.argv[3]
    with open(axe_path, encoding="utf-8") as source:
        axe_source = source.read()
    server, port = serve(binary, [])
    base = f"http://127.0.0.1:{port}"
    try:
        with tempfile.TemporaryDirectory() as profile:
            driver = browser(profile)
            page = Page(driver, base)
            try:
                scheme(driver, "light")
                driver.get(f"{base}/")
                WebDriverWait(driver, WAIT).until(
                    expected_conditions.presence_of_element_located((By.ID, "tool-get_weather")))
                check("the page names the MCP endpoint", driver.find_element(By.ID, "mcp-url").text == f"{base}/mcp")
                check_lists(page)
                check_descriptions(page)
                check_forms(page)
                check_results(page)
                check_prompts_and_resources(page)
                light = background(driver)
                page.axe(axe_source, "light, with results shown")
                scheme(driver, "dark")
                dark = background(driver)
                check("the page follows the system's dark setting", luminance(dark) < 0.2 < 0.8 < luminance(light),
                      (light, dark))
                page.axe(axe_source, "dark, with results shown")
                scheme(driver, "light")
                check_keyboard(page)
                check_mounted(driver, binary, upstream)
                # Refused calls are logged as failed requests (network); anything else
                # severe (a script error, a blocked resource) fails the test.
                errors = [entry for entry in driver.get_log("browser")
                          if entry["level"] == "SEVERE" and entry["source"] != "network"]
                check("no script error or blocked resource on the page", not errors, errors)
            finally:
                driver.quit()
    finally:
        server.terminate()
        server.wait(timeout=10)
        logs = server_log(server)
    check("the start-up log names the MCP URL and the page's", f"the catalog page is at {base}/" in logs, logs)
    finish("catalog page")


if __name__ == "__main__":
    main()
