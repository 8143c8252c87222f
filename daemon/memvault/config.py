"""VaultConfig: defaults < .memvault/config.toml < environment < flags, read once.

Every setting lives in one frozen dataclass below with its default; the
template's ``.memvault/config.toml`` documents each of them. Environment
variables override scalars as ``MEMVAULT_<SECTION>_<KEY>`` (for example
``MEMVAULT_DAEMON_PORT=8765``). Unknown keys and wrong types are a
ConfigError naming the key, never silently ignored.
"""

from __future__ import annotations

import dataclasses
import os
import re
import tomllib
import unicodedata
from collections.abc import Mapping, Set
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memvault.core.memory_order import ORDERS, SectionRule, is_section_name
from memvault.errors import ConfigError

STATE_DIR = ".memvault"
CONFIG_FILE = "config.toml"
DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
BACKENDS = ("onnx", "torch")
ONNX_PRECISIONS = ("int8", "fp32")
DEFAULT_IGNORE = (
    "templates/**",
    "archive/*-????-??-??.md",
    "archive/*-????-??-??-*.md",
    "archive/memory/????-??-??.md",
)
# The quiet period: a file changed less than this long ago is being saved. The watcher
# waits for this much quiet before it syncs (a save's events arrive within a few ms; 100 ms
# coalesces them and keeps save -> searchable under 300 ms, bench/RESULTS.md "Two lanes"),
# and a write leaves a file someone else saved within it alone (vault/swap.py).
QUIET_MS = 100
# Settings renamed: the old key is still read (the new one wins when both are given).
MAX_QUIET_MS = 60_000  # a quiet period longer than a minute would hold MEMORY.md back for good
RENAMED = {("daemon", "debounce_ms"): ("vault", "quiet_ms")}
DEFAULT_SECTIONS = (
    SectionRule("projects", "Active Projects", "projects", {"status": "active"}, "updated", 8),
    SectionRule("people", "Key People", "people", {}, "updated", 8),
    SectionRule("decisions", "Recent Decisions", "decisions", {}, "date", 8),
    SectionRule("logs", "Daily Logs", "logs", {}, "date", 7),
    # notes at the vault root, outside the four folders (Claude Code's topic files)
    SectionRule("topics", "Topics", "", {}, "updated", 6),
)


@dataclass(frozen=True, slots=True)
class VaultSettings:
    # what memvault itself lays down: the note templates, and the originals `migrate`
    # keeps (archive/<name>-<date>.md, archive/memory/<date>.md); case as the disk has it
    ignore: tuple[str, ...] = DEFAULT_IGNORE
    max_note_bytes: int = 2_000_000
    update_links_on_rename: bool = True
    quiet_ms: int = QUIET_MS  # the quiet period (QUIET_MS); was daemon.debounce_ms


@dataclass(frozen=True, slots=True)
class MemorySettings:
    file: str = "MEMORY.md"
    max_lines: int = 80  # all five sections full: ~70 lines (Claude Code loads 200)
    max_tokens: int = 2000
    restore_deleted_sections: bool = False  # no longer used (docs/MEMORY.md)
    sections: tuple[SectionRule, ...] = DEFAULT_SECTIONS


@dataclass(frozen=True, slots=True)
class IndexSettings:
    model: str = DEFAULT_MODEL
    backend: str = "onnx"
    onnx_precision: str = "int8"
    model_cache: str = ""
    device: str = "cpu"
    threads: int = 0
    batch_size: int = 32
    max_chunk_tokens: int = 256
    chunk_target_tokens: int = 128
    embed_context: tuple[str, ...] = ("title", "headings", "date")
    context_overlap_tokens: int = 64
    line_vectors: bool = True  # embed each line of a chunk too (context ranks lines by it)
    hnsw_m: int = 16
    # the graph: 100 at insert and 200 at query found more of the exact neighbours than
    # 200/100 on real-model vectors (23.6k and 50k) at ~0.55x the insert CPU, the insert
    # being what grows with the vault in a first sync (bench/RESULTS.md, issue 27)
    ef_construction: int = 100
    ef_search: int = 200
    # the hnswlib graph on fewer dimensions when the model has a projection (the default
    # model: 192 of 384), each search ranked again by the full vectors (index/projection.py)
    graph_projection: bool = True
    compact_ratio: float = 0.25
    # where the index lives (index/seam.py): "sqlite" (.memvault/) or "postgres" (dsn);
    # ``schema``: the PostgreSQL schema (default memvault_<folder name>); ``pg_timeout``:
    # seconds to connect and per statement (a stalled network is cut off, not waited on)
    store: str = "sqlite"
    dsn: str = ""
    schema: str = ""
    pg_timeout: float = 10.0


