"""Load, validate and render the prompt files of ``prompts/`` (Bohnet et al., Appendix A, Figs. 8-20).

A prompt file is ``<id>.v<N>.txt``: ``# key: value`` header lines (id, version, implements,
placeholders, output), a line ``---``, then the body with ``{placeholders}`` and doubled literal
braces ``{{ }}`` (format described in prompts/README.md). Files are never edited once used; a
change is a new version, and the highest version wins unless one is asked for.

Folders searched, in order: the project's ``prompts/``, every folder in ``LSQA_PROMPTS_DIR``
(``os.pathsep``-separated), then the folders passed as ``dirs=``. The same id and version in two
folders is only allowed when the files are identical (a version is immutable); a user who wants
to change a prompt adds a higher version, which then overrides ours.

A prompt has a *layout*: ``paper`` (the order of the paper's figures, the default) or
``context-first`` (optional header ``# layout: context-first``): the same wording and
placeholders, with the book or passages moved to the very start so that every call on one book
shares a long identical prefix that providers cache. A study picks the layout per
system and judge (``prompt_caching``); versions of the other layout are never chosen by default.

Rendering is strict: a missing value, an unused value or a ``None`` is an error naming the
placeholder and the prompt, so that a half-rendered prompt never reaches a model.
"""

from __future__ import annotations

import hashlib
import os
import re
import string
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from lsqa.errors import LsqaError
from lsqa.package_files import PROMPTS, shipped_folder
from lsqa.prompting.parsers import OUTPUT_FORMATS

PROJECT_PROMPTS = shipped_folder(PROMPTS)
ENV_VAR = "LSQA_PROMPTS_DIR"
HEADER_KEYS = ("id", "version", "implements", "placeholders", "output")
OPTIONAL_HEADER_KEYS = ("layout",)
LAYOUTS = ("paper", "context-first")
CONTEXT_END = "# CONTEXT END"
_FILE_NAME = re.compile(r"^(?P<id>[A-Za-z0-9_\-]+)\.v(?P<version>\d+)\.txt$")
_HEADER_LINE = re.compile(r"^#\s*(?P<key>[A-Za-z_]+)\s*:\s*(?P<value>.*?)\s*$")


class PromptError(LsqaError):
    """A prompt file that cannot be used, or a render call that does not fit the prompt."""


@dataclass(frozen=True)
class Prompt:
    id: str
    version: int
    implements: str
    placeholders: tuple[str, ...]  # in header order
    output: str  # parser key, one of lsqa.prompting.parsers.OUTPUT_FORMATS
    body: str
    sha256: str  # of the file's bytes
    path: Path
    layout: str = "paper"  # or "context-first"

    @property
    def ref(self) -> str:
        """``<id>.v<N>``, the name stored with every verdict."""
        return f"{self.id}.v{self.version}"

    @property
    def prefill(self) -> str:
        """The open JSON object the body ends with, as rendered (e.g. ``{'answer_is_entailed_by_context':``).

        The paper (Figs. 12, 18-20) ends its judge prompts with this opening so that the model
        continues the object; pass it to :func:`lsqa.prompting.parsers.parse`. "" when there is none.
        """
        last = self.body.rstrip().rsplit("\n", 1)[-1].strip()
        if last.startswith("{{") and "}}" not in last and not _fields(last, self):
            return last.replace("{{", "{")
        return ""


def _fields(text: str, where) -> set[str]:
    """Placeholder names used in ``text``; refuses positional, indexed or formatted fields."""
    names: set[str] = set()
    try:
        parsed = list(string.Formatter().parse(text))
    except ValueError as exc:  # a lone "{" or "}"
        raise PromptError(f"{where}: bad braces in the body ({exc}); write literal braces as {{{{ and }}}}") from exc
    for _, name, spec, conversion in parsed:
        if name is None:
            continue
        if not name.isidentifier() or spec or conversion:
            raise PromptError(
                f"{where}: placeholder {{{name}{'!' + conversion if conversion else ''}"
                f"{':' + spec if spec else ''}}} is not a plain name; use {{name}}, and {{{{ }}}} for literal braces"
            )
        names.add(name)
    return names


_parsed: dict[tuple[str, int, int], Prompt] = {}  # (path, mtime, size) → its prompt


def _parse_known_file(path: Path) -> Prompt:
    """:func:`parse_prompt_file`, read again only when the file changed: every request of a run
    looks its prompt up (5,600 look-ups in a paper-scale plan, each a read and a parse if done every
    time: docs/benchmarks-log/2026-11-30-paper-scale.md)."""
    st = path.stat()
    key = (str(path), st.st_mtime_ns, st.st_size)
    found = _parsed.get(key)
    if found is None:
        found = _parsed[key] = parse_prompt_file(path)
    return found


