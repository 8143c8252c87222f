"""Chinese, Japanese and Korean found by keywords (core/cjk.py, index schema 8, PostgreSQL
schema 7).

FTS5's unicode61 tokenizer cuts text at spaces and punctuation only: ``東京都に住んで
います`` was one token, and a search for ``東京`` found no note of any vault written in
these scripts. The keyword table is now given each such character as a token, a query's
run as its pairs of characters (phrases). Checked on a real vault (real SQLite, the
hash embedder: the keyword side is what is tested), through every path that writes a
chunk (FTS5's own integrity check), on an index of schema 7 opened by this code, and on
both backends (a real PostgreSQL) with the same hits."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import psycopg
import pytest

from helpers import new_vault, open_vault, write
from keyword_helpers import by_keywords, integrity, keyword_answers, old_tsvector
from memvault.core.cjk import fold, keyed, spaced, terms
from memvault.core.context import index_part
from memvault.core.excerpts import common_terms, on_subject, subject_words
from memvault.core.ranking import fts_query, keyword_terms, query_terms, snippet
from memvault.index import pg_keywords
from memvault.index.pg_schema import PG_SCHEMA_VERSION
from memvault.index.schema import HEADINGS_SQL, SCHEMA_VERSION, register

NOTES = {
    "people/tanaka.md": "# 田中さん\n\n田中さんは東京都に住んでいます。毎朝コーヒーを飲みます。\n",
    "projects/weather.md": "# 天気予報\n\n東京の天気は明日晴れです。大阪は雨でしょう。\n",
    "projects/meeting.md": "# 会议记录\n\n我们讨论了数据库迁移计划，决定使用PostgreSQL。\n",
    "people/kim.md": "# 김민수\n\n김민수는 서울에서 일합니다. 회의는 월요일입니다.\n",
    "people/ana.md": "# Ana\n\nAna runs the night shift ledger in Lisbon.\n",
    "logs/pc.md": "# ＰＣの設定\n\n２０２４年にﾃﾞｰﾀを移した。\n",
    "logs/wide.md": "# Wide\n\nＯｎｌｙ ｗｉｄｅ letters here.\n",  # no CJK character
}


@pytest.fixture
def vault_root(tmp_path: Path) -> Path:
    root = new_vault(tmp_path)
    for rel, text in NOTES.items():
        write(root, rel, text)
    return root


@pytest.mark.parametrize(
    ("word", "want"),
    [
        ("kafka", ["kafka"]),
        ("東京都に住んでいます", ["東京都に住んでいます"]),
        ("猫", ["猫"]),
        ("iphone用のケース", ["iphone", "用のケース"]),
        ("db迁移v2", ["db", "迁移", "v2"]),
        ("서울에서", ["서울에서"]),
        ("𠮷野家", ["𠮷野家"]),  # a character beyond the BMP (Han extension B)
    ],
)
def test_a_query_word_is_split_where_its_script_changes(word: str, want: list[str]) -> None:
    assert terms(word) == want


def test_a_run_no_chunk_holds_asks_for_its_pairs_instead() -> None:
    held = {"東京", "天気", "用のケース"}
    asked: list[str] = []

    def docs_of(term: str) -> int:
        asked.append(term)
        return int(term in held)

    got = keyword_terms(["東京の天気は", "iphone", "用のケース", "猫"], docs_of)
    assert got == ["東京", "京の", "の天", "天気", "気は", "iphone", "用のケース", "猫"]
    assert asked == ["東京の天気は", "用のケース"]  # only runs of 3+ are looked up
    long_run = "".join(chr(0x4E00 + i) for i in range(200))
    asked.clear()
    got = keyword_terms([long_run], docs_of)  # a page pasted: not looked up, capped
    assert asked == [] and got == [long_run[i : i + 2] for i in range(64)]
    asked.clear()
    runs = ["".join(chr(0x4E00 + 40 * r + i) for i in range(30)) for r in range(10)]
    assert len(keyword_terms(runs, docs_of)) == 64
    assert asked == runs[:3]  # 29 pairs each: the fourth run would be cut, not looked up


def test_only_these_characters_are_spaced_and_a_text_without_them_is_the_same_string() -> None:
    text = "Ana runs the ledger, café, naïve, Ελληνικά, русский, عربى"
    assert spaced(text) is text
    assert spaced("住む、東京") == " 住  む 、 東  京 "
    assert fold("ＰＣ２０２４ﾃﾞｰﾀ") == "PC2024データ" and fold(text) is text
    assert query_terms("東京の天気は? iPhone用") == ["東京の天気は", "iphone", "用"]
    # a run is a phrase of its characters (traditional ones as simplified: 東 as 东); a
    # quote in a term cannot break out of it
    assert fts_query(["東京", 'a"b']) == '" 东  京 " OR "a""b"'


def test_a_word_inside_a_run_is_found_in_every_script(vault_root: Path) -> None:
    with open_vault(vault_root) as v:
        v.sync()
        assert by_keywords(v, "東京") == ["projects/weather.md", "people/tanaka.md"]
        assert by_keywords(v, "コーヒー") == ["people/tanaka.md"]
        assert by_keywords(v, "数据库") == ["projects/meeting.md"]
        assert by_keywords(v, "서울") == ["people/kim.md"]
        assert by_keywords(v, "会议") == ["projects/meeting.md"]  # the title's run too
        assert by_keywords(v, "ledger") == ["people/ana.md"]
        # full-width letters and digits, half-width kana: found in their usual width
        for query in ("PC", "ＰＣ", "2024", "データ", "ﾃﾞｰﾀ", "pcの設定"):
            assert by_keywords(v, query) == ["logs/pc.md"], query
        assert by_keywords(v, "wide") == ["logs/wide.md"]
        # two characters found apart are no pair: 東 and 都 are both in the note,
        # never side by side
        assert by_keywords(v, "東都") == []
        # a question as one writes it, no spaces: the note holding more of its pairs first
        assert by_keywords(v, "東京の天気はどうですか")[0] == "projects/weather.md"
        hits = v.search("東京の天気", k=3)
        assert hits[0].path == "projects/weather.md"


def test_a_run_found_as_written_matches_only_where_it_stands(tmp_path: Path) -> None:
    root = new_vault(tmp_path)
    write(root, "a.md", "# A\n\n打开列表视图。\n")
    write(root, "b.md", "# B\n\n列表很长。表视不是词。视图也很多。\n")
    with open_vault(root) as v:
        v.sync()
        # b holds the pairs 列表 表视 视图, never side by side: no match, as when the
        # run was one token
        assert by_keywords(v, "列表视图") == ["a.md"]
        assert set(by_keywords(v, "列表")) == {"a.md", "b.md"}  # inside a's run too
        # a run no note holds: its pairs, the note holding more of them first
        assert by_keywords(v, "列表视图很长") == ["b.md", "a.md"]
        assert v.search("列表视图", k=1)[0].path == "a.md"


def test_every_path_that_writes_a_chunk_keeps_the_keyword_table_exact(vault_root: Path) -> None:
    with open_vault(vault_root) as v:
        v.sync()
        integrity(vault_root)
        weather = vault_root / "projects" / "weather.md"
        weather.write_text(weather.read_text("utf-8") + "\n京都も晴れです。\n", "utf-8")
        v.sync()  # an edit: the chunk's keyword row taken out with the values it was given
        integrity(vault_root)
        # 京都 stands alone in the new line, and inside 東京都 in Tanaka's note
        assert set(by_keywords(v, "京都")) == {"projects/weather.md", "people/tanaka.md"}
        (vault_root / "projects" / "meeting.md").rename(vault_root / "projects" / "会议.md")
        v.sync()  # a rename
        integrity(vault_root)
        assert by_keywords(v, "迁移") == ["projects/会议.md"]
        (vault_root / "people" / "tanaka.md").unlink()
        v.sync()  # a delete
        integrity(vault_root)
        assert by_keywords(v, "コーヒー") == []
        assert by_keywords(v, "東京") == ["projects/weather.md"]


# schema 7's keyword view and triggers: the columns as they are, no function
V7_FTS = (
    "DROP TRIGGER chunks_fts_removed",
    "DROP TRIGGER chunks_fts_changed",
    "DROP VIEW chunks_fts_source",
    f"""CREATE VIEW chunks_fts_source(label, text, title, headings, about) AS
    SELECT label, text, title, {HEADINGS_SQL.format("chunks")}, about FROM chunks""",
    f"""CREATE TRIGGER chunks_fts_removed AFTER DELETE ON chunks BEGIN
    INSERT INTO chunks_fts(chunks_fts, rowid, text, title, headings, about)
    VALUES('delete', old.label, old.text, old.title, {HEADINGS_SQL.format("old")}, old.about);
