"""Stands in for the desktop session that starts `warden-app` from its menu entry.

WebKitWebDriver launches this program as its "browser" (with its inspector address in the
environment), and takes the session for crashed when that process ends. The app's host is the
process a test kills, so this starts the app as the desktop would, and stays until
WebKitWebDriver ends the session. The host starts the window, which inherits the environment
and is the page WebDriver drives.
"""

import signal
import subprocess
import sys

subprocess.Popen(sys.argv[1:], stdin=subprocess.DEVNULL)
signal.pause()
