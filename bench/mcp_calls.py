"""An agent's consecutive MCP calls without a daemon: the real server over stdio, each
code in turn.

    MEMVAULT_INDEX_MODEL=hash python bench/mcp_calls.py VAULT \\
        --code base=/tmp/main-export --code branch=. --runs 4 --calls 10

Each ``--code NAME=CHECKOUT`` runs ``python -m memvault mcp --vault VAULT`` with
``PYTHONPATH=CHECKOUT/daemon`` (the environment's ``MEMVAULT_INDEX_MODEL`` and the
rest passed on), driven by the SDK's client over stdio, as an agent's client does. A
run: start the server, ``initialize``, then ``--calls`` searches in a row (a few
different queries), then ``memory_get`` of the first hit, then a note appended to on
disk (as a person's editor saves it, no daemon running) and a search for the word
just written: found or not. The codes alternate run by run (base, branch, base, ...)
so the machine's load falls on both. Wall milliseconds per call as the client sees it;
the first call of a run (the open) is reported apart from the rest.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

QUERIES = ["project planning", "database migration", "who leads the team", "release risks"]


async def one_run(vault: Path, checkout: Path, calls: int) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(checkout / "daemon")}
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "memvault", "mcp", "--vault", str(vault)], env=env
    )
    times: list[float] = []
    with open(os.devnull, "w") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            first_path = None
            for i in range(calls):
                t = time.perf_counter()
                result = await session.call_tool(
                    "memory_search", {"query": QUERIES[i % len(QUERIES)], "k": 10}
                )
                times.append(time.perf_counter() - t)
                assert not result.is_error, result
                hits = (result.structured_content or {}).get("hits") or []
                first_path = first_path or (hits[0]["path"] if hits else None)
            t = time.perf_counter()
            if first_path:
                await session.call_tool("memory_get", {"path": first_path})
            get = time.perf_counter() - t
            word = "zq" + uuid.uuid4().hex[:10]
            target = vault / (first_path or "MEMORY.md")
            with target.open("a", encoding="utf-8") as f:  # a person's save, no daemon
                f.write(f"\nAdded in an editor: {word}.\n")
            time.sleep(0.1)
            t = time.perf_counter()
            result = await session.call_tool("memory_search", {"query": word, "k": 3})
            edited = time.perf_counter() - t
            hits = (result.structured_content or {}).get("hits") or []
            found = any(h["path"] == first_path for h in hits)
    return {"first": times[0], "rest": times[1:], "get": get, "edited": edited, "found": found}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("vault", type=Path)
    ap.add_argument("--code", action="append", required=True, help="NAME=CHECKOUT")
    ap.add_argument("--runs", type=int, default=4)
    ap.add_argument("--calls", type=int, default=10)
    a = ap.parse_args()
    codes = [(c.split("=", 1)[0], Path(c.split("=", 1)[1]).resolve()) for c in a.code]
    got: dict[str, list[dict[str, Any]]] = {name: [] for name, _ in codes}
    for run in range(a.runs):
        for name, checkout in codes if run % 2 == 0 else codes[::-1]:
            r = anyio.run(one_run, a.vault, checkout, a.calls)
            got[name].append(r)
            print(
                f"run {run + 1} {name}: first {r['first'] * 1e3:.0f} ms, "
                f"rest median {statistics.median(r['rest']) * 1e3:.0f} ms, "
                f"get {r['get'] * 1e3:.0f} ms, after an edit {r['edited'] * 1e3:.0f} ms "
                f"(found: {r['found']})",
                flush=True,
            )
    base = None
    for name, _ in codes:
        runs = got[name]
        rest = statistics.median([statistics.median(r["rest"]) for r in runs])
        first = statistics.median([r["first"] for r in runs])
        get = statistics.median([r["get"] for r in runs])
        edited = statistics.median([r["edited"] for r in runs])
        found = sum(r["found"] for r in runs)
        ratio = "" if base is None else f" ({rest / base:.2f}x the first code's)"
        base = rest if base is None else base
        print(
            f"{name}: a search after the first, median of run medians {rest * 1e3:.0f} ms"
            f"{ratio}; first call {first * 1e3:.0f} ms; get {get * 1e3:.0f} ms; search "
            f"after an edit on disk {edited * 1e3:.0f} ms, found {found} of {len(runs)}"
        )


if __name__ == "__main__":
    main()
