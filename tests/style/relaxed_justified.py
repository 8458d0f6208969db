#!/usr/bin/env python3
"""Every relaxed atomic access in src/ says why relaxed is enough.

A line that uses memory_order_relaxed needs a comment with "relaxed:" on it or on one of the
six lines above it (one comment may cover the accesses of a short block). On ARM a relaxed
access is a plain load or store, free to be reordered with the accesses around it, so each one
is a claim that nothing else is published through it; the comment is where the claim is made.
"""
import pathlib
import re
import sys

root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".")
access = re.compile(r"memory_order_relaxed|memory_order::relaxed")
unjustified = []
sites = 0
for path in sorted((root / "src").rglob("*.[ch]pp")):
    lines = path.read_text().splitlines()
    for i, line in enumerate(lines):
        if not access.search(line):
            continue
        sites += 1
        window = lines[max(0, i - 6): i + 1]
        if not any("relaxed:" in w for w in window):
            unjustified.append(f"{path.relative_to(root)}:{i + 1}: {line.strip()}")
for u in unjustified:
    print(u)
print(f"{sites} relaxed accesses, {len(unjustified)} without a 'relaxed:' reason")
sys.exit(1 if unjustified else 0)
