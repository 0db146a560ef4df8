"""A small HTTP client of the phone pages' JSON API (as a phone's browser uses it).

Keeps cookies (join tokens, the CSRF token), sends the CSRF double-submit header on commands.
Used by the end-to-end tests and the e2e benchmark; standard library only.
"""

from __future__ import annotations

import http.cookiejar
import json
import urllib.error
import urllib.request
from typing import Any


class WebError(RuntimeError):
    """An HTTP error answer: ``status`` and the page's JSON ``error`` message."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"HTTP {status}: {message}")
        self.status = status
        self.message = message


class PhoneClient:
    """One phone: its own cookie jar. ``join(token)`` follows a join link (player or host)."""

    def __init__(self, base_url: str, timeout_s: float = 10.0) -> None:
        self.base = base_url.rstrip("/")
        self.timeout_s = timeout_s
        self.jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar))

    def _cookie(self, name: str) -> str | None:
        for c in self.jar:
            if c.name == name:
                return c.value
        return None

    def get(self, path: str) -> tuple[int, bytes]:
        try:
            with self.opener.open(self.base + path, timeout=self.timeout_s) as resp:
                return resp.status, resp.read()
        except urllib.error.HTTPError as exc:
            with exc:  # the error answer holds the connection: read it and give it back
                return exc.code, exc.read()

    def open_page(self, path: str = "/") -> int:
        """Load a page (sets the CSRF cookie as a browser would)."""
        return self.get(path)[0]

    def join(self, token: str) -> int:
        return self.get(f"/join/{token}")[0]

    def state(self, audience: str = "public") -> dict[str, Any]:
        """``GET /api/state?as=…`` as JSON. :raises WebError: on an error status."""
        status, body = self.get(f"/api/state?as={audience}")
        if status != 200:
            raise WebError(status, body.decode("utf-8", "replace"))
        data: dict[str, Any] = json.loads(body)
        return data

    def command(self, command: dict[str, Any], audience: str = "host") -> dict[str, Any]:
        """``POST /api/command?as=…`` with the CSRF header. :raises WebError: 4xx/5xx."""
        if self._cookie("wt_csrf") is None:
            self.open_page("/")
        token = self._cookie("wt_csrf") or ""
        req = urllib.request.Request(
            f"{self.base}/api/command?as={audience}",
            data=json.dumps(command).encode(),
            headers={"Content-Type": "application/json", "X-CSRF-Token": token},
            method="POST",
        )
        try:
            with self.opener.open(req, timeout=self.timeout_s) as resp:
                data: dict[str, Any] = json.loads(resp.read())
                return data
        except urllib.error.HTTPError as exc:
            with exc:  # the error answer holds the connection: read it and give it back
                body = exc.read().decode("utf-8", "replace")
            try:
                message = json.loads(body).get("error", body)
            except ValueError:
                message = body
            raise WebError(exc.code, message) from None
