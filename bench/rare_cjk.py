"""Is the one note holding a rare word found when a Chinese or Japanese question asks for it?

    python bench/rare_cjk.py --work /tmp/rare/cjk                  # search, both forms
    python bench/rare_cjk.py --work /tmp/rare/cjk --grid g.json    # configs side by side
    python bench/rare_cjk.py --work /tmp/rare/cjk --context 1000   # Vault.context

bench/rare_terms.py's probes, for questions written without spaces. An agent's memory
kept in Japanese and Chinese (generated here, seeded): people, projects and day logs
in ordinary prose, half the logs Japanese, half Chinese, with identifiers planted once
each: tickets (PAY-4521), hosts (kestrel-db-04), error codes (ERR_LEDGER_STALE), rare
surnames and full names (勅使河原, 欧阳修远), code names (カワセミ計画, 凤凰). Per probe
(an identifier the index holds in one note only), the bare word and a question in the
note's language with the word inside the sentence ("PAY-4521の担当者は誰ですか",
"关于凤凰的决定是什么"): the holding note's rank among ``Vault.search(q, k=10)``'s
notes (hit@1, hit@10), or with ``--context`` whether a cited source of the note covers
a line holding the word (``line``). Folds: A the even probes, B the odd.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "daemon"))
sys.path.insert(0, str(ROOT / "bench"))

from locomo_eval import parse_sets  # noqa: E402
from memvault.api import Vault  # noqa: E402
from rare_terms import _rates  # noqa: E402

JA_PEOPLE = """佐藤健 鈴木花子 高橋翔 田中美咲 伊藤大輔 渡辺愛 山本拓海 中村陽子 小林誠 加藤恵
吉田亮 山田優 佐々木彩 松本学 井上舞 木村隼人 林真理 斎藤光 清水葵 山口蓮""".split()  # noqa: SIM905
ZH_PEOPLE = """王伟 李娜 张敏 刘洋 陈静 杨帆 赵磊 黄婷 周杰 吴刚 徐丽 孙浩 马超 朱琳 胡军
郭强 何平 高翔 林峰 罗欣""".split()  # noqa: SIM905
JA_RARE = """勅使河原 四十物 御手洗 東海林 小鳥遊 月見里 百目鬼 一尺八寸 九十九里 釈迦牟尼仏
薬師寺 五百旗頭 左衛門三郎 留守居 十文字""".split()  # noqa: SIM905
ZH_RARE = """欧阳修远 司马长风 诸葛青云 慕容雪 皇甫嵩岳 东方既白 独孤求真 南宫问天 公孙策远
夏侯惇明 尉迟恭平 长孙无垢 端木赐雨 宇文化及 澹台灭明""".split()  # noqa: SIM905
JA_CODES = [
    "カワセミ",
    "ハヤブサ",
    "ミミズク",
    "ヤマセミ",
    "オオルリ",
    "ライチョウ",
    "ホオジロ",
    "ツグミ",
]
ZH_CODES = ["凤凰", "麒麟", "貔貅", "饕餮", "鲲鹏", "青鸾", "白泽", "毕方", "烛龙", "朱雀"]
JA_PROJECTS = {
    "kessai": "決済基盤の移行",
    "kensaku": "検索機能の刷新",
    "touroku": "会員登録の改善",
    "kansi": "監視アラートの整理",
    "kakin": "従量課金の導入",
}
ZH_PROJECTS = {
    "zhifu": "支付账本迁移",
    "sousuo": "站内搜索重建",
    "shucang": "数据仓库整合",
    "zhiban": "值班轮换优化",
    "chengben": "云成本削减",
}
JA_TOPICS = ("{p}の遅延", "{p}のリリース計画", "{p}の不安定なテスト", "{p}の予算", "{p}の振り返り")
ZH_TOPICS = ("{p}的延迟问题", "{p}的上线计划", "{p}的测试不稳定", "{p}的预算", "{p}的复盘")
JA_LINES = (
    "朝会で{who}さんが{topic}について報告した。木曜日に再確認する。",
    "{who}さんと{topic}の件でペアプロをした。古いコードを読むのに時間がかかった。",
    "{who}さんと1on1。{topic}とキャリアについて話した。",
    "{topic}について{who}さんにメモを書いた。",
    "{topic}は次のスプリントに回した。担当は{who}さん。",
)
ZH_LINES = (
    "站会上{who}提到了{topic}，我们约定周四再看。",
    "和{who}一起处理{topic}，大部分时间在读旧代码。",
    "和{who}一对一，聊了{topic}和职业发展。",
    "给{who}写了关于{topic}的笔记。",
    "{topic}推迟到下个迭代，由{who}负责。",
)
JA_PLANTS = {
    "ticket": ("{topic}のために{t}を起票した。", "{who}さんが{topic}を直して{t}をクローズした。"),
    "host": (
        "{topic}の調査中に{t}を二回再起動した。",
        "{t}のディスクが{topic}の最中にいっぱいになった。",
    ),
    "error": ("{topic}の間にログで{t}が出ていた。", "{who}さんが{t}の原因を{topic}まで追った。"),
    "surname": (
        "ベンダーの{t}さんと{topic}について電話した。",
        "{who}さんの紹介で{t}さんに会った。",
    ),
    "codename": (
        "{t}計画を{who}さんに提案した。{topic}の小さな試作。",
        "{t}計画は来期まで保留にした。",
    ),
}
ZH_PLANTS = {
    "ticket": ("为{topic}开了{t}。", "{who}修好{topic}后关闭了{t}。"),
    "host": ("排查{topic}时重启了{t}两次。", "{t}在{topic}期间磁盘满了。"),
    "error": ("{topic}期间日志里出现了{t}。", "{who}把{t}追查到了{topic}。"),
    "surname": ("和供应商的{t}通电话，谈了{topic}。", "{who}介绍我认识了{t}。"),
    "codename": ("向{who}提出了{t}方案，是{topic}的一个小试验。", "{t}方案搁置到下季度。"),
}
JA_QUESTIONS = {
    "ticket": ("{t}の担当者は誰ですか", "{t}はどうなりましたか"),
    "host": ("{t}で何が起きましたか", "{t}について教えて"),
    "error": ("{t}の原因は何ですか", "{t}はいつ出ましたか"),
    "surname": ("{t}さんは誰ですか", "{t}さんと何を話しましたか"),
    "codename": ("{t}計画はどうなりましたか", "{t}計画について教えて"),
}
ZH_QUESTIONS = {
    "ticket": ("{t}的负责人是谁", "{t}是怎么回事"),
    "host": ("{t}出了什么问题", "关于{t}我们知道什么"),
    "error": ("{t}的原因是什么", "我们什么时候见过{t}"),
    "surname": ("{t}是谁", "我和{t}谈了什么"),
    "codename": ("关于{t}的决定是什么", "{t}方案后来怎么样了"),
}
HOSTS = [
    "kestrel",
    "osprey",
    "merlin",
    "harrier",
    "falcon",
    "condor",
    "plover",
    "avocet",
    "curlew",
    "godwit",
]


def vault(root: Path, seed: int = 5, days: int = 120) -> list[tuple[str, str, str]]:
    """Write the vault under ``root``; the planted (language, kind, identifier)s."""
    rng = random.Random(seed)
    numbers = list(range(1100, 9999))
    rng.shuffle(numbers)
    left = {
        ("ja", "surname"): list(JA_RARE),
        ("zh", "surname"): list(ZH_RARE),
        ("ja", "codename"): list(JA_CODES),
        ("zh", "codename"): list(ZH_CODES),
    }
    planted: list[tuple[str, str, str]] = []

    def ident(lang: str, kind: str) -> str:
        if kind == "ticket":
            return f"{rng.choice(('PAY', 'INFRA', 'WEB', 'DATA'))}-{numbers.pop()}"
        if kind == "host":
            return (
                f"{rng.choice(HOSTS)}-{rng.choice(('db', 'api', 'etl'))}-{numbers.pop() % 97:02d}"
            )
        if kind == "error":
            return f"E{numbers.pop()}" if rng.random() < 0.5 else f"0x{rng.getrandbits(32):08X}"
        return left[(lang, kind)].pop()

    def line(lang: str) -> str:
        people = JA_PEOPLE if lang == "ja" else ZH_PEOPLE
        projects = JA_PROJECTS if lang == "ja" else ZH_PROJECTS
        topic = rng.choice(JA_TOPICS if lang == "ja" else ZH_TOPICS)
        topic = topic.format(p=rng.choice(list(projects.values())))
        who = rng.choice(people)
        if rng.random() < 0.25:
            kinds = ["ticket", "host", "error"] + [
                k for k in ("surname", "codename") if left[(lang, k)]
            ]
            kind = rng.choice(kinds)
            t = ident(lang, kind)
            planted.append((lang, kind, t))
            plants = JA_PLANTS if lang == "ja" else ZH_PLANTS
            return rng.choice(plants[kind]).format(t=t, who=who, topic=topic)
        lines = JA_LINES if lang == "ja" else ZH_LINES
        return rng.choice(lines).format(who=who, topic=topic)

    def write(rel: str, text: str) -> None:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")

    for lang, people in (("ja", JA_PEOPLE), ("zh", ZH_PEOPLE)):
        for i, name in enumerate(people):
            head = "## メモ" if lang == "ja" else "## 笔记"
            body = [f"# {name}\n", head, *(f"- {line(lang)}" for _ in range(rng.randint(2, 4)))]
            write(f"people/{lang}-{i:02d}.md", "\n".join(body) + "\n")
    for lang, projects in (("ja", JA_PROJECTS), ("zh", ZH_PROJECTS)):
        for slug, what in projects.items():
            head = "## 状況" if lang == "ja" else "## 状态"
            body = [f"# {what}\n", head, *(f"- {line(lang)}" for _ in range(rng.randint(3, 6)))]
            write(f"projects/{slug}.md", "\n".join(body) + "\n")
    for d in range(days):
        lang = "ja" if d % 2 == 0 else "zh"
        month, dom = 1 + d // 28, 1 + d % 28
        entries = sorted(
            (f"{rng.randint(8, 18):02d}:{rng.randint(0, 59):02d}", line(lang))
            for _ in range(rng.randint(3, 7))
        )
        body = [f"# 2026-{month:02d}-{dom:02d}\n", *(f"- {t} {text}" for t, text in entries)]
        write(f"logs/2026-{month:02d}-{dom:02d}.md", "\n".join(body) + "\n")
    return planted


def holders(root: Path, term: str) -> set[str]:
    """The notes whose text holds ``term`` (as written; MEMORY.md and the listings the
    daemon writes too: a probe is a word one note holds)."""
    return {
        p.relative_to(root).as_posix()
        for p in root.rglob("*.md")
        if term in p.read_text(encoding="utf-8")
    }


def probes(
    root: Path, planted: Sequence[tuple[str, str, str]], rng: random.Random
) -> list[dict[str, Any]]:
    out = []
    order = list(planted)
    rng.shuffle(order)
    for lang, kind, t in order:
        notes = holders(root, t)
        if len(notes) != 1:
            continue
        forms = (JA_QUESTIONS if lang == "ja" else ZH_QUESTIONS)[kind]
        q = rng.choice(forms).format(t=t)
        out.append(
            {"lang": lang, "kind": kind, "term": t, "note": next(iter(notes)), "question": q}
        )
    return out


def note_rank(v: Vault, query: str, note: str) -> int | None:
    seen: list[str] = []
    for hit in v.search(query, k=10):
        if hit.path not in seen:
            seen.append(hit.path)
    return seen.index(note) + 1 if note in seen else None


def context_line(v: Vault, root: Path, query: str, budget: int, p: dict[str, Any]) -> bool:
    text = (root / p["note"]).read_text(encoding="utf-8").splitlines()
    lines = {i for i, line in enumerate(text, start=1) if p["term"] in line}
    sources = [s for s in v.context(query, budget=budget).sources if s.path == p["note"]]
    return any(s.line_start <= i <= s.line_end for s in sources for i in lines)


def run(
    v: Vault, root: Path, found: list[dict[str, Any]], budgets: Sequence[int]
) -> dict[str, Any]:
    out: dict[str, Any] = {"probes": len(found)}
    misses = []
    for form, key in (("bare", "term"), ("question", "question")):
        for lang in ("ja", "zh", "all"):
            mine = [p for p in found if lang in ("all", p["lang"])]
            if budgets:
                for b in budgets:
                    got = [context_line(v, root, p[key], b, p) for p in mine]
                    out[f"{form}@{b}/{lang}"] = {
                        fold: round(sum(got[start::2]) / max(len(got[start::2]), 1), 3)
                        for fold, start in (("A", 0), ("B", 1))
                    }
                    if lang == "all":
                        misses += [
                            {"form": form, "budget": b, "query": p[key]}
                            for p, g in zip(mine, got, strict=True)
                            if not g
                        ]
                continue
            ranks = [note_rank(v, p[key], p["note"]) for p in mine]
            out[f"{form}/{lang}"] = {
                fold: _rates(ranks[start::2]) for fold, start in (("A", 0), ("B", 1))
            }
            if lang == "all":
                misses += [
                    {"form": form, "query": p[key], "rank": r}
                    for p, r in zip(mine, ranks, strict=True)
                    if r != 1
                ]
    out["misses"] = misses
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--work", type=Path, required=True, help="where the indexed vault lives")
    parser.add_argument("--set", action="append", default=[], help="section.key=value")
    parser.add_argument("--grid", type=Path, help="a JSON list of {name, set: [...]}")
    parser.add_argument("--seed", type=int, default=25, help="draws the probes' questions")
    parser.add_argument("--vault-seed", type=int, default=5, help="writes the vault")
    parser.add_argument("--context", metavar="BUDGETS", help="probe Vault.context (e.g. 1000)")
    parser.add_argument("--misses", action="store_true", help="print each miss")
    args = parser.parse_args(argv)
    configs = json.loads(args.grid.read_text()) if args.grid else [{"name": "run", "set": args.set}]
    root = args.work / "cjk"
    if not root.is_dir():
        planted = vault(root, seed=args.vault_seed)
        (root / ".memvault").mkdir(parents=True, exist_ok=True)
        (args.work / "cjk-planted.json").write_text(json.dumps(planted, ensure_ascii=False))
    planted = [tuple(p) for p in json.loads((args.work / "cjk-planted.json").read_text())]
    budgets = [int(b) for b in args.context.split(",")] if args.context else []
    found: list[dict[str, Any]] | None = None
    for config in configs:
        started = time.perf_counter()
        with Vault.open(root, overrides=parse_sets(config["set"])) as v:
            v.sync()
            if found is None:  # after a sync: MEMORY.md quotes notes' first lines
                found = probes(root, planted, random.Random(args.seed))  # type: ignore[arg-type]
            result = run(v, root, found, budgets)
        if not args.misses:
            result["misses"] = len(result["misses"])
        result.update(config=config["name"], s=round(time.perf_counter() - started, 1))
        print(json.dumps(result, ensure_ascii=False), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