def _header_fields(path: Path, head: str) -> dict[str, str]:
    """The ``# key: value`` lines above a prompt's ``---``, by key; unknown or repeated keys refused."""
    header: dict[str, str] = {}
    for number, line in enumerate(head.split("\n"), start=1):
        if not line.strip():
            continue
        hm = _HEADER_LINE.match(line)
        if not hm:
            raise PromptError(f"{path}:{number}: header lines look like '# key: value', got {line!r}")
        key = hm.group("key").lower()
        if key not in HEADER_KEYS + OPTIONAL_HEADER_KEYS:
            raise PromptError(f"{path}:{number}: unknown header {key!r}; "
                              f"known: {', '.join(HEADER_KEYS + OPTIONAL_HEADER_KEYS)}")
        if key in header:
            raise PromptError(f"{path}:{number}: header {key!r} given twice")
        header[key] = hm.group("value")
    return header


def _check_placeholders_match(path: Path, declared: tuple[str, ...], used: set[str]) -> None:
    """Refuse a prompt whose body uses other placeholders than its header lists, naming both sides."""
    if set(declared) != used:
        extra, unused = sorted(used - set(declared)), sorted(set(declared) - used)
        problems = []
        if extra:
            problems.append(f"the body uses {', '.join(extra)} but the header does not list it")
        if unused:
            problems.append(f"the header lists {', '.join(unused)} but the body does not use it")
        raise PromptError(f"{path}: placeholders do not match: {'; '.join(problems)}")


def parse_prompt_file(path: str | Path) -> Prompt:
    """Read and validate one prompt file; every error names the file."""
    path = Path(path)
    m = _FILE_NAME.match(path.name)
    if not m:
        raise PromptError(f"{path}: prompt files are named <id>.v<N>.txt (e.g. autoais.v2.txt)")
    data = path.read_bytes()
    try:
        text = data.decode("utf-8").replace("\r\n", "\n")
    except UnicodeDecodeError as exc:
        raise PromptError(f"{path}: not UTF-8 text ({exc})") from exc
    head, sep, body = text.partition("\n---\n")
    if not sep:
        raise PromptError(f"{path}: no line '---' separating the header from the body")
    header = _header_fields(path, head)
    missing = [k for k in HEADER_KEYS if k not in header]
    if missing:
        raise PromptError(f"{path}: header lacks {', '.join(missing)}")
    if header["id"] != m.group("id") or header["version"] != m.group("version"):
        raise PromptError(
            f"{path}: header says id {header['id']!r} version {header['version']!r}, "
            f"the file name says {m.group('id')!r} version {m.group('version')!r}"
        )
    if header["output"] not in OUTPUT_FORMATS:
        raise PromptError(f"{path}: unknown output {header['output']!r}; known: {', '.join(OUTPUT_FORMATS)}")
    declared = tuple(p.strip() for p in header["placeholders"].split(",") if p.strip())
    if len(set(declared)) != len(declared):
        raise PromptError(f"{path}: a placeholder is listed twice in the header: {', '.join(declared)}")
    body = body.rstrip("\n")  # the file's final newline is not part of the prompt
    _check_placeholders_match(path, declared, _fields(body, path))
    if not body.strip():
        raise PromptError(f"{path}: the body is empty")
    layout = header.get("layout", "paper")
    if layout not in LAYOUTS:
        raise PromptError(f"{path}: layout {layout!r} is not one of {', '.join(LAYOUTS)}")
    if layout == "context-first" and not body.startswith("# CONTEXT\n{"):
        raise PromptError(f"{path}: a context-first prompt begins with the lines '# CONTEXT' and its context placeholder")
    return Prompt(
        id=header["id"],
        version=int(header["version"]),
        implements=header["implements"],
        placeholders=declared,
        output=header["output"],
        body=body,
        sha256=hashlib.sha256(data).hexdigest(),
        path=path,
        layout=layout,
    )


def prompt_dirs(dirs: Iterable[str | Path] | None = None) -> list[Path]:
    """The folders searched: project ``prompts/``, then ``LSQA_PROMPTS_DIR``, then ``dirs``."""
    found = [PROJECT_PROMPTS]
    env = os.environ.get(ENV_VAR, "")
    extra = [Path(p) for p in env.split(os.pathsep) if p.strip()]
    extra += [Path(p) for p in (dirs or [])]
    for folder in extra:
        if not folder.is_dir():
            source = ENV_VAR if str(folder) in env.split(os.pathsep) else "dirs"
            raise PromptError(f"prompt folder {folder} (from {source}) does not exist or is not a folder")
        if folder.resolve() not in [f.resolve() for f in found]:
            found.append(folder)
    return found


def list_prompts(dirs: Iterable[str | Path] | None = None) -> list[Prompt]:
    """Every prompt version in every folder, sorted by id then version."""
    by_key: dict[tuple[str, int], Prompt] = {}
    for folder in prompt_dirs(dirs):
        for path in sorted(folder.glob("*.v*.txt")):  # README.md, notes: not prompts
            prompt = _parse_known_file(path)
            key = (prompt.id, prompt.version)
            other = by_key.get(key)
            if other is not None and other.sha256 != prompt.sha256:
                raise PromptError(
                    f"{prompt.ref} exists twice with different text: {other.path} and {path}; "
                    f"a used version is never edited, add {prompt.id}.v{_next_version(by_key, prompt.id)}.txt instead"
                )
            by_key.setdefault(key, prompt)
    return [by_key[k] for k in sorted(by_key)]


