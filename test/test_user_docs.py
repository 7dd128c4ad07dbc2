"""The user's pages: present tense (history in CHANGELOG, docs/dev/), one topic table, an index."""

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


def _node_rows(text):
    """Return {node cell: row} of the markdown table headed '| node (executable) |'."""
    table = text.split('| node (executable) |', 1)[1].split('\n\n', 1)[0]
    return {line.split('|')[1].strip(): line.strip() for line in table.splitlines()[2:]
            if line.startswith('|')}


def test_the_readmes_topic_table_is_the_one_of_docs_nodes():
    readme = _node_rows((ROOT / 'README.md').read_text())
    nodes = _node_rows((ROOT / 'docs' / 'nodes.md').read_text())
    assert readme == nodes


def test_every_docs_page_is_in_the_readmes_index():
    readme = (ROOT / 'README.md').read_text()
    missing = [p.name for p in sorted((ROOT / 'docs').glob('*.md'))
               if f'| docs/{p.name} |' not in readme]
    assert not missing, missing
