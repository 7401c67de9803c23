"""A freedesktop notification server on the test's private session bus, standing in for the
desktop's (GNOME Shell, KDE, dunst…): it lists the `actions` capability, records every
`Notify` and `CloseNotification` as a JSON line in the file given, and, on the test's
`org.warden.Test.Invoke(id, action)`, emits `ActionInvoked` as a notification server does
when a button is pressed (`default`: the notification itself was clicked). With
`--no-actions` it stands in for a desktop that shows no actions (xfce4-notifyd and the like).

Run with the system Python, which has python3-dbus and python3-gi (scripts/setup.sh):
  /usr/bin/python3 fake_notifications.py RECORD_FILE [--no-actions]
                                                 (prints READY once it owns the name)
"""

import json
import sys

import dbus
import dbus.service
from dbus.mainloop.glib import DBusGMainLoop
from gi.repository import GLib

IFACE = "org.freedesktop.Notifications"


class Server(dbus.service.Object):
    def __init__(self, bus: dbus.Bus, record: str) -> None:
        super().__init__(bus, "/org/freedesktop/Notifications")
        self.path = record
        self.last = 0

    def record(self, **entry) -> None:
        with open(self.path, "a") as f:
            f.write(json.dumps(entry) + "\n")

    @dbus.service.method(IFACE, out_signature="as")
    def GetCapabilities(self):
        return ["body"] if "--no-actions" in sys.argv else ["actions", "body"]

    @dbus.service.method(IFACE, out_signature="ssss")
    def GetServerInformation(self):
        return ("fake", "warden-tests", "1", "1.2")

    @dbus.service.method(IFACE, in_signature="susssasa{sv}i", out_signature="u")
    def Notify(self, app, replaces, icon, summary, body, actions, hints, timeout):
        self.last += 1
        self.record(op="notify", id=self.last, summary=str(summary), body=str(body),
                    actions=[str(a) for a in actions], timeout=int(timeout))
        return dbus.UInt32(self.last)

    @dbus.service.method(IFACE, in_signature="u")
    def CloseNotification(self, nid):
        self.record(op="close", id=int(nid))
        self.NotificationClosed(nid, dbus.UInt32(3))

    @dbus.service.signal(IFACE, signature="uu")
    def NotificationClosed(self, nid, reason):
        pass

    @dbus.service.signal(IFACE, signature="us")
    def ActionInvoked(self, nid, action):
        pass

    @dbus.service.method("org.warden.Test", in_signature="us")
    def Invoke(self, nid, action):
        self.ActionInvoked(nid, action)


DBusGMainLoop(set_as_default=True)
bus = dbus.SessionBus()
name = dbus.service.BusName(IFACE, bus, do_not_queue=True)
server = Server(bus, sys.argv[1])
print("READY", flush=True)
GLib.MainLoop().run()