def _next_version(by_key: dict, prompt_id: str) -> int:
    return max(v for (i, v) in by_key if i == prompt_id) + 1


def load_prompt(prompt_id: str, version: int | str | None = None, *, dirs: Iterable[str | Path] | None = None,
                layout: str = "paper") -> Prompt:
    """The prompt ``prompt_id`` at ``version`` (an int, ``"2"`` or ``"v2"``), else its highest
    version of ``layout`` (``"context-first"`` falls back to ``"paper"`` for a prompt that has no
    such version, e.g. one without a context)."""
    prompts = list_prompts(dirs)
    versions = [p for p in prompts if p.id == prompt_id]
    if not versions:
        known = ", ".join(sorted({p.id for p in prompts})) or "none"
        raise PromptError(f"no prompt with id {prompt_id!r}; known ids: {known}")
    if version is None:
        of_layout = [p for p in versions if p.layout == layout] or [p for p in versions if p.layout == "paper"]
        return (of_layout or versions)[-1]
    try:
        wanted = int(str(version).lower().removeprefix("v"))
    except ValueError:
        raise PromptError(f"prompt version {version!r} for {prompt_id!r} is not a number") from None
    for p in versions:
        if p.version == wanted:
            return p
    have = ", ".join(f"v{p.version}" for p in versions)
    raise PromptError(f"prompt {prompt_id!r} has no version {wanted} (has {have})")


def render(prompt: Prompt, /, **values) -> str:
    """The prompt body with every placeholder filled; values are inserted verbatim (braces in a
    book's text are not re-read as placeholders)."""
    needed = set(prompt.placeholders)
    missing = sorted(needed - values.keys())
    if missing:
        raise PromptError(
            f"prompt {prompt.ref} needs a value for {', '.join(missing)} ({prompt.path}); "
            f"its placeholders are {', '.join(prompt.placeholders)}"
        )
    unused = sorted(values.keys() - needed)
    if unused:
        raise PromptError(
            f"prompt {prompt.ref} does not use {', '.join(unused)} ({prompt.path}); "
            f"its placeholders are {', '.join(prompt.placeholders)}"
        )
    out: list[str] = []
    for literal, name, _, _ in string.Formatter().parse(prompt.body):
        out.append(literal)
        if name is not None:
            value = values[name]
            if value is None:
                raise PromptError(f"prompt {prompt.ref}: the value for {name} is None")
            out.append(str(value))
    return "".join(out)


def messages(prompt: Prompt, /, **values) -> list[dict]:
    """The chat messages for a prompt: one user turn holding the rendered body (the paper's
    prompts are single user turns; a prefill stays at the end of that turn, as in the paper)."""
    return [{"role": "user", "content": render(prompt, **values)}]


def layout_for(prompt_caching: bool) -> str:
    """The layout a system or judge asks for: context-first when it uses prompt caching."""
    return "context-first" if prompt_caching else "paper"


def stable_prefix_chars(prompt: Prompt, /, **values) -> int:
    """How many leading characters of the rendered prompt are the same for every call that
    shares the context: the body up to its ``# CONTEXT END`` line, when that part holds no
    placeholder but the context (0 otherwise). Providers that cache only what the request marks
    (Anthropic, Bedrock, Gemini) get a ``cache_control`` mark at that point."""
    end = prompt.body.find("\n" + CONTEXT_END)
    if end < 0:
        return 0
    head = prompt.body[: end + 1 + len(CONTEXT_END)]
    names = _fields(head, prompt.path)
    if not names or names - {"context", "context_text"}:
        return 0  # no context in it, or a per-question value before the context ends
    head_prompt = Prompt(prompt.id, prompt.version, prompt.implements, tuple(sorted(names)), prompt.output,
                         head, prompt.sha256, prompt.path, prompt.layout)
    return len(render(head_prompt, **{n: values[n] for n in names}))


def request(prompt: Prompt, model: str, params: dict, *, prompt_caching: bool = False, contexts: tuple[str, ...] = (),
            mode: str = "online", **values):
    """The :class:`lsqa.llm.LLMRequest` for ``prompt`` rendered with ``values`` (``contexts``: the
    long texts in it, stored once by the call log); with ``prompt_caching`` it carries the length
    of the prompt's stable prefix (see :func:`stable_prefix_chars`); ``mode`` is ``online`` or
    ``batch`` (the provider's batch API)."""
    from lsqa.llm.types import LLMRequest

    return LLMRequest(model=model, messages=messages(prompt, **values), params=dict(params),
                      prompt_id=prompt.id, prompt_version=str(prompt.version), contexts=tuple(contexts), mode=mode,
                      cache_prefix_chars=stable_prefix_chars(prompt, **values) if prompt_caching else 0)
