"""Writing workspace tables to an export folder (CSV, JSONL or Parquet) with DuckDB's COPY, and
the folder itself: every file goes inside ``--out`` and nowhere else.

- ``--out`` is refused (``InputError``, nothing written) when it is not a folder (a file, a device,
  a link to one), or when it is a folder holding files ``lsqa export`` did not write there, unless
  ``force``. A folder lsqa wrote is known by its marker file ``.lsqa-export``, which lists the files
  it wrote; an empty folder or a new path is always fine.
- The export is written into a hidden temporary folder beside ``--out`` (same parent, same file
  system) and renamed into place when every file is written: a failed or killed export leaves the
  previous folder as it was, never half a new one. Under ``force`` into a folder with other files,
  lsqa's files are moved in one by one (each whole) and the other files are kept.
- File names made from data (a judge's name) are safe slugs (``file_slugs``): letters, digits,
  ``.``, ``_``, ``-``; a name that had to change gets a short hash of itself, and two names that
  still meet are told apart by ``-2``, ``-3`` in sorted order. The real name stays inside the file.
- CSV cells that a spreadsheet would run as a formula are written with a leading ``'``
  (``lsqa.text.csv_cells`` owns the rule); JSONL and Parquet keep the exact text.
- ``final_labels``: one row per verdict with a human label (``lsqa.store.verdicts.final_label_table``,
  the same rows ``lsqa labels`` prints); its lists (``people``, ``people_labels``) are JSON arrays in
  a CSV cell, lists in JSONL and Parquet.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import stat
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterable, Iterator

from lsqa.errors import InputError
from lsqa.text.csv_cells import FORMULA_START, PLAIN_NUMBER, QUOTE

FORMATS = {"csv": "(FORMAT csv, HEADER true)", "jsonl": "(FORMAT json)", "parquet": "(FORMAT parquet)"}
MARKER = ".lsqa-export"

# What a study's results are; the book texts and the call log stay in the workspace.
EXPORTS = {
    # corrected_reference_1/2: the standing correction read from an errata file (migration 0024), beside
    # the original; NULL where there is none.
    "questions": "SELECT q.id, q.document_id, q.origin, q.text, q.reference_1, q.reference_2,"
                 " c1.text AS corrected_reference_1, c2.text AS corrected_reference_2, q.entity_id, q.prompt_id,"
                 " q.prompt_version, q.model, q.set_name, q.source_index FROM questions q"
                 " LEFT JOIN current_reference_corrections c1 ON c1.question_id = q.id AND c1.reference = '1'"
                 " LEFT JOIN current_reference_corrections c2 ON c2.question_id = q.id AND c2.reference = '2'"
                 " ORDER BY q.id",
    "systems": "SELECT * FROM systems ORDER BY name",
    "answers": "SELECT question_id, system_name, text, status, passages, llm_call_key FROM answers"
               " ORDER BY question_id, system_name",
    "verdicts": "SELECT id, judge, kind, question_id, system_a, system_b, shown_order, reference, label, raw_label,"
                " score, evidence, status, prompt_id, prompt_version, raw FROM judgments ORDER BY judge, question_id",
    "human_reviews": "SELECT * FROM human_reviews ORDER BY id",
    "audit_draws": "SELECT * FROM audit_draws ORDER BY id",
    "reference_flags": "SELECT * FROM reference_flags ORDER BY id",
    "reference_corrections": "SELECT * FROM reference_corrections ORDER BY id",
    "adjudications": "SELECT * FROM adjudications ORDER BY id",
    "item_comments": "SELECT * FROM item_comments ORDER BY id",
    "review_skips": "SELECT * FROM review_skips ORDER BY id",
    "reference_checks": "SELECT id, judge, kind, question_id, reference, label, answerable, evidence, status,"
                        " prompt_id, prompt_version, raw FROM reference_checks ORDER BY judge, question_id, reference",
}


# ------------------------------------------------------------------------------------ file names

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
MAX_SLUG = 80  # + hash + "ranking_" + ".json" stays far below any file system's 255 bytes


def file_slugs(names: Iterable[str]) -> dict[str, str]:
    """Name → a file-name-safe slug, distinct per name (case-insensitively), the same on every run."""
    out: dict[str, str] = {}
    taken: set[str] = set()
    for name in sorted(set(names)):
        slug = _UNSAFE.sub("_", name).strip("._-")[:MAX_SLUG] or "unnamed"
        if slug != name:  # changed: a hash of the real name keeps 'a/b' and 'a_b' apart
            slug = f"{slug}-{hashlib.sha1(name.encode('utf-8', 'surrogatepass')).hexdigest()[:8]}"
        base, n = slug, 2
        while slug.casefold() in taken:  # case-insensitive file systems (macOS, Windows) too
            slug, n = f"{base}-{n}", n + 1
        taken.add(slug.casefold())
        out[name] = slug
    return out


# ------------------------------------------------------------------------------------ the folder

def _refuse(out: Path, problem: str, hint: str = "give a new or empty folder for --out"):
    raise InputError(out, problem, hint=hint)


def _manifest(folder: Path) -> list[str] | None:
    """The files a previous export listed in its marker, or None (no marker, or not lsqa's)."""
    try:
        data = json.loads((folder / MARKER).read_text(encoding="utf-8"))
        files = data["files"]
    except (OSError, ValueError, TypeError, KeyError):
        return None
    if not isinstance(files, list) or not all(isinstance(f, str) and f == Path(f).name for f in files):
        return None
    return files


def check_out(out: Path, *, force: bool = False) -> str:
    """What ``out`` is: ``new``, ``empty``, ``ours`` (a previous export, nothing else in it) or
    ``forced`` (other files, written over under ``force``); refused (InputError) otherwise."""
    try:
        info = os.stat(out)
    except FileNotFoundError:
        if out.is_symlink():
            _refuse(out, "--out is a link to a missing folder")
        ancestor = next((p for p in out.parents if p.exists()), None)
        if ancestor is not None and not ancestor.is_dir():
            _refuse(out, f"{ancestor} is not a folder")
        return "new"
    except OSError as exc:  # a loop of links, a name too long, no permission to look
        _refuse(out, f"--out cannot be used ({exc.strerror or exc})")
    if not stat.S_ISDIR(info.st_mode):
        what = "a file" if stat.S_ISREG(info.st_mode) else "not a folder (a device, pipe or socket)"
        _refuse(out, f"--out is {what}", hint="give a folder for --out: a new one, an empty one or a previous export")
    try:
        entries = set(os.listdir(out))
    except OSError as exc:
        _refuse(out, f"--out cannot be read ({exc.strerror or exc})")
    if not entries:
        return "empty"
    listed = _manifest(out)
    if listed is not None and entries <= set(listed) | {MARKER}:
        return "ours"
    if force:
        return "forced"
    others = sorted(entries - set(listed or ()) - {MARKER})
    _refuse(out, f"--out holds files lsqa export did not write ({len(others)}, e.g. {others[0]!r})",
            hint="give a new or empty folder, or pass --force to write lsqa's files there and keep the others")


class ExportWriter:
    """The temporary folder an export is written into; ``file(name)`` gives the path of one file."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.files: list[str] = []

    def file(self, name: str) -> Path:
        if name != Path(name).name or name in ("", ".", "..", MARKER) or "\x00" in name:
            raise ValueError(f"not a plain file name: {name!r}")  # a bug, not an input: names come from slugs
        if name not in self.files:
            self.files.append(name)
        return self.folder / name


def _move_in(writer: ExportWriter, out: Path) -> None:
    """Each file into ``out``, whole (rename), then the marker listing them; stale files of a
    previous export that this one did not write again are removed."""
    old = _manifest(out) or []
    for name in writer.files:
        os.replace(writer.folder / name, out / name)
    for name in set(old) - set(writer.files):
        with_name = out / name
        if with_name.is_file() and not with_name.is_symlink():
            with_name.unlink()
    os.replace(writer.folder / MARKER, out / MARKER)


@contextmanager
def export_folder(out: str | Path, *, force: bool = False) -> Iterator[ExportWriter]:
    """Check ``out``, yield a writer into a temporary folder beside it, and put the files in place
    when the block ends without an error (on an error, nothing is left behind)."""
    given = Path(out)
    state = check_out(given, force=force)
    out = given.resolve()
    missing = [p for p in [out.parent, *out.parent.parents] if not p.exists()]
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{out.name[:60]}.lsqa-export-tmp-", dir=out.parent))
    except OSError as exc:
        _remove_empty(missing)
        _refuse(given, f"cannot write beside --out in {out.parent} ({exc.strerror or exc})",
                hint="choose a folder you can write to")
    writer = ExportWriter(tmp)
    try:
        yield writer
        (tmp / MARKER).write_text(json.dumps({"written_by": "lsqa export", "files": writer.files}, indent=1) + "\n",
                                  encoding="utf-8")
        os.chmod(tmp, 0o777 & ~_umask())  # mkdtemp makes 0700; an export folder is an ordinary folder
        _put_in_place(writer, out, state)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        _remove_empty(missing)
        raise
    shutil.rmtree(tmp, ignore_errors=True)  # gone already unless files were moved in one by one


def _put_in_place(writer: ExportWriter, out: Path, state: str) -> None:
    tmp = writer.folder
    cwd = Path.cwd()
    if state == "forced" or (state == "ours" and (cwd == out or cwd.is_relative_to(out))):
        # (a folder this process stands in is not renamed away from under it)
        _move_in(writer, out)
        return
    try:
        if state == "ours":
            old = Path(tempfile.mkdtemp(prefix=f".{out.name[:60]}.lsqa-export-old-", dir=out.parent))
            os.replace(out, old / "previous")
            try:
                os.rename(tmp, out)
            except OSError:
                os.replace(old / "previous", out)  # the previous export back where it was
                raise
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.rename(tmp, out)  # a new path, or over an empty folder (POSIX allows it)
    except OSError as exc:
        if state != "new" and out.is_dir():
            _move_in(writer, out)  # out is a mount point or cannot be renamed: file by file
            return
        _refuse(out, f"cannot create the export folder ({exc.strerror or exc})", hint="choose a folder you can write to")


def _remove_empty(folders: list[Path]) -> None:
    for folder in folders:  # deepest first: the ones this export created
        try:
            folder.rmdir()
        except OSError:
            break


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


# ------------------------------------------------------------------------------------ the tables

def _sql_text(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def csv_safe_sql(con, sql: str) -> str:
    """``sql`` with every text column's formula-like cells quoted (``lsqa.text.csv_cells``)."""
    columns = con.execute(f"DESCRIBE {sql}").fetchall()
    parts = []
    for column in columns:
        name, kind = column[0], str(column[1])
        ident = '"' + name.replace('"', '""') + '"'
        if kind in ("VARCHAR", "JSON"):
            text = f"{ident}::VARCHAR"
            parts.append(f"CASE WHEN regexp_matches({text}, {_sql_text(FORMULA_START)}) AND NOT "
                         f"regexp_full_match({text}, {_sql_text(PLAIN_NUMBER)}) THEN {_sql_text(QUOTE)} || {text} "
                         f"ELSE {text} END AS {ident}")
        else:
            parts.append(ident)
    return f"SELECT {', '.join(parts)} FROM ({sql}) AS exported"


def copy_table(con, sql: str, path: Path, fmt: str) -> int:
    written = csv_safe_sql(con, sql) if fmt == "csv" else sql
    con.execute(f"COPY ({written}) TO {_sql_text(str(path))} {FORMATS[fmt]}")
    return int(con.execute(f"SELECT count(*) FROM ({sql})").fetchone()[0])


def export_tables(con, writer: ExportWriter, fmt: str) -> dict[str, int]:
    """The tables of ``EXPORTS`` as ``<table>.<fmt>`` files in the writer's folder, and ``final_labels``;
    rows per file."""
    written = {f"{name}.{fmt}": copy_table(con, sql, writer.file(f"{name}.{fmt}"), fmt) for name, sql in EXPORTS.items()}
    written[f"final_labels.{fmt}"] = export_final_labels(con, writer.file(f"final_labels.{fmt}"), fmt)
    return written


def export_final_labels(con, path: Path, fmt: str) -> int:
    """``final_label_table``'s rows (every judge) as one file; the lists as JSON arrays in CSV."""
    import pyarrow as pa

    from lsqa.store.bulk import registered
    from lsqa.store.verdicts import FINAL_LABEL_COLUMNS, final_label_table

    text, texts = pa.string(), pa.list_(pa.string())
    kinds = {"people": texts, "people_labels": texts, "audit": pa.bool_(), "inclusion_prob": pa.float64()}
    schema = pa.schema([(c, kinds.get(c, text)) for c in FINAL_LABEL_COLUMNS])
    table = pa.Table.from_pylist(final_label_table(con), schema=schema)
    with registered(con, table) as name:
        columns = ", ".join(f"to_json({c})::VARCHAR AS {c}" if fmt == "csv" and kinds.get(c) == texts else c
                            for c in FINAL_LABEL_COLUMNS)
        return copy_table(con, f"SELECT {columns} FROM {name}", path, fmt)
