"""The egress component: the only code in rypsok that opens sockets (REQ-SEC-005).

Public API (one entry point, :class:`Egress`)::

    egress = Egress(settings, user_agent, extra_allow=(), ssl_context=None)

    # agent-directed profile (web_fetch, robots.txt), one hop per call
    checked: CheckedURL = egress.check_url(url, allow_http=False)        # no network
    response: FetchedResponse = await egress.get(
        checked, accept="text/html", max_bytes=..., connect_timeout_s=..., total_timeout_s=...
    )

    # engine profile
    engine_response: EngineResponse = await egress.engine_request(
        request, endpoint=..., explicit_endpoint=False,
        connect_timeout_s=..., total_timeout_s=..., max_bytes=...,
    )

    await egress.aclose()

Every refusal or failure is an :class:`EgressError` with an :class:`EgressReason`.

Modules: :mod:`.addresses` (the address and name table, operator rules), :mod:`.urls` (the
strict URL parser), :mod:`.resolver` (complete answer sets), :mod:`.transport` (connections
pinned to checked addresses), :mod:`.decoding` (bounded decompression), :mod:`.client` (one
bounded exchange), :mod:`.proxy` (``[egress] engine_proxy``, engine requests only),
:mod:`.gateway` (the two profiles).
"""

from rypsok.egress.errors import EgressError, EgressReason
from rypsok.egress.gateway import Egress, FetchedResponse
from rypsok.egress.urls import CheckedURL

__all__ = ["CheckedURL", "Egress", "EgressError", "EgressReason", "FetchedResponse"]
