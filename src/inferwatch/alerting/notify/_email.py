"""E-mail over SMTP: STARTTLS (default) or implicit TLS (port 465), optional login.

Every message carries ``Date`` (the flush time) and a ``Message-ID`` derived
from the notification, so a resend after a failure reads as the same message.
"""

from __future__ import annotations

import hashlib
import smtplib
import ssl
from datetime import UTC, datetime
from email.message import EmailMessage
from email.utils import format_datetime
from functools import partial

from inferwatch._exceptions import MissingCredentialError, NotifyError
from inferwatch.alerting._notification import Notification
from inferwatch.alerting.notify._message import localized_title
from inferwatch.alerting.notify._template import group_title, notification_id, notification_text
from inferwatch.model import Clock, SystemClock
from inferwatch.settings import EmailReceiverSpec

__all__ = ["EmailNotifier"]


class EmailNotifier:
    """One message per notification to every address in ``to``."""

    def __init__(self, spec: EmailReceiverSpec, external_url: str = "", clock: Clock | None = None, *,
                 language: str = "en", timezone: str = "UTC") -> None:
        self.name = f"email[{spec.name}]"
        missing = [n for n, v in (("smarthost", spec.smarthost), ("to", spec.to)) if not v]
        if missing:
            raise MissingCredentialError(self.name, " and ".join(missing))
        host, _, port = spec.smarthost.rpartition(":")
        self._spec = spec
        self._host, self._port = host, int(port)
        self._external_url = external_url
        self._clock = clock or SystemClock()
        self._language, self._timezone = language, timezone

    def message(self, n: Notification) -> EmailMessage:
        """The e-mail."""
        when = max((g.now for g in n.groups), default=None)
        when = self._clock.now() if when is None else when
        msg = EmailMessage()
        title = group_title if self._language == "en" else partial(localized_title, language=self._language)
        if n.kind == "digest" and n.notes:  # the digest's heading, not the title of its first alert
            subject = n.notes[0][:200]
        else:
            subject = "; ".join(title(g) for g in n.groups)[:200] or f"inferwatch {n.kind}"
        msg["Subject"] = " ".join(subject.split())  # a label's line break must not end the header
        msg["From"] = self._spec.from_
        msg["To"] = ", ".join(self._spec.to)
        msg["Date"] = format_datetime(datetime.fromtimestamp(when, UTC))
        msg["Message-ID"] = self._message_id(n, when)
        msg.set_content(notification_text(n, external_url=self._external_url, language=self._language,
                                          timezone=self._timezone))
        return msg

    def _message_id(self, n: Notification, when: float) -> str:
        parts = [n.receiver, n.kind, repr(when), *(g.key for g in n.groups)]
        seed = notification_id(n) or "\n".join(parts)
        domain = self._spec.from_.rpartition("@")[2].strip("<> ") or "inferwatch.localdomain"
        return f"<{hashlib.sha256(seed.encode()).hexdigest()[:32]}.inferwatch@{domain}>"

    def _context(self) -> ssl.SSLContext:
        try:
            return ssl.create_default_context(cafile=self._spec.ca_file or None)
        except (OSError, ssl.SSLError) as exc:  # a config problem: retrying will not help
            raise NotifyError(f"ca_file {self._spec.ca_file}: cannot load ({exc.__class__.__name__})",
                              retryable=False) from None

    def _connect(self) -> smtplib.SMTP:
        s = self._spec
        if s.uses_implicit_tls:
            return smtplib.SMTP_SSL(self._host, self._port, timeout=s.timeout, context=self._context())
        smtp = smtplib.SMTP(self._host, self._port, timeout=s.timeout)
        if not s.starttls:
            return smtp
        try:
            smtp.ehlo()
            if not smtp.has_extn("starttls"):
                raise NotifyError(f"{s.smarthost} does not offer STARTTLS; set starttls: false to send in "
                                  "clear", retryable=False)
            smtp.starttls(context=self._context())
        except BaseException:
            smtp.close()
            raise
        return smtp

    def notify(self, n: Notification) -> None:
        """Send; 4xx SMTP replies and connection failures are retryable, 5xx are not."""
        s = self._spec
        try:
            with self._connect() as smtp:
                if s.username and s.password is not None:
                    smtp.login(s.username, s.password.reveal())
                smtp.send_message(self.message(n))
        except smtplib.SMTPResponseException as exc:
            raise NotifyError(f"SMTP {exc.smtp_code}", retryable=400 <= exc.smtp_code < 500) from None
        except smtplib.SMTPRecipientsRefused:
            raise NotifyError("SMTP recipients refused", retryable=False) from None
        except ssl.SSLCertVerificationError as exc:
            msg = f"TLS: certificate not trusted ({exc.verify_message})"
            raise NotifyError(msg, retryable=False) from None
        except (OSError, smtplib.SMTPException) as exc:
            raise NotifyError(f"SMTP {exc.__class__.__name__}", retryable=True) from None
