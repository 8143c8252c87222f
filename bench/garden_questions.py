"""Questions for a real public vault: github.com/wrewsama/obsidian-vault at c79d50e
(427 notes: short notes from one template, tag notes, book and video notes that
link to many of them), written by hand as a user would ask, before any ranking
was looked at. Neither the vault nor this file's output is kept in the project.

    git clone https://github.com/wrewsama/obsidian-vault /tmp/garden-src
    git -C /tmp/garden-src checkout c79d50e
    python bench/garden_questions.py /tmp/garden-qa.json
    python bench/note_recall.py --only other --other-vault /tmp/garden-src \\
        --other-qa /tmp/garden-qa.json --work /tmp/nr

Folds as for the other sets: A = even-numbered questions, B = odd. The last two ask
one link away (the book a note's References name).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

SOURCE = "github.com/wrewsama/obsidian-vault @ c79d50e"
QUESTIONS = [
    (
        "How do I find which commit introduced a bug by halving the history?",
        "Main Notes/Git Bisect.md",
    ),
    (
        "How to roll out a breaking schema change in phases so old and new clients both keep working?",
        "Main Notes/Expand Contract Pattern.md",
    ),
    (
        "Replacing an old legacy system gradually behind a facade without downtime",
        "Main Notes/Strangler Fig Pattern.md",
    ),
    (
        "Why does my TCP connection wait about 200 ms before acknowledging?",
        "Main Notes/TCP delayed ACK.md",
    ),
    (
        "A host broadcasts an unsolicited request announcing its own IP and MAC. What is that for?",
        "Main Notes/Gratuitous ARP.md",
    ),
    (
        "How can I use memory pages bigger than 4KB to get better TLB hit rates?",
        "Main Notes/Huge Pages in Linux.md",
    ),
    (
        "Which kill signal can't be caught or handled by the process?",
        "Main Notes/SIGINT vs SIGTERM vs SIGKILL.md",
    ),
    (
        "Why do new files get fewer permissions than their parent directory? What masks them?",
        "Main Notes/umask.md",
    ),
    (
        "Why is `a is b` true for small integers like 256 but not for bigger ones?",
        "Main Notes/Python Interning.md",
    ),
    (
        "How do I stop Python instances from having a __dict__ and store attributes at fixed offsets?",
        "Main Notes/Python Slots.md",
    ),
    ("When does the else after a for loop run?", "Main Notes/Weird Else Blocks in Python.md"),
    (
        "In Go, in what order do deferred calls run when the function returns?",
        "Main Notes/Defer in Go.md",
    ),
    (
        "Why can I use a JavaScript variable before the line where it is declared?",
        "Main Notes/Hoisting.md",
    ),
    (
        "How many replicas must acknowledge a write before it counts as successful?",
        "Main Notes/Write Concern.md",
    ),
    (
        "Which storage structure batches writes in a memtable and flushes sorted tables to disk?",
        "Main Notes/LSM Trees.md",
    ),
    (
        "Choreography versus orchestration for a transaction spanning several microservices",
        "Main Notes/Distributed Transactions - Sagas.md",
    ),
    (
        "What happens when a consumer joins or dies in a Kafka consumer group?",
        "Main Notes/Rebalancing in Kafka.md",
    ),
    (
        "Why is writing sequentially faster on an SSD, given how it garbage collects blocks?",
        "Main Notes/Why Sequential IO is fast even on SSDs.md",
    ),
    (
        "How do time series databases compress float metrics that change only slightly?",
        "Main Notes/XOR Floating Point Compression.md",
    ),
    ("Algorithm for the stable marriage matching problem", "Main Notes/Gale Shapley Algorithm.md"),
    (
        "How do I measure an investment's return adjusted for its risk?",
        "Main Notes/Sharpe Ratio.md",
    ),
    (
        "Tips to get my pull requests reviewed more quickly",
        "Main Notes/Strategies To Get PRs Reviewed Faster.md",
    ),
    (
        "Using assertions to state what must never happen in the code",
        "Main Notes/Negative Space Programming.md",
    ),
    (
        "How can I have several branches checked out at once in separate folders without cloning again?",
        "Main Notes/Git Worktrees.md",
    ),
    (
        "How do I watch a directory for file creation and deletion events on Linux?",
        "Main Notes/inotify.md",
    ),
    (
        "Workflows that survive crashes and run to completion, like Temporal",
        "Main Notes/Durable Execution.md",
    ),
    (
        "How should I introduce myself at the start of an interview?",
        "Main Notes/Self Introduction Guidelines.md",
    ),
    (
        "How do I pin a process to one CPU core and keep the scheduler off it?",
        "Main Notes/CPU pinning.md",
    ),
    (
        "Deadlock avoidance by checking that granting a request still lets every process finish",
        "Main Notes/Banker's Algorithm.md",
    ),
    (
        "Probes that stop an idle TCP connection from being dropped by a NAT",
        "Main Notes/TCP Keepalive.md",
    ),
    (
        "What's the difference between focused distraction-free work and shallow work?",
        "Source Materials/Books/Deep Work.md",
    ),
    (
        "Negotiation advice about using a calm late-night FM DJ voice",
        "Source Materials/Books/Never Split the Difference.md",
    ),
    (
        "Tips for running several Claude Code sessions in parallel and starting in plan mode",
        "Source Materials/Websites/Claude Code Tips From Boris Cherny.md",
    ),
    (
        "How did Facebook cut page load latency when fetching many keys from memcached?",
        "Source Materials/Papers/Scaling Memcache at Facebook.md",
    ),
    (
        "Which book did my notes on write concern come from?",
        "Source Materials/Books/NoSQL Distilled.md",
    ),
    (
        "Which book did I take the CQRS notes from?",
        "Source Materials/Books/Understanding Distributed Systems.md",
    ),
]


def main(out: str) -> int:
    data = {"source": SOURCE, "questions": [{"q": q, "notes": [n]} for q, n in QUESTIONS]}
    Path(out).write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "garden-qa.json"))