@dataclass(frozen=True, slots=True)
class SearchSettings:
    k: int = 10
    fusion: str = "convex"
    rrf_k: int = 10
    lexical_weight: float = 1.0
    vector_weight: float = 1.0
    candidates: int = 100
    # a chunk's note's evidence, its own lines', its note's links in (core/ranking
    # with_evidence; chosen by cross-validation, bench/RESULTS.md "Issue 25")
    note_weight: float = 0.25
    note_top: int = 2
    own_weight: float = 0.25
    link_weight: float = 0.25
    # the note a best hit's pointer line ("- [[Book]]") leads to ranks at this share of
    # the hit's score times the line's (core/hops; 0 = off; bench/RESULTS.md "third round")
    hop_weight: float = 0.9
    # the best line of such a hit, when it links one note, passes this share of the hit
    # on to it too, however long (core/hops passed_share; 0 = pointer lines only;
    # bench/RESULTS.md "fifth round")
    hop_described: float = 1.0
    # when the vector side's first chunk is another note's than the ranking's first,
    # each note's focus (its mean vector's cosine over its best chunk's) joins at this
    # weight (core/focus; 0 = off; bench/RESULTS.md "fourth round")
    focus_weight: float = 0.25
    # the vector side's n-th note (n up to nearest_notes) ranks among the first
    # nearest_place x n notes (core/ranking nearest_kept; 0 = off; bench/RESULTS.md
    # "fifth round")
    nearest_place: int = 2
    nearest_notes: int = 2
    # the notes holding the query's rarest term, when at most rare_chunks chunks hold it
    # and its word (PAY-4521 whole) carries at least rare_share of the query's IDF, rank
    # among the first rare_place x n notes (the n-th of them), after the vector side's
    # (core/rare_words rare_terms, core/ranking rare_kept; rare_chunks or rare_place 0 = off; chosen by
    # cross-validation, bench/RESULTS.md "rare words"); in a context, the lines holding
    # it rank among the first rare_place x n lines (core/excerpts held_first)
    rare_chunks: int = 5
    rare_share: float = 0.55
    rare_place: int = 1
    # how many of the query's rare words (each its rarest term in at most rare_chunks
    # chunks) keep their notes first, each carrying rare_share of the query's IDF with
    # the others taken out of the query (two identifiers in one lookup; core/ranking
    # rare_terms; chosen by cross-validation, bench/RESULTS.md "stop 49"); 1: the
    # rarest term's word alone
    rare_words: int = 2


@dataclass(frozen=True, slots=True)
class ContextSettings:
    budget: int = 2000
    index_share: float = 0.1
    link_hops: int = 1
    excerpts: bool = True  # pack the best lines of the hits, not whole chunks
    candidates: int = 300  # chunks searched for a context (their lines are the candidates)
    own_admits: bool = True  # a line is admitted on its own evidence, not its note's


@dataclass(frozen=True, slots=True)
class DaemonSettings:
    host: str = "127.0.0.1"
    port: int = 0
    reconcile_seconds: int = 300
    save_seconds: int = 30
    # the embedding model is let go after this long with nothing to embed (0: never): a
    # daemon's model process ends; the next search or save loads it again (~0.05-0.4 s)
    model_idle_seconds: int = 600
    observer: str = "auto"
    log_max_bytes: int = 5_000_000
    log_backups: int = 3
    max_request_bytes: int = 1_000_000