END""",
    f"""CREATE TRIGGER chunks_fts_changed AFTER UPDATE OF text, title, heading, about
ON chunks WHEN old.text IS NOT new.text OR old.title IS NOT new.title
    OR old.heading IS NOT new.heading OR old.about IS NOT new.about BEGIN
    INSERT INTO chunks_fts(chunks_fts, rowid, text, title, headings, about)
    VALUES('delete', old.label, old.text, old.title, {HEADINGS_SQL.format("old")}, old.about);
    INSERT INTO chunks_fts(rowid, text, title, headings, about)
    VALUES(new.label, new.text, new.title, {HEADINGS_SQL.format("new")}, new.about);
END""",
)


@pytest.mark.parametrize("version", ["7", None])
def test_an_index_of_schema_7_has_its_cjk_rows_keyed_again_and_their_notes_read_again(
    vault_root: Path, version: str | None
) -> None:
    """``None``: the tables of schema 7 without their version (an older memvault killed
    on its first open between the two): its view and triggers are of the old shape too."""
    with open_vault(vault_root) as v:
        v.sync()
    db = sqlite3.connect(vault_root / ".memvault" / "index.db", isolation_level=None)
    register(db)
    rows = db.execute(
        "SELECT label, text, title, headings, about FROM chunks_fts_source"
    ).fetchall()
    db.execute("BEGIN")
    for row in rows:  # the keyword rows as schema 7 gave them: the columns as they are
        db.execute(
            "INSERT INTO chunks_fts(chunks_fts, rowid, text, title, headings, about) "
            "VALUES('delete', ?, ?, ?, ?, ?)",
            row,
        )
    for statement in V7_FTS:
        db.execute(statement)
    for label, *_ in rows:
        db.execute(
            "INSERT INTO chunks_fts(rowid, text, title, headings, about) "
            "SELECT label, text, title, headings, about FROM chunks_fts_source WHERE label = ?",
            (label,),
        )
    if version is None:
        db.execute("DELETE FROM meta WHERE key = 'schema_version'")
    else:
        db.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (version,))
    db.execute("COMMIT")
    assert db.execute(  # what schema 7 found: nothing inside a run
        "SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH ?", (fts_query(["東京"]),)
    ).fetchone() == (0,)
    db.close()
    with open_vault(vault_root) as v:
        assert v.engine.store.meta("schema_version") == str(SCHEMA_VERSION) == "19"
        integrity(vault_root)
        assert by_keywords(v, "東京") == ["projects/weather.md", "people/tanaka.md"]
        assert by_keywords(v, "ledger") == ["people/ana.md"]
        assert by_keywords(v, "wide") == ["logs/wide.md"]  # no CJK, keyed again all the same
        report = v.sync()  # the notes holding CJK read again (cut at full stops now)
        assert set(report.modified) == {p for p, t in NOTES.items() if keyed(t)}
        assert report.embedded_chunks == 0  # their chunks' texts the same: vectors kept
        integrity(vault_root)
        for path in NOTES:  # every keyword row taken out with the values it was given
            (vault_root / path).unlink()
        v.sync()
    with sqlite3.connect(vault_root / ".memvault" / "index.db") as db:
        db.execute("CREATE VIRTUAL TABLE temp.vocab USING fts5vocab(main, chunks_fts, 'row')")
        left = {t for (t,) in db.execute("SELECT term FROM temp.vocab")}
    db.close()
    assert not left & {"東", "京", "ledger", "wide", "pc"}, left


def test_both_backends_give_the_same_keyword_hits(
    tmp_path: Path, pg_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    queries = ["東京", "東京の天気はどうですか", "数据库迁移", "서울", "会议", "コーヒー", "ledger"]
    queries += ["PC", "ﾃﾞｰﾀ", "wide"]

    def answers(root: Path) -> dict[str, list[tuple[str, float]]]:
        # 東 ends the text column, 京 opens the title: FTS5's phrase never crosses columns
        write(root, "places/kyoto.md", "---\ntitle: 京都\n---\n我住在東\n")
        return keyword_answers(root, NOTES, queries)

    expected = answers(new_vault(tmp_path, "sqlite_vault"))
    monkeypatch.setenv("MEMVAULT_INDEX_STORE", "postgres")
    monkeypatch.setenv("MEMVAULT_INDEX_DSN", pg_dsn)
    got = answers(new_vault(tmp_path, "pg_vault"))
    assert got == expected  # the same chunks, the same BM25 scores
    assert [p for p, _ in expected["東京"]] == ["projects/weather.md", "people/tanaka.md"]


def test_a_postgres_index_of_schema_6_gets_its_cjk_keywords_again(
    tmp_path: Path, pg_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMVAULT_INDEX_STORE", "postgres")
    monkeypatch.setenv("MEMVAULT_INDEX_DSN", pg_dsn)
    root = new_vault(tmp_path)
    for rel, text in NOTES.items():
        write(root, rel, text)
    with open_vault(root) as v:
        v.sync()
        schema = v.engine.store.schema
    with psycopg.connect(pg_dsn, autocommit=True) as conn:  # schema 6's keywords: runs whole
        rows = conn.execute(
            f'SELECT label, text, title, headings, about FROM "{schema}".chunks'
        ).fetchall()
        before = {}
        for label, *columns in rows:
            before[label] = old_tsvector(*columns)
            conn.execute(
                f'UPDATE "{schema}".chunks SET keywords = %s::tsvector, ntok = %s WHERE label = %s',
                (*before[label], label),
            )
        conn.execute(f"UPDATE \"{schema}\".meta SET value = '6' WHERE key = 'schema_version'")
        ana = conn.execute(
            f"SELECT label, keywords::text FROM \"{schema}\".chunks WHERE path = 'people/ana.md'"
        ).fetchall()
        # what schema 6 found: nothing inside a run
        found = conn.execute(
            f'SELECT count(*) FROM "{schema}".chunks WHERE keywords @@ %s::tsquery',
            (pg_keywords.term_query("東京"),),
        ).fetchone()
        assert found == (0,)
    with open_vault(root, mode="read") as r:  # a reader does not upgrade: asks as before
        assert r.engine.store.meta("schema_version") == "6" and not r.engine.store.cjk
        assert by_keywords(r, "会议记录") == ["projects/meeting.md"]  # a run, one token
    with open_vault(root) as v:
        assert v.engine.store.meta("schema_version") == str(PG_SCHEMA_VERSION) == "18"
        assert by_keywords(v, "東京") == ["projects/weather.md", "people/tanaka.md"]
        assert by_keywords(v, "서울") == ["people/kim.md"]
        assert by_keywords(v, "wide") == ["logs/wide.md"]
        kept = v.engine.store._pg.raw(
            "SELECT label, keywords::text FROM chunks WHERE path = 'people/ana.md'"
        ).fetchall()
        assert ana and kept == ana  # a chunk with no such character is not touched
        assert by_keywords(v, "ledger") == ["people/ana.md"]
        assert by_keywords(v, "wide") == ["logs/wide.md"]  # no CJK, keyed again all the same
        report = v.sync()  # the notes holding CJK read again (cut at full stops now)
        assert set(report.modified) == {p for p, t in NOTES.items() if keyed(t)}
        assert report.embedded_chunks == 0


def test_the_index_part_keeps_the_lines_naming_a_cjk_word_inside_a_run() -> None:
    memory = (
        "# Memory Index\n\n## Projects\n<!-- memvault:begin projects -->\n"
        "- [[projects/会议记录]] - 每周的会议和决定。\n"
        "- [[projects/天气预报]] - 明天东京晴。\n"
        + "".join(f"- [[projects/p{i}]] - 第{i}个项目的说明文字。\n" for i in range(40))
        + "<!-- memvault:end projects -->\n"
    )
    got = index_part(memory, 80, len, ["会议"])  # a character a token
    assert "会议记录" in got and "天气" not in got and "p1" not in got
    assert index_part(memory, 80, len, ["东京"]) == (
        "# Memory Index\n\n## Projects\n- [[projects/天气预报]] - 明天东京晴。"
    )


def test_a_context_reads_cjk_words_inside_runs_and_full_width_colons() -> None:
    texts = ["同步服务很好", "我喜欢同步笔记", "同步设置", "别的"]
    assert common_terms(["同步", "sync"], texts) == {"同步"}  # in 3 of 4, inside runs
    assert common_terms(["sync"], ["sync it", "a sync", "resync"]) == {"sync"}  # whole words
    assert subject_words("**张三**：喜欢咖啡") == {"张三"}
    assert on_subject("**张三**：喜欢咖啡", frozenset(query_terms("张三喜欢什么？")))
    assert not on_subject("**李四**：喜欢茶", frozenset(query_terms("张三喜欢什么？")))
    assert on_subject("**Caroline**: hi", frozenset(query_terms("what did Caroline say")))


def test_a_filtered_search_asks_for_the_pairs_when_no_allowed_chunk_holds_the_run(
    tmp_path: Path,
) -> None:
    """删除远程仓库 stands as written in a note outside the folder searched: counted over
    the whole vault it is asked for whole, and inside the folder nothing held it (the
    keyword side was empty there). Its pairs are asked for instead."""
    root = new_vault(tmp_path)
    write(root, "sync/remote.md", "# 远程\n\n如何删除远程仓库。\n")
    write(root, "files/b1.md", "# 文件\n\n你可以删除文件，也可以移动远程的仓库。\n")
    for i in range(12):
        write(root, f"files/other{i}.md", f"# 其他{i}\n\n第{i}天的天气很好，我们吃了午饭。\n")
    with open_vault(root) as v:
        v.sync()
        assert by_keywords(v, "删除远程仓库") == ["sync/remote.md"]
        for q in ("删除远程仓库", "远程仓库删除"):
            assert v.search(q, k=5, folder="files")[0].path == "files/b1.md", q


def test_a_snippet_stands_where_a_run_or_else_its_pairs_are() -> None:
    text = "前言。" * 120 + "东京的天气很好，明天下雨。" + "结尾。" * 120
    assert "东京的天气" in snippet(text, ["东京的天气"])
    # a question typed as one run is found nowhere as written: its pairs place the cut
    assert "东京的天气" in snippet(text, ["东京的天气怎么样"])
    assert snippet(text, ["猫狗猪"]).startswith("前言。")  # no pair anywhere: the start


@pytest.mark.parametrize(
    ("text", "title", "heading"),
    [
        ("plain ascii words", "Title", ("Plain",)),  # no call: given as it is
        ("a NUL\x00 then 東京", "T", ("H",)),  # length() stops at a NUL: the call
        ("café au lait", "Crème", ("Déjà vu",)),  # not ASCII, nothing to space
        ("ＰＣ and 東京", "ﾃﾞｰﾀ", ("見出し", "back\\u slash")),  # a literal \u in a name
        ("ok", "ok", ('quote " and \\',)),
    ],
)
def test_every_column_reaches_the_keyword_table_as_keyword_form_gives_it(
    tmp_path: Path, text: str, title: str, heading: tuple[str, ...]
) -> None:
    """The view and the triggers skip the call for a text of ASCII only (as many
    characters as bytes): whatever the shape, a row goes in, moves and goes out with
    the values ``keyword_form`` gives (FTS5's check of the index against the view)."""
    from memvault.index.rows import NewChunk, NoteRow
    from memvault.index.store import Store

    store = Store(tmp_path / "index.db", tmp_path / "cache.db")
    row = NoteRow(path="n.md", size=1, mtime_ns=1, sha256="x", kind="note")
    with store.transaction() as conn:
        store.put_note(conn, row)
        store.insert_chunks(conn, "n.md", [NewChunk(0, heading, 1, 1, text, "s", 3, title, text)])
    db = sqlite3.connect(tmp_path / "index.db", isolation_level=None)
    register(db)
    check = "INSERT INTO chunks_fts(chunks_fts, rank) VALUES('integrity-check', 1)"
    db.execute(check)
    label = store.chunks_of("n.md")[0].label
    with store.transaction() as conn:  # a move that changes every column (the trigger)
        store.move_chunk(conn, label, NewChunk(0, heading[::-1], 2, 2, title, "s", 3, text, ""))
    db.execute(check)
    with store.transaction() as conn:
        store.delete_note(conn, "n.md")
    db.execute(check)
    db.execute("CREATE VIRTUAL TABLE temp.v USING fts5vocab(main, chunks_fts, 'row')")
    assert db.execute("SELECT count(*) FROM temp.v").fetchone() == (0,)
    db.close()
    store.close()
