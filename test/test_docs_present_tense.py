"""The user's pages read in the present tense: history belongs in CHANGELOG.md and docs/dev/."""

from pathlib import Path
import re

ROOT = Path(__file__).resolve().parents[1]
#: The diary's words: a development round, a pass, what the code once did.
DIARY = re.compile(r'[Rr]ound [0-9]|before this pass|used to')


def test_no_user_page_reads_as_a_diary():
    pages = [ROOT / 'README.md', *sorted((ROOT / 'docs').glob('*.md'))]
    found = [f'{p.relative_to(ROOT)}:{i}: {line.strip()[:80]}'
             for p in pages for i, line in enumerate(p.read_text().splitlines(), 1)
             if DIARY.search(line)]
    assert not found, '\n'.join(found)