@dataclass(frozen=True, slots=True)
class VaultConfig:
    root: Path
    vault: VaultSettings = VaultSettings()
    memory: MemorySettings = MemorySettings()
    index: IndexSettings = IndexSettings()
    search: SearchSettings = SearchSettings()
    context: ContextSettings = ContextSettings()
    daemon: DaemonSettings = DaemonSettings()
    # config.toml's bytes these settings were read from (None: no file), for the daemon's
    # watch of it (service/config_watch.py): a change made after this read is one
    source: bytes | None = dataclasses.field(default=None, compare=False, repr=False)

    @property
    def state_dir(self) -> Path:
        return self.root / STATE_DIR

    def folder(self, category: str) -> str:
        """The folder notes of ``category`` (people, projects, decisions, logs) go to: the
        folder of the MEMORY.md section of that name (``folder = "People"``: a vault's own
        folders, which ``init`` finds), else the category's own name."""
        rule = next((r for r in self.memory.sections if r.name == category), None)
        return rule.folder if rule is not None and rule.folder else category

    def memory_fingerprint(self) -> str:
        """What shapes MEMORY.md in the settings: a change (a section's folder, a filter, a
        limit) means MEMORY.md is recomputed on the next start, though no note changed."""
        return repr((self.memory.file, self.memory.restore_deleted_sections, self.memory.sections))

    @classmethod
    def load(
        cls,
        root: str | Path,
        env: Mapping[str, str] | None = None,
        overrides: Mapping[str, Mapping[str, Any]] | None = None,
    ) -> VaultConfig:
        """Resolve the configuration of the vault at ``root``."""
        root = as_listed(Path(root).expanduser().resolve())
        data: dict[str, dict[str, Any]] = {}
        source: bytes | None = None
        path = root / STATE_DIR / CONFIG_FILE
        if path.exists() and not path.is_file():  # a folder there: not silently defaults
            raise ConfigError(f"{path}: not a file; memvault reads its settings from a file")
        if path.is_file():
            try:
                source = path.read_bytes()
                loaded = tomllib.loads(source.decode("utf-8-sig"))
            except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
                raise ConfigError(f"{path}: {exc}") from None
            except OSError as exc:  # unreadable (permissions): said, not taken as defaults
                raise ConfigError(f"{path}: cannot be read: {exc.strerror or exc}") from None
            for name, value in loaded.items():
                if not isinstance(value, dict):
                    raise ConfigError(f"{path}: '{name}' must be a [table]")
                data[name] = dict(value)
        _rename(data)
        from_env = _apply_env(data, os.environ if env is None else env)
        for section, values in _renamed(overrides or {}).items():
            data.setdefault(section, {}).update(values)
            from_env -= {f"{section}.{name}" for name in values}
        return cls(root=root, **_build(data, str(path), from_env), source=source)


def as_listed(path: Path) -> Path:
    """``path`` (absolute) with each name as its folder lists it where that name is
    there only in another case or Unicode form (a disk that folds case: ``/mnt/usb/
    VAULT`` for ``/mnt/usb/vault``): every process names a vault one way, as its lock
    must (exFAT through FUSE gives each spelling a file of its own, and a lock held
    through one spelling stops no writer through the other). A name whose other case
    is not there (ext4) costs one stat, no listing."""
    here = Path(path.anchor)
    for part in path.parts[1:]:
        other = part.swapcase()
        if (other != part and os.path.lexists(here / other)) or not os.path.lexists(here / part):
            try:
                names = os.listdir(here)
            except OSError:
                names = [part]
            if part not in names:
                # here, not at the top: a CLI call a daemon answers loads no link parser
                from memvault.core.wikilinks import key

                same = sorted(n for n in names if key(n) == key(part))
                part = same[0] if len(same) == 1 else part
        here = here / part
    return here


_SECTIONS: dict[str, type] = {
    "vault": VaultSettings,
    "memory": MemorySettings,
    "index": IndexSettings,
    "search": SearchSettings,
    "context": ContextSettings,
    "daemon": DaemonSettings,
}


def _rename(data: dict[str, dict[str, Any]]) -> None:
    """Old keys (``RENAMED``) read under their new names; the new name wins."""
    for (old_section, old), (section, new) in RENAMED.items():
        if old in data.get(old_section, {}):
            value = data[old_section].pop(old)
            data.setdefault(section, {}).setdefault(new, value)


