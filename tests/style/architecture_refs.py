#!/usr/bin/env python3
"""Every `file:function` that docs/ARCHITECTURE.md walks through still exists.

The walks (the life of a frame, the crossings) name places in the code as `dir/file.cpp:Name`,
`file.cpp:Class::name` or `dir/file.hpp`. A rename that leaves the page behind fails here: the
file must be found under src/ (by its path, or by its name when that is unique) and the last
part of the name must appear in it as a word. Each walk keeps its bound of hops.
"""
import pathlib
import re
import sys

root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".")
page = (root / "docs" / "ARCHITECTURE.md").read_text()
sources = [p for p in (root / "src").rglob("*") if p.suffix in (".cpp", ".hpp")]
ref = re.compile(r"`([\w/]+\.(?:cpp|hpp))(?::([\w:~]+))?`")


def find(name):
    if "/" in name:
        hits = [p for p in sources if p.as_posix().endswith("src/" + name)]
    else:
        hits = [p for p in sources if p.name == name]
    return hits[0] if len(hits) == 1 else None


missing = []
checked = 0
for m in ref.finditer(page):
    file, function = m.group(1), m.group(2)
    path = find(file)
    checked += 1
    if path is None:
        missing.append(f"{file}: no such file under src/ (or more than one)")
        continue
    if function and not re.search(r"\b" + re.escape(function.split("::")[-1]) + r"\b", path.read_text()):
        missing.append(f"{file}:{function}: {function.split('::')[-1]} is not in {path.relative_to(root)}")
# The walks stay short: hops are the numbered steps of each section.
for title, most in (("## The life of a frame", 10), ("## A command, from POST to ACK", 15)):
    if title not in page:
        missing.append(f"{title}: the section is gone")
        continue
    section = page.split(title, 1)[1].split("\n## ", 1)[0]
    hops = len(re.findall(r"^\d+\. ", section, re.M))
    if hops == 0 or hops > most:
        missing.append(f"{title}: {hops} hops (at most {most})")
if checked == 0:
    sys.exit("docs/ARCHITECTURE.md names no `file:function`: the walk is gone")
for line in missing:
    print(line)
print(f"{checked} places named, {len(missing)} missing")
sys.exit(1 if missing else 0)
