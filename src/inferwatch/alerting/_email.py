"""E-mail over SMTP (plain or STARTTLS, optional login)."""

from __future__ import annotations

import smtplib
from email.message import EmailMessage

from inferwatch._exceptions import NotifyError
from inferwatch.alerting._notification import Notification
from inferwatch.alerting._template import group_title, notification_text
from inferwatch.config._receivers import EmailReceiverSpec

__all__ = ["EmailNotifier"]


class EmailNotifier:
    """One message per notification to every address in ``to``."""

    def __init__(self, spec: EmailReceiverSpec, external_url: str = "") -> None:
        if not spec.smarthost or not spec.to:
            raise ValueError("an e-mail receiver needs smarthost and to")
        host, _, port = spec.smarthost.rpartition(":")
        if not host or not port.isdigit():
            raise ValueError(f"smarthost must be host:port, got {spec.smarthost!r}")
        self.name = f"email[{spec.name}]"
        self._spec = spec
        self._host, self._port = host, int(port)
        self._external_url = external_url

    def message(self, n: Notification) -> EmailMessage:
        """The e-mail."""
        msg = EmailMessage()
        msg["Subject"] = "; ".join(group_title(g) for g in n.groups)[:200]
        msg["From"] = self._spec.from_
        msg["To"] = ", ".join(self._spec.to)
        msg.set_content(notification_text(n, external_url=self._external_url))
        return msg

    def notify(self, n: Notification) -> None:
        """Send; 4xx SMTP replies and connection failures are retryable, 5xx are not."""
        s = self._spec
        try:
            with smtplib.SMTP(self._host, self._port, timeout=s.timeout) as smtp:
                if s.starttls:
                    smtp.starttls()
                if s.username and s.password is not None:
                    smtp.login(s.username, s.password.reveal())
                smtp.send_message(self.message(n))
        except smtplib.SMTPResponseException as exc:
            raise NotifyError(f"SMTP {exc.smtp_code}", retryable=400 <= exc.smtp_code < 500) from None
        except smtplib.SMTPRecipientsRefused:
            raise NotifyError("SMTP recipients refused", retryable=False) from None
        except (OSError, smtplib.SMTPException) as exc:
            raise NotifyError(f"SMTP {exc.__class__.__name__}", retryable=True) from None
