"""A user's own agent program for the notes app, on acceval's plain HTTP API: it saves a
draft and publishes it. ``STYLE=hasty`` publishes unconfirmed first and, once refused, goes
back, confirms and publishes again; ``careful`` confirms right before. A dialog covering
the page (a perturbation) is closed as soon as a page shows it, a sign-in form (at the start,
or after an expired session) is filled in as ``LOGIN_USER``, and a title that a reload
emptied is typed again."""

from __future__ import annotations

import json
import os
import re
import urllib.request

API = os.environ["ACCEVAL_API_URL"]
TITLE = os.environ.get("TITLE", "hello")
USER = os.environ.get("LOGIN_USER", "ada")


def _call(name: str, **args: object) -> str:
    req = urllib.request.Request(f"{API}/tools/{name}", data=json.dumps(args).encode(),
                                 headers={"content-type": "application/json"})
    with urllib.request.urlopen(req) as r:
        return str(json.load(r)["result"])


def closed(page: str) -> str:
    while 'dialog "' in page:
        page = _call("click", ref=ref(page, "button", "Close"))
    return page


def signed_in(page: str) -> str:
    while 'button "Sign in"' in page:  # a reload may empty the form: type it again
        page = closed(_call("type", ref=ref(page, "textbox", "User"), text=USER))
        page = closed(_call("click", ref=ref(page, "button", "Sign in")))
    return page


def settled(page: str) -> str:
    return signed_in(closed(page))


def call(name: str, **args: object) -> str:
    return settled(_call(name, **args))


def ref(page: str, role: str, name: str) -> int:
    m = re.search(rf'\[(\d+)\] {role} "{re.escape(name)}"', page)
    assert m is not None, page
    return int(m.group(1))


with urllib.request.urlopen(f"{API}/episode") as r:
    page = settled(json.load(r)["goal"])
page = call("type", ref=ref(page, "textbox", "Title"), text=TITLE)
while 'textbox "Title" value=""' in page:  # a perturbation's reload emptied the form
    page = call("type", ref=ref(page, "textbox", "Title"), text=TITLE)
page = call("click", ref=ref(page, "button", "Save draft"))
if os.environ.get("STYLE") == "hasty":
    page = call("click", ref=ref(page, "button", f"Publish {TITLE}"))
    print(page.splitlines()[0])
    page = call("navigate", path="/")
print(call("confirm", action="publish", object=TITLE).split(":")[0])
print(call("click", ref=ref(page, "button", f"Publish {TITLE}")).splitlines()[0])
call("done", summary="published")
