#!/usr/bin/env python3
"""Every configuration key the daemon takes is named in docs/CONFIG.md.

Keys are found where src/config/ defines them: `{"key", [...]` and `keys.emplace("key", ...)`
in the setter tables, and `key == "key"` in the [General] and [Http] readers. A key is named
when it appears in backticks on the page (case does not matter, as in the files). A page that
loses a section, or a key added without a line, fails here.
"""
import pathlib
import re
import sys

root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".")
page = (root / "docs" / "CONFIG.md").read_text().lower()
named = set(re.findall(r"`([a-z0-9_]+)", page))
definition = re.compile(r'\{"([a-z0-9]+)",\s*(?:\[|add_ranges)|emplace\("([a-z0-9]+)"|key == "([a-z0-9]+)"')

keys = {}
for source in sorted((root / "src" / "config").glob("*.cpp")):
    for m in definition.finditer(source.read_text()):
        keys.setdefault(next(g for g in m.groups() if g), source.name)

missing = sorted(k for k in keys if k not in named)
for key in missing:
    print(f"docs/CONFIG.md does not name `{key}` (defined in src/config/{keys[key]})")
if len(keys) < 60:
    print(f"only {len(keys)} keys found in src/config: the patterns here no longer match the code")
    sys.exit(1)
print(f"{len(keys)} keys, {len(missing)} not named")
sys.exit(1 if missing else 0)
