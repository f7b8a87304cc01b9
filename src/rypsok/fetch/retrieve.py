"""Retrieval of one page under the agent-directed profile (REQ-PAGE-001 up to the bytes).

Order per hop: the URL check without network, strict mode, robots.txt, then one GET through
the egress component (which resolves, judges the complete answer set, pins the connection and
bounds the body as it is decompressed). Same-host redirects are followed up to LIM-F7, each hop
checked again (REQ-SEC-008); another host ends the call with ``redirected`` when the target
passes the policy and ``denied`` (target withheld) when it does not (REQ-FETCH-006). An http
URL is fetched as https unless the operator allows http (REQ-FETCH-010). Non-2xx answers end
the call with ``unavailable``/``http_status`` and never their body (REQ-FETCH-011). An anti-bot
check served in place of the page or of its robots.txt, whatever the status (AWS WAF answers
one with 202), ends the call with ``unavailable``/``bot_challenge``: rypsok runs no scripts, so
only another URL can help, and the check's page is never read as the page's content.

Strict mode (REQ-SEC-021, :mod:`rypsok.fetch.strict`) judges the URL given and every redirect
hop: a hop on the same host as the URL it came from is followed as in any mode (the site moving
a page it was allowed to serve), a hop to another host must be a returned URL or match
``[fetch] strict_allow``, else the call ends with ``denied`` / ``strict_mode`` before anything
is sent there and without disclosing the target (a second call could not fetch it either).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass, field

from rypsok.config.schema import FetchSettings
from rypsok.contract.errors import ErrorDetail, ToolFailure
from rypsok.contract.notices import Notice, notice
from rypsok.contract.vocabulary import Access, ErrorKind, NoticeCode, Reason
from rypsok.egress.errors import POLICY_REASONS, EgressError, EgressReason
from rypsok.egress.gateway import Egress, FetchedResponse
from rypsok.egress.urls import CheckedURL, resolve_reference
from rypsok.engines.base import is_bot_challenge, parse_retry_after
from rypsok.fetch.access import classify_access
from rypsok.fetch.body import Body
from rypsok.fetch.hosts import FetchSlots
from rypsok.fetch.memory import TRIM_AFTER_BYTES, trim
from rypsok.fetch.robots import RobotsPolicy, Verdict
from rypsok.fetch.strict import HostRules, ReturnedURLs
from rypsok.logs import log_event

ACCEPT = (
    "text/html,application/xhtml+xml,text/markdown,text/plain;q=0.9,"
    "application/rss+xml,application/atom+xml,application/xml;q=0.8,*/*;q=0.1"
)
URL_MAX_CHARS = 2048  # LIM-F9
_RETRY_HELPS = frozenset({408, 425, 429})


@dataclass(slots=True)
class Retrieved:
    """The final hop's answer and what happened on the way.

    ``url`` is the URL fetched, ``status`` and ``headers`` (lower-cased names) the response's;
    ``body`` goes to extraction, which lets go of it once a worker has it (REQ-PERF-003), so
    nothing here keeps the response itself.
    """

    url: str
    status: int
    headers: Mapping[str, str]
    body: Body
    fragment: str | None
    redirected: bool
    notices: list[Notice] = field(default_factory=list)


def _denied(reason: Reason, message: str) -> ToolFailure:
    return ToolFailure(ErrorKind.DENIED, reason, message)


def _policy_failure(error: EgressError, *, limit_bytes: int | None = None) -> ToolFailure:
    """The tool error of an egress refusal or failure; never names a resolved address."""
    reason = error.reason
    if reason == EgressReason.INVALID_URL:
        return ToolFailure(
            ErrorKind.INVALID_REQUEST,
            Reason.INVALID_ARGUMENT,
            "The url is not a valid, unambiguous http(s) URL; send it in plain form.",
            ErrorDetail(parameter="url"),
        )
    if reason == EgressReason.CREDENTIALS_IN_URL:
        return _denied(
            Reason.CREDENTIALS_IN_URL,
            "The url carries credentials, which rypsok never sends; remove them.",
        )
    if reason == EgressReason.SCHEME:
        return _denied(
            Reason.SCHEME,
            "Only https URLs can be fetched (http where the operator allows it); use another URL.",
        )
    if reason in POLICY_REASONS:
        return _denied(
            Reason.EGRESS_POLICY,
            "The destination is not allowed by the egress "
            "policy (private, local or reserved address, port "
            "or name); use a public URL.",
        )
    if reason == EgressReason.TIMEOUT:
        return ToolFailure(
            ErrorKind.UNAVAILABLE,
            Reason.TIMEOUT,
            "The site did not answer in time; retry later or use another URL.",
        )
    if reason == EgressReason.TOO_LARGE:
        return ToolFailure(
            ErrorKind.TOO_LARGE,
            Reason.BODY_TOO_LARGE,
            "The page is larger than rypsok reads; use another URL.",
            ErrorDetail(limit_bytes=limit_bytes),
        )
    if reason == EgressReason.DNS_FAILURE:
        return ToolFailure(
            ErrorKind.UNAVAILABLE,
            Reason.DNS_FAILURE,
            "The host name could not be resolved; check the URL.",
        )
    return ToolFailure(
        ErrorKind.UNAVAILABLE,
        Reason.CONNECTION_FAILED,
        "The connection to the site failed; retry later or use another URL.",
    )


def _status_failure(response: FetchedResponse, *, redirected: bool) -> ToolFailure:
    status = response.status
    helps = status in _RETRY_HELPS or status >= 500
    retry_after = parse_retry_after(response.headers.get("retry-after")) if helps else None
    # A 401 or an authentication challenge is a direct signal of restricted access (ADR-0005);
    # the classifier decides, from the status and headers only (the body is never read here).
    restricted = (
        classify_access(
            status=status,
            headers=response.headers,
            url=response.url.url,
            redirected=redirected,
            signals=None,
        ).access
        is Access.RESTRICTED
    )
    if restricted:
        message = (
            f"The site answered HTTP {status} and asks for authentication; rypsok sends no "
            "credentials, so calling again with the same URL will not help."
        )
    elif helps:
        message = f"The site answered HTTP {status}; retrying later may help."
    else:
        message = f"The site answered HTTP {status}; calling again with the same URL will not help."
    return ToolFailure(
        ErrorKind.UNAVAILABLE,
        Reason.HTTP_STATUS,
        message,
        ErrorDetail(
            status=status,
            retry_after_ms=int(retry_after * 1000) if retry_after is not None else None,
            access=Access.RESTRICTED if restricted else None,
        ),
    )


def _bot_challenge_failure(status: int | None) -> ToolFailure:
    """The site served an anti-bot check (``status``: the page's, None for its robots.txt)."""
    return ToolFailure(
        ErrorKind.UNAVAILABLE,
        Reason.BOT_CHALLENGE,
        "The site answered with an anti-bot check (a script to run or a CAPTCHA to solve) "
        "instead of the page; rypsok runs no scripts, so calling again with the same URL will "
        "not help. Look for the content at another URL.",
        ErrorDetail(status=status) if status is not None else None,
    )


class Retriever:
    """Fetches one page for web_fetch."""

    def __init__(
        self,
        *,
        egress: Egress,
        robots: RobotsPolicy | None,
        slots: FetchSlots,
        returned: ReturnedURLs,
        settings: FetchSettings,
        logger: logging.Logger,
    ) -> None:
        self._egress = egress
        self._robots = robots
        self._slots = slots
        self._returned = returned
        self._strict_allow = HostRules(settings.strict_allow)
        self._settings = settings
        self._logger = logger

    def check(self, url: str) -> CheckedURL:
        """The network-free check of a URL (raises :class:`ToolFailure`)."""
        try:
            return self._egress.check_url(url, allow_http=True)
        except EgressError as error:
            raise _policy_failure(error, limit_bytes=self._settings.max_body_bytes) from None

    def _strict_accepts(self, raw_url: str, url: CheckedURL) -> bool:
        """Strict mode's verdict on one URL: returned earlier, or its host allowed."""
        return raw_url in self._returned or self._strict_allow.matches(url.host)

    def _upgrade(self, url: CheckedURL) -> CheckedURL:
        port = "" if url.port == 80 else f":{url.port}"
        host = f"[{url.host}]" if ":" in url.host else url.host
        return self.check(f"https://{host}{port}{url.target}")

    async def retrieve(self, raw_url: str, *, deadline: float) -> Retrieved:
        """Fetch ``raw_url`` by the rules above; ``deadline`` is a time.monotonic() value."""
        url = self.check(raw_url)
        fragment = url.fragment
        notices: list[Notice] = []
        if self._settings.strict and not self._strict_accepts(raw_url, url):
            raise _denied(
                Reason.STRICT_MODE,
                "This service fetches only URLs it returned from web_search and hosts the "
                "operator allows; search first, then fetch a result.",
            )
        upgraded = False
        if url.scheme == "http" and not self._settings.allow_http:
            url = self._upgrade(url)
            upgraded = True
            notices.append(notice(NoticeCode.FETCHED_OVER_HTTPS))
        hops = 0
        async with self._slots.slot(url.host, deadline - time.monotonic()) as got:
            if not got:
                raise ToolFailure(
                    ErrorKind.UNAVAILABLE,
                    Reason.CAPACITY,
                    "Too many fetches are in progress; retry shortly.",
                )
            while True:
                response = await self._hop(url, deadline, upgraded=upgraded and hops == 0)
                location = response.location
                if location is None:
                    break
                target = self._redirect_target(url, location)
                hops += 1
                if hops > self._settings.max_redirects:
                    raise ToolFailure(
                        ErrorKind.UNAVAILABLE,
                        Reason.HTTP_STATUS,
                        "The page redirects too many times; use another URL.",
                        ErrorDetail(status=response.status),
                    )
                url = target
        if hops:
            notices.append(notice(NoticeCode.REDIRECT_FOLLOWED, count=hops))
        if is_bot_challenge(response.headers):
            raise _bot_challenge_failure(response.status)
        if not 200 <= response.status < 300:
            raise _status_failure(response, redirected=hops > 0)
        if len(response.body) >= TRIM_AFTER_BYTES:
            # The chunks the body arrived in are free now; their pages go back (REQ-PERF-003).
            trim()
        return Retrieved(
            url=response.url.url,
            status=response.status,
            headers=response.headers,
            body=Body(response.body),
            fragment=fragment,
            redirected=hops > 0,
            notices=notices,
        )

    def _redirect_target(self, current: CheckedURL, location: str) -> CheckedURL:
        try:
            target = self._egress.check_url(
                resolve_reference(current.url, location), allow_http=True
            )
        except EgressError:
            raise _denied(
                Reason.EGRESS_POLICY,
                "The page redirects to a destination the egress policy does not allow.",
            ) from None
        if target.scheme == "http" and not self._settings.allow_http:
            raise _denied(
                Reason.SCHEME,
                "The page redirects to plain http, which is not allowed; use another URL.",
            )
        if target.host == current.host:
            return target
        if self._settings.strict and not self._strict_accepts(target.url, target):
            raise _denied(
                Reason.STRICT_MODE,
                "The page redirects to another host, which this service does not fetch in "
                "strict mode; use another result.",
            )
        if self._settings.follow_cross_host_redirects:
            return target
        location_url = target.url + (f"#{target.fragment}" if target.fragment else "")
        if len(location_url) > URL_MAX_CHARS:
            # A cut URL names a resource the site never gave: withhold it (REQ-SEC-001).
            raise _denied(
                Reason.EGRESS_POLICY,
                "The page redirects to another host with a URL longer than rypsok returns; "
                "use another URL.",
            )
        raise ToolFailure(
            ErrorKind.REDIRECTED,
            Reason.CROSS_HOST_REDIRECT,
            "The page redirects to another host; call web_fetch with detail.location if you "
            "want it.",
            ErrorDetail(location=location_url),
        )

    async def _hop(self, url: CheckedURL, deadline: float, *, upgraded: bool) -> FetchedResponse:
        left = deadline - time.monotonic()
        if left <= 0:
            raise _policy_failure(EgressError(EgressReason.TIMEOUT))
        try:
            if self._robots is not None:
                verdict = await self._robots.verdict(
                    url,
                    deadline_s=deadline,
                    connect_timeout_s=self._settings.connect_timeout_ms / 1000,
                )
                if verdict is Verdict.UNREACHABLE and upgraded:
                    # The site did not answer over https at all: the upgrade failed.
                    raise EgressError(EgressReason.CONNECT_FAILED)
                if verdict is Verdict.BOT_CHALLENGE:
                    raise _bot_challenge_failure(None)
                if verdict is not Verdict.ALLOWED:
                    raise _denied(
                        Reason.ROBOTS_TXT,
                        "The site's robots.txt does not allow rypsok to fetch this URL (or the "
                        "site did not answer for it); use another source.",
                    )
            left = deadline - time.monotonic()
            response = await self._egress.get(
                url,
                accept=ACCEPT,
                max_bytes=self._settings.max_body_bytes,
                connect_timeout_s=min(self._settings.connect_timeout_ms / 1000, max(left, 0.01)),
                total_timeout_s=max(min(self._settings.total_timeout_ms / 1000, left), 0.01),
            )
        except EgressError as error:
            if upgraded and error.reason not in POLICY_REASONS:
                raise _denied(
                    Reason.SCHEME,
                    "The http URL could not be fetched over https, and "
                    "plain http is not allowed; use another URL.",
                ) from None
            raise _policy_failure(error, limit_bytes=self._settings.max_body_bytes) from None
        log_event(
            self._logger,
            logging.INFO,
            "fetch_hop",
            host=url.host,
            status=response.status,
            bytes=len(response.body),
        )
        return response