def _renamed(layer: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    out = {section: dict(values) for section, values in layer.items()}
    _rename(out)
    return out


def _apply_env(data: dict[str, dict[str, Any]], env: Mapping[str, str]) -> set[str]:
    """The environment's settings over the file's; the ``section.key`` names it set
    (a message about one names the variable, not config.toml)."""
    applied: set[str] = set()
    renamed = {
        f"MEMVAULT_{s}_{k}".upper(): f"MEMVAULT_{n}_{m}".upper()
        for (s, k), (n, m) in RENAMED.items()
    }
    env = {**{renamed[k]: v for k, v in env.items() if k in renamed}, **env}
    for section, kind in _SECTIONS.items():
        for f in dataclasses.fields(kind):
            raw = env.get(f"MEMVAULT_{section}_{f.name}".upper())
            if raw is None:
                continue
            default = f.default
            value: Any = raw
            if isinstance(default, bool):
                value = raw.strip().lower() in ("1", "true", "yes", "on")
            elif isinstance(default, (int, float)):
                try:
                    value = type(default)(raw)
                except ValueError:
                    raise ConfigError(
                        f"${f'MEMVAULT_{section}_{f.name}'.upper()}: {raw!r} is not a number"
                    ) from None
            elif isinstance(default, tuple):
                value = [part.strip() for part in raw.split(",") if part.strip()]
            data.setdefault(section, {})[f.name] = value
            applied.add(f"{section}.{f.name}")
    return applied


def _build(
    data: dict[str, dict[str, Any]], where: str, from_env: set[str] | None = None
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for section, values in data.items():
        kind = _known(_SECTIONS, section, f"section [{section}]", where)
        out[section] = _settings(kind, section, values, where, from_env or set())
    return out


def _settings(
    kind: type, section: str, values: dict[str, Any], where: str, from_env: set[str]
) -> Any:
    known = {f.name: f for f in dataclasses.fields(kind)}
    kwargs: dict[str, Any] = {}
    for name, value in values.items():
        f = _known(known, name, f"setting {section}.{name}", where)
        default = f.default if f.default is not dataclasses.MISSING else None
        if name == "sections":
            kwargs[name] = _sections(value, where)
            continue
        kwargs[name] = _typed(default, value, f"{section}.{name}", where)
    settings = kind(**kwargs)
    if section == "index" and not is_dsn(settings.dsn) and settings.store == "postgres":
        said = "$MEMVAULT_INDEX_DSN" if "index.dsn" in from_env else f"{where}: index.dsn"
        raise ConfigError(
            f'{said}: index.store = "postgres" needs a PostgreSQL connection string, '
            '"postgresql://user@host/db" or libpq\'s "host=... dbname=... user=..."'
            + ("" if settings.dsn else ": none is set ([index] dsn, or MEMVAULT_INDEX_DSN)")
        )
    _validate(section, settings, where, from_env)
    return settings


# libpq's key=value connection string: keyword = value pairs, a value bare or in single
# quotes, backslash escapes in either (psycopg, psql and every libpq client take it)
_KEYWORDS = re.compile(
    r"\s*(?:\w+\s*=\s*(?:'(?:[^'\\]|\\.)*'|(?:[^\s'\\]|\\.)(?:[^\s\\]|\\.)*)\s*)+"
)


def is_dsn(dsn: str) -> bool:
    """Whether ``dsn`` is a PostgreSQL connection string: a URI (``postgresql://``) or
    libpq's ``key=value`` form (``host=db.internal dbname=team user=memvault``)."""
    return dsn.startswith(("postgresql://", "postgres://")) or bool(_KEYWORDS.fullmatch(dsn))


def _known(table: Mapping[str, Any], key: str, what: str, where: str) -> Any:
    """``table[key]``, or a ConfigError naming what is unknown and what is known."""
    found = table.get(key)
    if found is None:
        raise ConfigError(f"{where}: unknown {what} (known: {', '.join(table)})")
    return found


def _typed(default: Any, value: Any, name: str, where: str) -> Any:
    if isinstance(default, bool):
        if not isinstance(value, bool):
            raise ConfigError(f"{where}: {name} must be true or false, not {value!r}")
        return value
    if isinstance(default, int):
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"{where}: {name} must be a whole number, not {value!r}")
        return value
    if isinstance(default, float):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ConfigError(f"{where}: {name} must be a number, not {value!r}")
        return float(value)
    if isinstance(default, str):
        if not isinstance(value, str):
            raise ConfigError(f"{where}: {name} must be a string, not {value!r}")
        return value
    if isinstance(default, tuple):
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ConfigError(f"{where}: {name} must be a list of strings, not {value!r}")
        return tuple(value)
    return value


def _sections(value: Any, where: str) -> tuple[SectionRule, ...]:
    if not isinstance(value, list):
        raise ConfigError(f"{where}: memory.sections must be a list of [[memory.sections]] tables")
    rules = []
    known = {f.name for f in dataclasses.fields(SectionRule)}
    for i, item in enumerate(value):
        if not isinstance(item, dict):
            raise ConfigError(f"{where}: memory.sections[{i}] must be a table")
        unknown = set(item) - known
        if unknown:
            raise ConfigError(
                f"{where}: memory.sections[{i}]: unknown setting {sorted(unknown)[0]}"
            )
        missing = {"name", "title", "folder"} - set(item)
        if missing:
            raise ConfigError(f"{where}: memory.sections[{i}] needs {', '.join(sorted(missing))}")
        flt = item.get("filter", {})
        if not isinstance(flt, dict):
            raise ConfigError(
                f"{where}: memory.sections[{i}].filter must be a table of field = value"
            )
        rule = SectionRule(
            # NFC: a name pasted from a Mac's file name (NFD) is the word MEMORY.md's
            # markers keep once an editor composes the file
            name=unicodedata.normalize("NFC", str(item["name"])),
            title=str(item["title"]),
            folder=str(item["folder"]).strip("/"),
            filter={str(k): str(v) for k, v in flt.items()},
            order=str(item.get("order", "date")),
            limit=item.get("limit", 10),
        )
        if any(part in ("..", ".") for part in rule.folder.split("/")):
            raise ConfigError(
                f"{where}: memory.sections[{i}].folder must be a folder inside the vault, "
                f"not {rule.folder!r}"
            )
        if rule.order not in ORDERS:
            raise ConfigError(
                f"{where}: memory.sections[{i}].order must be one of {', '.join(ORDERS)}"
            )
        if not isinstance(rule.limit, int) or rule.limit < 0:
            raise ConfigError(f"{where}: memory.sections[{i}].limit must be a whole number >= 0")
        if not is_section_name(rule.name):
            raise ConfigError(f"{where}: memory.sections[{i}].name must be letters, digits, - or _")
        rules.append(rule)
    names = [r.name for r in rules]
    if len(set(names)) != len(names):
        raise ConfigError(f"{where}: memory.sections names must be unique")
    return tuple(rules)


def _validate(section: str, settings: Any, where: str, from_env: Set[str] = frozenset()) -> None:
    problems: list[str] = []
    if section == "vault" and not 0 <= settings.quiet_ms <= MAX_QUIET_MS:
        # past a minute, a note is never quiet enough to write (a field test's 10**20)
        problems.append(f"vault.quiet_ms must be between 0 and {MAX_QUIET_MS}")
    if section == "index":
        if not 16 <= settings.max_chunk_tokens <= 8192:
            problems.append("index.max_chunk_tokens must be between 16 and 8192")
        if not 8 <= settings.chunk_target_tokens <= settings.max_chunk_tokens:
            problems.append(
                "index.chunk_target_tokens must be between 8 and index.max_chunk_tokens"
            )
        unknown = set(settings.embed_context) - {"title", "headings", "date"}
        if unknown:
            problems.append(f"index.embed_context: unknown part {sorted(unknown)[0]!r}")
        if not 0 <= settings.context_overlap_tokens <= settings.max_chunk_tokens:
            problems.append(
                "index.context_overlap_tokens must be between 0 and index.max_chunk_tokens"
            )
        if settings.batch_size < 1 or settings.ef_search < 1 or settings.hnsw_m < 2:
            problems.append("index: batch_size, ef_search and hnsw_m must be positive")
        if not 0.0 < settings.compact_ratio < 1.0:
            problems.append("index.compact_ratio must be between 0 and 1")
        if settings.backend not in BACKENDS:
            problems.append(f"index.backend must be one of {', '.join(BACKENDS)}")
        elif settings.backend == "onnx" and settings.device != "cpu":
            problems.append(
                "index.device applies to the torch backend; the onnx backend runs on the CPU "
                '(set index.backend = "torch" to use another device)'
            )
        if settings.onnx_precision not in ONNX_PRECISIONS:
            problems.append(f"index.onnx_precision must be one of {', '.join(ONNX_PRECISIONS)}")
        if settings.store not in ("sqlite", "postgres"):
            problems.append("index.store must be sqlite or postgres")
        if settings.pg_timeout <= 0:
            problems.append("index.pg_timeout must be positive (seconds)")
        cache = settings.model_cache
        if cache and not (cache.startswith("~") or os.path.isabs(cache)):
            problems.append("index.model_cache must be an absolute path (or start with ~)")
    elif section == "daemon":
        if not 0 <= settings.port <= 65535:
            problems.append("daemon.port must be between 0 and 65535 (0: pick a free one)")
        if settings.observer not in ("auto", "native", "polling"):
            problems.append("daemon.observer must be auto, native or polling")
        if settings.host not in ("127.0.0.1", "localhost", "::1"):
            problems.append("daemon.host must be a loopback address (127.0.0.1, localhost or ::1)")
        if settings.reconcile_seconds < 1:
            problems.append("daemon.reconcile_seconds must be >= 1")
        if settings.model_idle_seconds < 0:
            problems.append("daemon.model_idle_seconds must be >= 0 (0: keep the model loaded)")
    elif section == "search":
        if settings.fusion not in ("rrf", "convex"):
            problems.append("search.fusion must be rrf or convex")
        if settings.lexical_weight < 0 or settings.vector_weight < 0 or settings.candidates < 1:
            problems.append("search: weights must be >= 0 and candidates >= 1")
        if min(settings.note_weight, settings.own_weight, settings.link_weight) < 0:
            problems.append("search: note_weight, own_weight and link_weight must be >= 0")
        if settings.focus_weight < 0:
            problems.append("search.focus_weight must be >= 0")
        if settings.nearest_place < 0 or settings.nearest_notes < 0:
            problems.append("search.nearest_place and nearest_notes must be >= 0")
        if settings.rare_chunks < 0 or settings.rare_place < 0 or settings.rare_words < 1:
            problems.append(
                "search.rare_chunks and rare_place must be >= 0, search.rare_words >= 1"
            )
        if not 0.0 <= settings.rare_share <= 1.0:
            problems.append("search.rare_share must be between 0 and 1")
        if settings.note_top < 1:
            problems.append("search.note_top must be at least 1")
        if not 0.0 <= settings.hop_weight <= 1.0:
            problems.append("search.hop_weight must be between 0 and 1")
        if not 0.0 <= settings.hop_described <= 1.0:
            problems.append("search.hop_described must be between 0 and 1")
    elif section == "context":
        if not 0.0 <= settings.index_share <= 1.0:
            problems.append("context.index_share must be between 0 and 1")
        if settings.budget < 1:
            problems.append("context.budget must be positive")
        if settings.candidates < 1:
            problems.append("context.candidates must be positive")
    elif section == "memory":
        if "/" in settings.file or not settings.file.endswith(".md"):
            problems.append("memory.file must be a .md file name at the vault root")
        if settings.max_lines < 1 or settings.max_tokens < 1:
            problems.append("memory.max_lines and max_tokens must be positive")
    if problems:
        raise ConfigError(_placed(problems, where, from_env))


def _placed(problems: list[str], where: str, from_env: Set[str]) -> str:
    """The problems, each where the person can fix it: a value the environment set names
    its variable (config.toml holds nothing to fix), the others the file."""
    said, in_file = [], []
    for problem in problems:
        key = problem.split(" ", 1)[0].rstrip(":")
        if key in from_env:
            said.append(f"${'MEMVAULT_' + key.replace('.', '_').upper()}: {problem}")
        else:
            in_file.append(problem)
    return "; ".join(said + ([f"{where}: " + "; ".join(in_file)] if in_file else []))
