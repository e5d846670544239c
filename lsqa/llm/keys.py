"""Cache keys and secret hygiene: what identifies a call, and what must never be stored."""

from __future__ import annotations

import hashlib
import json
import os
import re
import threading
import uuid
from collections import OrderedDict
from typing import Mapping, Sequence

from lsqa.llm.types import LLMRequest
from lsqa.text.prompt_parts import canonical_json, find_contexts

OFFLINE_PROVIDERS = ("lsqa", "local")

# Settings that change how a request travels, not what it asks: left out of the cache key.
TRANSPORT_PARAMS = frozenset(
    {
        "api_base", "base_url", "api_key", "api_version", "organization", "timeout", "request_timeout",
        "stream_timeout", "num_retries", "max_retries", "extra_headers", "headers", "metadata",
        "aws_access_key_id", "aws_secret_access_key", "aws_session_token", "aws_region_name",
        "vertex_project", "vertex_location", "vertex_credentials", "azure_ad_token",
    }
)
# Parameter names that may hold a secret: never stored (their value is sent, of course).
_SECRET_PARAM = re.compile(r"api_key|secret|password|credential|session_token|ad_token|access_key|authorization|^headers$|^extra_headers$", re.I)
# Key-looking strings in provider error text (the exact values of secret env variables are removed too).
_SECRET_TEXT = (
    re.compile(r"\b(?:sk|pk|rk)-[A-Za-z0-9_\-]{8,}"),
    re.compile(r"\bAIza[0-9A-Za-z_\-]{20,}"),
    re.compile(r"\b(?:hf|gsk|xai|ghp|gho|glpat)[_-][A-Za-z0-9_\-]{16,}"),
    re.compile(r"(?i)\bbearer\s+[A-Za-z0-9._~+/\-]+=*"),
    re.compile(r"(?i)\b((?:api[_-]?)?key|token|secret|password)(\s*[=:]\s*)['\"]?[^\s'\"&,;]{6,}"),
)
_SECRET_ENV = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL", re.I)

# ---------------------------------------------------------------------------------------------
# Keys, parameters, secrets
# ---------------------------------------------------------------------------------------------


def semantic_params(params: Mapping) -> dict:
    """The parameters that shape the completion (what the cache key covers)."""
    return {k: v for k, v in params.items() if k not in TRANSPORT_PARAMS}


def cache_key(request: LLMRequest) -> str:
    """sha256 of the canonical JSON of (model, messages, parameters without transport settings).

    A request naming its long contexts (a book) gets the same key, computed without encoding the
    book again: the JSON form of a string is the concatenation of the JSON forms of its pieces,
    so the book's encoded bytes are kept per process (``_encoded``) and, when the bytes before it
    are the same as in an earlier request (context-first prompts, or one question's pairs), the
    hash state after it too (``_states``). A paper-scale plan makes 5,600 full-book keys; encoding
    the 3.3 MB book for each was most of the plan (docs/benchmarks-log/2026-11-30-paper-scale.md)."""
    params = semantic_params(request.params)
    if request.contexts:
        key = _key_by_pieces(request.model, request.messages, params, request.contexts)
        if key is not None:
            return key
    payload = canonical_json({"model": request.model, "messages": request.messages, "params": params})
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


_MEMO_MIN_CHARS = 65_536   # shorter contexts are cheap to encode again
_MEMO_SIZE = 16
_NONCE = f"lsqa-context-{uuid.uuid4().hex}"  # stands for a message's content while the rest is encoded
_memo_lock = threading.Lock()
_encoded: OrderedDict[str, bytes] = OrderedDict()            # context → its JSON-escaped UTF-8 bytes
_states: OrderedDict[tuple[bytes, str], object] = OrderedDict()  # (digest before, context) → sha256 after it


def _json_inner(text: str) -> bytes:
    """``text`` as it appears inside a JSON string of :func:`canonical_json`, without the quotes."""
    return json.dumps(text, ensure_ascii=False)[1:-1].encode("utf-8")


def _remember(memo: OrderedDict, key, value) -> None:
    with _memo_lock:
        memo[key] = value
        memo.move_to_end(key)
        while len(memo) > _MEMO_SIZE:
            memo.popitem(last=False)


def _recall(memo: OrderedDict, key):
    with _memo_lock:
        found = memo.get(key)
        if found is not None:
            memo.move_to_end(key)
        return found


def _key_by_pieces(model: str, messages: list[dict], params: dict, contexts: Sequence[str]) -> str | None:
    """:func:`cache_key` of a request whose message contents hold ``contexts``, or None when the
    pieces cannot stand for the whole (then the caller encodes it whole)."""
    placed, pieces = [], []
    for i, message in enumerate(messages):
        content = message.get("content")
        spans = find_contexts(content, contexts) if isinstance(content, str) else []
        if any(end - start >= _MEMO_MIN_CHARS for start, end, _ in spans):
            mark = f"{_NONCE}-{i}"
            placed.append({**message, "content": mark})
            pieces.append((mark, content, spans))
        else:
            placed.append(message)
    if not pieces:
        return None
    payload = canonical_json({"model": model, "messages": placed, "params": params})
    hasher = hashlib.sha256()
    pos = 0
    for mark, content, spans in pieces:  # the messages come first in the payload, in order
        quoted = json.dumps(mark)
        at = payload.find(quoted, pos)
        if at < 0 or payload.count(quoted) != 1:
            return None
        hasher.update(payload[pos:at].encode("utf-8") + b'"')
        cut = 0
        for start, end, context in spans:
            hasher.update(_json_inner(content[cut:start]))
            hasher = _through(hasher, context)  # the caller's string: its hash is computed once
            cut = end
        hasher.update(_json_inner(content[cut:]) + b'"')
        pos = at + len(quoted)
    hasher.update(payload[pos:].encode("utf-8"))
    return hasher.hexdigest()


