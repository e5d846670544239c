"""Cache keys and secret hygiene: what identifies a call, and what must never be stored."""

from __future__ import annotations

import hashlib
import os
import re
from typing import Mapping, Sequence

from lsqa.llm.types import LLMRequest
from lsqa.prompt_parts import canonical_json

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
    """sha256 of (model, messages, parameters without transport settings)."""
    payload = canonical_json({"model": request.model, "messages": request.messages, "params": semantic_params(request.params)})
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


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
