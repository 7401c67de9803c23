"""The Servers page: the IDE servers not wrapped yet, and a bridged server's health."""

from __future__ import annotations

from selenium.webdriver.common.by import By

from support import World, Client, badge, tray


def test_the_servers_page_shows_ide_servers_not_wrapped_yet(world: World) -> None:
    world.go("#/servers")
    found = world.find("unprotected-search")
    assert "Cursor" in found.text and "mcp-fake-server" in found.text, found.text
    # Probed before any client started it, with the env Cursor gives it.
    probe = lambda: found.find_element(By.CSS_SELECTOR, '[data-testid="probe-result"]')  # noqa: E731
    world.wait("the probe result", lambda: probe().get_attribute("data-ok") == "true")
    assert "Starts: 13 tools" in probe().text, probe().text
    assert world.find("review-and-wrap").get_attribute("href").endswith("#/clients")
    world.shot("servers-first-run")


def test_a_bridged_server_appears_healthy(world: World, client: Client) -> None:
    world.go("#/servers")
    world.wait("demo healthy", lambda: badge(world, "demo") == "healthy")
    world.wait("tray healthy", lambda: tray(world) == "healthy")
    world.shot("servers-healthy")
    world.go("#/sessions")
    row = world.find("session-row")
    assert "demo" in row.text
    world.shot("sessions")
