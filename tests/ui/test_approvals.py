"""Calls held for an answer: on top of the window, and as a desktop notification with actions."""

from __future__ import annotations

import json
import select
from selenium.webdriver.common.by import By

from support import World, Client, Notifications


def test_a_call_held_for_an_answer_is_allowed_from_the_window(world: World) -> None:
    """`tools_ask = ["noise"]`: a call to it is held by the bridge and shown on top of the
    window with its arguments; Allow lets it run and takes it off the list, and the client gets
    the tool's answer."""
    with world.config.open("a") as f:
        f.write('\n[servers.asked]\ntools_ask = ["noise"]\n')
    c = Client(world.env, "asked", world.config)
    try:
        # Not `call`: the answer comes only once the window has allowed it.
        c.proc.stdin.write(json.dumps({"tool": "noise", "arguments": {"lines": 0, "text": "held-7d2"}}) + "\n")
        c.proc.stdin.flush()
        world.go("#/")
        world.wait("the held call is shown", lambda: "held-7d2" in world.find("approval-noise").text)
        assert "asked" in world.find("approval-noise").text, "the server is named"
        world.shot("approvals", at="approvals")
        world.click("approval-allow")
        said = json.loads(c.readline())
        assert said.get("ok") is True, said
        world.wait("off the list", lambda: not world.driver.find_elements(By.CSS_SELECTOR, '[data-testid="approvals"]'))
    finally:
        c.close()


def test_a_held_call_is_notified_with_actions_and_allowed_from_the_notification(world: World) -> None:
    """Where the desktop shows actions, the tray notifies each held call once, with Allow,
    Always allow and Deny (its secret argument redacted); Allow pressed in the notification
    runs the call. A call answered in the window instead has its notification withdrawn."""
    notes = Notifications(world)
    with world.config.open("a") as f:
        f.write('\n[servers.noticed]\ntools_ask = ["noise"]\n')
    c = Client(world.env, "noticed", world.config)
    try:
        c.proc.stdin.write(json.dumps({"tool": "noise", "arguments": {"lines": 0, "text": "notice-5a1", "token": "sk-notice-secret"}}) + "\n")
        c.proc.stdin.flush()
        [n] = world.wait("the held call is notified", lambda: notes.about("notice-5a1"))
        assert n["summary"] == "noticed wants to run noise", n
        assert "sk-notice-secret" not in n["body"] and "[redacted]" in n["body"], n
        actions = dict(zip(n["actions"][::2], n["actions"][1::2]))
        assert actions == {"default": "Open Warden", "allow": "Allow", "always": "Always allow", "deny": "Deny"}, actions
        # Pressed until the app hears it (it starts listening just after the notification shows).
        said = None
        for _ in range(10):
            notes.invoke(n["id"], "allow")
            ready, _, _ = select.select([c.proc.stdout], [], [], 2)
            if ready:
                said = json.loads(c.proc.stdout.readline())
                break
        assert said is not None and said.get("ok") is True, said
        assert len(notes.about("notice-5a1")) == 1, "notified once"

        c.proc.stdin.write(json.dumps({"tool": "noise", "arguments": {"lines": 0, "text": "notice-6b2"}}) + "\n")
        c.proc.stdin.flush()
        [n] = world.wait("the second held call is notified", lambda: notes.about("notice-6b2"))
        world.go("#/")
        world.wait("it is listed", lambda: "notice-6b2" in world.find("approval-noise").text)
        world.click("approval-deny")
        said = json.loads(c.readline())
        assert said.get("ok") is False, said
        world.wait("its notification is withdrawn", lambda: {"op": "close", "id": n["id"]} in notes.seen())
        assert len(notes.about("notice-6b2")) == 1, "notified once"
    finally:
        c.close()
        notes.stop()
