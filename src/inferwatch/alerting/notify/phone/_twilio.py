"""Twilio voice call: ``POST /2010-04-01/Accounts/{AccountSid}/Calls.json`` reading the alert.

The ``Twiml`` parameter is limited to 4,000 characters (Twilio error 32018):
the titles that do not fit are replaced by "And N more."
"""

from __future__ import annotations

import re
from xml.sax.saxutils import escape as _xml_escape

from inferwatch._exceptions import MissingCredentialError
from inferwatch.alerting._http import HttpClient
from inferwatch.alerting._notification import Notification
from inferwatch.alerting.notify._template import group_title
from inferwatch.settings import TwilioReceiverSpec

__all__ = ["TWIML_MAX_CHARS", "TwilioNotifier", "spoken_twiml"]

TWIML_MAX_CHARS = 4000
_HEAD, _TAIL = '<Response><Say loop="2">', "</Say></Response>"
_INTRO = "Inferwatch alert."


# Characters XML 1.0 does not allow (a label can carry them): Twilio would refuse the TwiML.
_NOT_XML = re.compile("[^\x09\x0a\x0d\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def escape(text: str) -> str:
    """``text`` as XML character data: escaped, characters XML cannot carry replaced by spaces."""
    return _xml_escape(_NOT_XML.sub(" ", text))


def _more(n: int) -> str:
    return f" And {n} more." if n else ""


def spoken_twiml(titles: list[str], limit: int = TWIML_MAX_CHARS) -> str:
    """``<Response><Say>`` reading the titles, at most ``limit`` characters.

    >>> t = spoken_twiml([f"alert {i} & friends" for i in range(500)])
    >>> len(t) <= 4000, t.endswith("more.</Say></Response>")
    (True, True)
    """
    room = limit - len(_HEAD) - len(_TAIL) - len(_INTRO)
    pieces = [escape(f" {t}.") for t in titles]
    said, used = [], 0
    for i, piece in enumerate(pieces):
        if used + len(piece) + len(_more(len(pieces) - i - 1)) > room:
            break
        said.append(piece)
        used += len(piece)
    rest = len(pieces) - len(said)
    if said or not pieces:
        body = "".join(said) + _more(rest)
    else:  # even the first title alone is too long: read as much of it as fits
        body = _cut(titles[0], room - len(_more(rest - 1))) + _more(rest - 1)
    return f"{_HEAD}{_INTRO}{body}{_TAIL}"


def _cut(title: str, room: int) -> str:
    lo, hi = 0, len(title)
    while lo < hi:  # the longest prefix whose escaped form fits
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if len(escape(f" {title[:mid]}.")) <= room else (lo, mid - 1)
    return escape(f" {title[:lo]}.")


class TwilioNotifier:
    """Calls every number in ``to`` while a group fires; resolutions do not call."""

    def __init__(self, spec: TwilioReceiverSpec, http: HttpClient) -> None:
        self.name = f"twilio[{spec.name}]"
        missing = [n for n, v in (("account_sid", spec.account_sid), ("auth_token", spec.auth_token),
                                  ("from", spec.from_), ("to", spec.to)) if not v]
        if missing or spec.auth_token is None:
            raise MissingCredentialError(self.name, ", ".join(missing))
        self._sid, self._token = spec.account_sid, spec.auth_token
        self._from, self._to = spec.from_, spec.to
        self._url = f"{spec.url.rstrip('/')}/2010-04-01/Accounts/{spec.account_sid}/Calls.json"
        self._http = http

    def twiml(self, n: Notification) -> str:
        """What the call says, twice (under Twilio's 4,000-character limit)."""
        return spoken_twiml([group_title(g) for g in n.groups if g.status == "firing"])

    def notify(self, n: Notification) -> None:
        """Place one call per number (Twilio answers 201 Created)."""
        if not any(g.status == "firing" for g in n.groups):
            return
        twiml = self.twiml(n)
        for number in self._to:
            self._http.request("POST", self._url, data={"To": number, "From": self._from, "Twiml": twiml},
                               auth=(self._sid, self._token.reveal()))
