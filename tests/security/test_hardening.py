"""Hardening checks of the project itself (REQ-SEC-020): no unsafe constructs, secrets that
redact themselves everywhere, a supply chain whose exceptions and actions are accounted for.

ruff's S rules already forbid most of these constructs; these tests are the belt to their
braces, independent of the linter's configuration and of any ``noqa``.
"""

from __future__ import annotations

import ast
import io
import json
import logging
import re
import tokenize
import tomllib
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from rypsok.config.secrets import Secret
from rypsok.engines.base import EngineQuery, EngineRequest
from rypsok.logs import JsonLineFormatter, log_event
from rypsok.privacy import CredentialCheck, CredentialMode

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src" / "rypsok"
MARKER = "s3cr3t-MARKER-9f2c1e7a"

pytestmark = pytest.mark.req("REQ-SEC-020")


# --- no unsafe constructs in project code ----------------------------------------------------

_FORBIDDEN_MODULES = frozenset({"pickle", "cPickle", "_pickle", "marshal", "shelve", "dill"})
_FORBIDDEN_CALLS = frozenset({"eval", "exec"})
_TEXT_PATTERNS = (
    re.compile(r"(?<![\w.])eval\s*\("),
    re.compile(r"(?<![\w.])exec\s*\("),
    re.compile(r"\bpickle\s*\.\s*loads?\b"),
    re.compile(r"\bmarshal\s*\.\s*loads\b"),
    re.compile(r"\bshell\s*=\s*True\b"),
    re.compile(r"\byaml\s*\.\s*(?:unsafe_)?load\s*\("),
)


def _sources() -> Iterator[Path]:
    yield from sorted(SRC.rglob("*.py"))


def _unsafe_nodes(tree: ast.AST) -> Iterator[tuple[int, str]]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in _FORBIDDEN_MODULES:
                    yield node.lineno, f"import {alias.name}"
        elif isinstance(node, ast.ImportFrom):
            if (node.module or "").split(".")[0] in _FORBIDDEN_MODULES:
                yield node.lineno, f"from {node.module} import"
        elif isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name) and func.id in _FORBIDDEN_CALLS:
                yield node.lineno, f"{func.id}()"
            if isinstance(func, ast.Name) and func.id == "__import__":
                yield node.lineno, "__import__()"
            if (
                isinstance(func, ast.Attribute)
                and func.attr in ("load", "unsafe_load")
                and isinstance(func.value, ast.Name)
                and func.value.id == "yaml"
            ):
                yield node.lineno, "yaml.load()"
            for keyword in node.keywords:
                if (
                    keyword.arg == "shell"
                    and isinstance(keyword.value, ast.Constant)
                    and keyword.value.value is True
                ):
                    yield node.lineno, "shell=True"


_SKIPPED_TOKENS = frozenset(
    getattr(tokenize, name)
    for name in ("STRING", "COMMENT", "FSTRING_START", "FSTRING_MIDDLE", "FSTRING_END")
    if hasattr(tokenize, name)
)


def _code_lines(text: str) -> Iterator[tuple[int, str]]:
    """Lines of code without comments and string literals (docstrings mention the words)."""
    kept: dict[int, list[str]] = {}
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type in _SKIPPED_TOKENS:
            continue
        kept.setdefault(token.start[0], []).append(token.string)
    for number, parts in sorted(kept.items()):
        yield number, " ".join(parts)


def test_thr36_no_unsafe_constructs_in_project_code() -> None:
    """No eval/exec, pickle, marshal, shell=True or yaml.load anywhere in src/ (AST and text).

    Proves THR-36.
    """
    found: list[str] = []
    for path in _sources():
        text = path.read_text(encoding="utf-8")
        tree = ast.parse(text, filename=str(path))
        found += [f"{path.relative_to(ROOT)}:{n}: {what}" for n, what in _unsafe_nodes(tree)]
        for number, line in _code_lines(text):
            for pattern in _TEXT_PATTERNS:
                if pattern.search(line.replace(" ( ", "(").replace(" (", "(")):
                    found.append(f"{path.relative_to(ROOT)}:{number}: {pattern.pattern}")
    assert found == []


def test_thr36_the_scanner_catches_what_it_forbids() -> None:
    """The AST scan is not vacuous: each forbidden construct in a sample is reported.

    Proves THR-36.
    """
    sample = (
        "import pickle\nfrom marshal import loads\neval('1')\nexec('x=1')\n"
        "subprocess.run('ls', shell=True)\nyaml.load(data)\n"
    )
    kinds = {what for _, what in _unsafe_nodes(ast.parse(sample))}
    assert kinds == {
        "import pickle",
        "from marshal import",
        "eval()",
        "exec()",
        "shell=True",
        "yaml.load()",
    }


# --- secrets redact themselves ---------------------------------------------------------------


def _secret() -> object:
    return Secret(MARKER)


def _engine_request() -> object:
    return EngineRequest(
        method="POST",
        url=f"https://api.example.org/search?key={MARKER}",
        headers=(("X-Api-Key", MARKER),),
        body=f'{{"token": "{MARKER}"}}'.encode(),
        credential_headers=frozenset({"x-api-key"}),
    )


def _engine_query() -> object:
    from rypsok.contract.vocabulary import SafeSearch

    return EngineQuery(
        text="a query",
        endpoint="https://api.example.org/",
        count=10,
        language="en",
        time_range=None,
        region="",
        safe_search=next(iter(SafeSearch)),
        credential=Secret(MARKER),
    )


def _credential_verdict() -> object:
    # A GitHub token built around the marker: what the verdict must never show.
    token = "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5"
    verdict = CredentialCheck(CredentialMode.WARN).apply(f"{MARKER} {token}")
    assert verdict.text is not None and MARKER in verdict.text
    return verdict


