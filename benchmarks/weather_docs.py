"""
Regenerate the weather tables of the documentation in place, with one command.

Runs benchmarks/fog_continuity.py (fog clutter share over visibility, ours beside Hahner et al.
2021, 4 presets), benchmarks/snow_counts.py (the VLP-32C's CADC statistic over 0.25-5 mm/h)
and benchmarks/weather_table.py (every preset on the demo world), and writes each Markdown
table over the table of the same header in docs/physics-weather.md and docs/weather-table.md.
A table whose header is not found in its page is an error (the page and the script disagree).

Usage: python benchmarks/weather_docs.py [--seeds N] [--check]
  --check: exit 1 if a page would change (nothing written).
"""

import argparse
import contextlib
import io
import os
from pathlib import Path
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import fog_continuity  # noqa: E402
import snow_counts  # noqa: E402
import weather_table  # noqa: E402

DOCS = Path(__file__).resolve().parents[1] / 'docs'


def table_of(main, argv):
    """Return the lines of the Markdown table that main(argv) prints."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        main(argv)
    return [line for line in out.getvalue().splitlines() if line.startswith('|')]


def replace_table(text, table):
    """Return text with the table whose header line is table[0] replaced by table."""
    lines = text.split('\n')
    if table[0] not in lines:
        raise SystemExit(f'weather_docs: no table with the header {table[0][:60]!r}...')
    start = lines.index(table[0])
    end = start
    while end < len(lines) and lines[end].startswith('|'):
        end += 1
    return '\n'.join(lines[:start] + table + lines[end:])


def main(argv=None):
    """Regenerate the pages' tables (or, with --check, say whether they are current)."""
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[1])
    ap.add_argument('--seeds', type=int, default=3)
    ap.add_argument('--check', action='store_true')
    args = ap.parse_args(argv)
    seeds = ['--seeds', str(args.seeds)]
    pages = {
        'physics-weather.md': [table_of(fog_continuity.main, seeds),
                               table_of(snow_counts.main, seeds)],
        'weather-table.md': [table_of(weather_table.main, [])],
    }
    stale = []
    for name, tables in pages.items():
        path = DOCS / name
        old = path.read_text(encoding='utf-8')
        new = old
        for table in tables:
            new = replace_table(new, table)
        if new != old:
            stale.append(name)
            if not args.check:
                path.write_text(new, encoding='utf-8')
    print(('stale: ' if args.check else 'rewritten: ') + (', '.join(stale) or 'none'))
    return 1 if args.check and stale else 0


if __name__ == '__main__':
    sys.exit(main())
