"""A stand-in for the user's browser in the sign-in tests, given as `$BROWSER`:

    browser_standin.py LOG URL

Appends URL to LOG (a test counts the times the browser opened), then follows it as a browser
would, redirects included (the authorization server approves at once and redirects to the
bridge's loopback listener). It follows only http(s) URLs on 127.0.0.1: a test never leaves
loopback."""

from __future__ import annotations

import sys
import urllib.request
from urllib.parse import urlparse

log, url = sys.argv[1], sys.argv[2]
with open(log, "a", encoding="utf-8") as f:
    f.write(url + "\n")


class LoopbackOnly(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, req, fp, code, msg, headers, newurl):  # type: ignore[no-untyped-def]
        if urlparse(newurl).hostname != "127.0.0.1":
            raise SystemExit(f"browser stand-in: not following {newurl} off loopback")
        return super().redirect_request(req, fp, code, msg, headers, newurl)


if urlparse(url).hostname != "127.0.0.1":
    raise SystemExit(f"browser stand-in: not opening {url} off loopback")
opener = urllib.request.build_opener(LoopbackOnly)
with opener.open(url, timeout=30) as page:
    page.read()