def _engine_proxy() -> object:
    # As [egress] engine_proxy_auth_env / _file resolve: "user:password" in a Secret.
    from rypsok.egress.addresses import AddressPolicy
    from rypsok.egress.proxy import EngineProxy, parse_engine_proxy

    proxy = parse_engine_proxy("http://127.0.0.1:3128", AddressPolicy())
    return EngineProxy(proxy.url, Secret(f"svc:{MARKER}"))


def _redis_link() -> object:
    pytest.importorskip("redis")
    from rypsok.cache.redis_link import connect
    from rypsok.health.clock import SystemClock

    return connect(
        Secret(f"redis://user:{MARKER}@127.0.0.1:6399/0"),
        clock=SystemClock(),
        logger=logging.getLogger("rypsok.test"),
    )


HOLDERS: dict[str, Callable[[], object]] = {
    "Secret": _secret,
    "EngineRequest": _engine_request,
    "EngineQuery.credential": _engine_query,
    "CredentialVerdict": _credential_verdict,
    "EngineProxy (engine proxy credentials)": _engine_proxy,
    "RedisLink (cache Redis URL)": _redis_link,
}


def _renderings(value: object) -> Iterator[tuple[str, str]]:
    yield "repr", repr(value)
    yield "str", str(value)
    yield "f-string", f"{value}"
    yield "f-string !r", f"{value!r}"
    yield "format spec", format(value, "")
    yield "percent", "%s %r" % (value, value)  # noqa: UP031 - the old operator is what is tested
    yield "json default=str", json.dumps({"v": value}, default=str)
    yield "list repr", repr([value, (value,)])
    try:
        raise ValueError(value)
    except ValueError as error:
        yield "exception str", str(error)
        yield "traceback", "".join(traceback.format_exception(error))


def _log_lines(value: object) -> Iterator[tuple[str, str]]:
    logger = logging.getLogger("rypsok.test.redaction")
    logger.propagate = False
    logger.setLevel(logging.DEBUG)
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonLineFormatter())
    logger.handlers[:] = [handler]
    try:
        log_event(logger, logging.INFO, "event", held=value)
        logger.info("message %s %r", value, value)
        try:
            raise RuntimeError(value)
        except RuntimeError:
            logger.exception("failed")
    finally:
        logger.handlers[:] = []
    yield "JsonLineFormatter", stream.getvalue()


@pytest.mark.thr("THR-31")
@pytest.mark.parametrize("holder", sorted(HOLDERS))
def test_thr31_types_holding_secrets_redact_them_everywhere(holder: str) -> None:
    """repr, str, f-strings, %-formatting, JSON, exception messages, tracebacks and the JSON
    log formatter never show the secret a type holds.

    Proves THR-31.
    """
    value = HOLDERS[holder]()
    for how, text in [*_renderings(value), *_log_lines(value)]:
        assert MARKER not in text, f"{holder} shows its secret through {how}"


def test_thr31_a_secret_cannot_be_pickled_or_copied_out() -> None:
    """A Secret refuses pickling (a pickle would carry the value to disk or another process).

    Proves THR-31.
    """
    import copyreg

    with pytest.raises(TypeError):
        Secret(MARKER).__reduce__()
    with pytest.raises(TypeError):
        copyreg.__reduce_ex__(Secret(MARKER), 2)  # type: ignore[attr-defined]
    assert Secret(MARKER).reveal() == MARKER


def test_thr31_settings_hold_references_not_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    """The validated configuration keeps only the *name* of a secret's variable or file.

    Proves THR-31.
    """
    from rypsok.config.load import parse_settings

    monkeypatch.setenv("RYPSOK_TEST_KEY", MARKER)
    settings = parse_settings(
        {"schema_version": 1, "engines": {"github": {"api_key_env": "RYPSOK_TEST_KEY"}}}
    )
    assert MARKER not in repr(settings)
    assert MARKER not in settings.model_dump_json()


# --- supply chain ----------------------------------------------------------------------------


@pytest.mark.thr("THR-37")
def test_thr37_license_exceptions_carry_their_reason() -> None:
    """Every license exception names its license and why it is acceptable.

    Proves THR-37.
    """
    policy = tomllib.loads((ROOT / "requirements" / "licenses.toml").read_text(encoding="utf-8"))
    assert policy["allowed"], "the allow-list is empty"
    for name, reason in policy.get("exceptions", {}).items():
        assert isinstance(reason, str), f"exception {name}: the reason must be text"
        assert ":" in reason and len(reason) >= 30, f"exception {name}: '<license>: <why>'"


_USES = re.compile(r"^\s*(?:-\s*)?uses:\s*(?P<ref>\S+)", re.MULTILINE)


@pytest.mark.thr("THR-37")
def test_thr37_every_workflow_action_is_pinned_to_a_commit() -> None:
    """Every action a workflow uses is pinned to a full 40-hex commit (REQ-SEC-020).

    Proves THR-37.
    """
    workflows = sorted((ROOT / ".github" / "workflows").glob("*.y*ml"))
    assert workflows, "no workflow to check"
    for workflow in workflows:
        for match in _USES.finditer(workflow.read_text(encoding="utf-8")):
            ref = match.group("ref").strip("'\"")
            if ref.startswith("./"):
                continue  # a local action is pinned by the commit itself
            assert re.fullmatch(r"[\w.\-]+/[\w.\-/]+@[0-9a-f]{40}", ref), (
                f"{workflow.name}: {ref} is not pinned to a full commit hash"
            )
