"""Twilio voice call: ``POST /2010-04-01/Accounts/{AccountSid}/Calls.json`` reading the alert."""

from __future__ import annotations

from xml.sax.saxutils import escape

from inferwatch.alerting._http import HttpClient
from inferwatch.alerting._notification import Notification
from inferwatch.alerting._template import group_title
from inferwatch.config._receivers import TwilioReceiverSpec

__all__ = ["TwilioNotifier"]


class TwilioNotifier:
    """Calls every number in ``to`` while a group fires; resolutions do not call."""

    def __init__(self, spec: TwilioReceiverSpec, http: HttpClient) -> None:
        if spec.auth_token is None or not spec.account_sid or not spec.to or not spec.from_:
            raise ValueError("a Twilio receiver needs account_sid, auth_token, from and to")
        self.name = f"twilio[{spec.name}]"
        self._sid, self._token = spec.account_sid, spec.auth_token
        self._from, self._to = spec.from_, spec.to
        self._url = f"{spec.url.rstrip('/')}/2010-04-01/Accounts/{spec.account_sid}/Calls.json"
        self._http = http

    def twiml(self, n: Notification) -> str:
        """What the call says, twice."""
        titles = [group_title(g) for g in n.groups if g.status == "firing"]
        said = escape("Inferwatch alert. " + ". ".join(titles))
        return f'<Response><Say loop="2">{said}</Say></Response>'

    def notify(self, n: Notification) -> None:
        """Place one call per number (Twilio answers 201 Created)."""
        if not any(g.status == "firing" for g in n.groups):
            return
        twiml = self.twiml(n)
        for number in self._to:
            self._http.request("POST", self._url, data={"To": number, "From": self._from, "Twiml": twiml},
                               auth=(self._sid, self._token.reveal()))
