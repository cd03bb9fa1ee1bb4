"""Debian's Chromium, headless, driven by Debian's chromedriver through selenium.

The driver's path is given explicitly (``Service(executable_path=...)``) and so is
the browser's, so Selenium Manager never looks for, or downloads, either.  Without
them the browser tests are skipped, saying how to install them; ``.ci/run``
installs them, so CI never skips.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
INSTALL_HINT = "needs Debian's Chromium: apt-get install -y chromium chromium-driver"


@pytest.fixture(scope="module")
def browser() -> Iterator[webdriver.Chrome]:
    """A headless Chromium whose console messages ``get_log("browser")`` returns."""
    if not (shutil.which(CHROMIUM) and shutil.which(CHROMEDRIVER)):
        pytest.skip(INSTALL_HINT)
    options = Options()
    options.binary_location = CHROMIUM
    for argument in (
        "--headless=new",
        "--no-sandbox",  # CI runs as root
        "--disable-dev-shm-usage",
        "--disable-gpu",
        "--window-size=1100,1400",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
    ):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=options, service=Service(executable_path=CHROMEDRIVER))
    driver.set_script_timeout(60)
    try:
        yield driver
    finally:
        driver.quit()