def _through(hasher, context: str):
    """``hasher`` after the JSON form of ``context``, from the memos when this context followed
    the same bytes before."""
    if len(context) < _MEMO_MIN_CHARS:
        hasher.update(_json_inner(context))
        return hasher
    state_key = (hasher.digest(), context)
    after = _recall(_states, state_key)
    if after is None:
        encoded = _recall(_encoded, context)
        if encoded is None:
            encoded = _json_inner(context)
            _remember(_encoded, context, encoded)
        hasher.update(encoded)
        _remember(_states, state_key, hasher.copy())
        return hasher
    return after.copy()


def secret_env_values() -> list[str]:
    return sorted(
        {v for k, v in os.environ.items() if _SECRET_ENV.search(k) and v and len(v) >= 8},
        key=len,
        reverse=True,
    )


def scrub(text: str, env_values: Sequence[str] | None = None) -> str:
    """``text`` with API-key-looking strings and the values of secret env variables removed."""
    if not text:
        return text
    for value in secret_env_values() if env_values is None else env_values:
        text = text.replace(value, "[redacted]")
    for pattern in _SECRET_TEXT:
        if pattern.groups >= 2:
            text = pattern.sub(lambda m: m.group(1) + m.group(2) + "[redacted]", text)
        else:
            text = pattern.sub("[redacted]", text)
    return text


def storable_params(params: Mapping) -> dict:
    """Parameters as stored with a call: secret-bearing settings dropped."""
    return {k: v for k, v in params.items() if not _SECRET_PARAM.search(k)}


def remove_env_secrets(text: str | None, env_values: Sequence[str]) -> str | None:
    if not text:
        return text
    for value in env_values:
        if value in text:
            text = text.replace(value, "[redacted]")
    return text


def provider_of(model: str) -> str:
    return model.split("/", 1)[0] if "/" in model else ""


# ---------------------------------------------------------------------------------------------


# ---------------------------------------------------------------------------------------------
# Secrets written into files (run configs, settings): refused, so they are never stored
# ---------------------------------------------------------------------------------------------

# Words that make a setting's or a header's name a credential ("X-Auth", "api-key", "Authorization"):
# anywhere in the name, or (for words that also name harmless things, "stop_token_ids") at its end.
_SECRET_WORDS = frozenset({"auth", "authorization", "apikey", "secret", "password", "passwd", "cookie",
                           "credential", "credentials", "bearer"})
_SECRET_LAST_WORDS = frozenset({"token", "key", "pwd", "signature", "sig", "session"})
_URL_KEYS = frozenset({"api_base", "base_url", "api_bases", "base_urls", "url", "endpoint"})
_HEADER_KEYS = frozenset({"headers", "extra_headers", "default_headers"})
USE_ENVIRONMENT = ("remove it from the file: API keys and other credentials come only from the environment "
                   "(e.g. OPENAI_API_KEY, HOSTED_VLLM_API_KEY), where litellm reads them")


def is_secret_name(name: str) -> bool:
    """``api_key``, ``X-Auth-Token``, ``Authorization``, ``client_secret``: names of credentials."""
    words = [w for w in re.split(r"[-_.\s]+", str(name).lower()) if w]
    return bool(set(words) & _SECRET_WORDS) or bool(words and words[-1] in _SECRET_LAST_WORDS) or bool(_SECRET_PARAM.search(str(name)) and str(name).lower()
                                                not in ("headers", "extra_headers"))


def _url_secret(url: str) -> str | None:
    from urllib.parse import parse_qsl, urlsplit

    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return None
    if parts.username or parts.password:
        return "holds a user name or password"
    if any(is_secret_name(name) for name, _ in parse_qsl(parts.query, keep_blank_values=True)):
        return "holds a credential in its query string"
    return None


def secret_in_setting(name: str, value, *, scan_values: bool = False) -> str | None:
    """Why ``name = value`` (from a file) holds a credential, or None. Never quotes the value.

    Checks names (``api_key``, a header ``X-Auth``), URLs (``http://user:sk-…@host``,
    ``?api_key=…``) and, with ``scan_values``, any text that looks like a key (``sk-…``, ``Bearer …``).
    """
    leaf = str(name).rsplit(".", 1)[-1].split("[", 1)[0]
    if leaf.lower() in _HEADER_KEYS and isinstance(value, dict):
        for header in value:
            if is_secret_name(header):
                return f"'{name}': the header '{header}' is a credential; {USE_ENVIRONMENT}"
    elif is_secret_name(leaf) and leaf.lower() not in _HEADER_KEYS:
        return f"'{name}': a credential; {USE_ENVIRONMENT}"
    if leaf.lower() in _URL_KEYS:
        for url in value if isinstance(value, list) else [value]:
            problem = _url_secret(url) if isinstance(url, str) else None
            if problem:
                return f"'{name}': the URL {problem}; {USE_ENVIRONMENT}"
    if isinstance(value, dict):
        scan_below = scan_values or leaf.lower() in ("params", *_HEADER_KEYS)
        for key, item in value.items():
            problem = secret_in_setting(f"{name}.{key}" if name else str(key), item, scan_values=scan_below)
            if problem:
                return problem
    elif isinstance(value, list):
        for i, item in enumerate(value):
            problem = secret_in_setting(f"{name}[{i}]", item, scan_values=scan_values)
            if problem:
                return problem
    elif scan_values and isinstance(value, str) and scrub(value, ()) != value:
        return f"'{name}': looks like a key or token; {USE_ENVIRONMENT}"
    return None
