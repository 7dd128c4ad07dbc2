"""
Reading SDF and model.config files as Gazebo reads them: leniently, but never a DTD or entity.

sdformat parses with tinyxml2 (sdformat src/parser.cc:165 ``XMLDocument::LoadFile``, 513
``Parse``), which reads what a strict XML parser refuses: a comment holding ``--`` (gz-sim's
``empty.sdf``; tinyxml2 ends a comment at the first ``-->``), a comment or blank before
``<?xml`` (Classic's ``cafe.world``), a bare ``&`` (AWS hospital ``model.config`` files;
tinyxml2's ``StrPair::GetStr`` copies an ``&`` that starts no known entity as text) and
prefixes no ``xmlns:`` declares (``gz:``, ``experimental:``; tinyxml2 has no namespaces). A
file expat refuses is repaired so, each kind logged once per file (a well-formed file is read as
it is); expat reads without namespace processing, so a tag keeps its prefix
(``experimental:params``). Refused: a DOCTYPE of any kind (internal subset, ``SYSTEM`` or
``PUBLIC``: nothing is fetched), an entity declaration, a file larger than
yaml_io.MAX_FILE_BYTES or not a regular file (checked before it is read).

Elements are the standard library's ElementTree elements; ``text_of`` and ``number`` read a child's
text with the file, model and element named in every error.
"""

from collections.abc import Callable
import logging
from pathlib import Path
import re
from typing import NoReturn
from xml.etree.ElementTree import Element, TreeBuilder
from xml.parsers import expat

from ubot_lidar_sim.core.yaml_io import FileRefused, read_bytes

LOG = logging.getLogger(__name__)

# The most models (and included models) one SDF world may hold, counted before anything is built.
MAX_MODELS = 100_000

# a comment, a CDATA section or a processing instruction: text that entity repair leaves alone
_OPAQUE = (('<!--', '-->'), ('<![CDATA[', ']]>'), ('<?', '?>'))
# '&' that does not start one of XML's five entities or a character reference
_BARE_AMP = re.compile(r'&(?!(?:amp|lt|gt|quot|apos|#[0-9]+|#x[0-9a-fA-F]+);)')
_REFERENCE = re.compile(r'&amp;(?=(?:amp|lt|gt|quot|apos|#[0-9]+|#x[0-9a-fA-F]+);)')
_PREFIXED_TAG = re.compile(r'</?([A-Za-z_][\w.-]*):[A-Za-z_]')
_DECLARED = re.compile(r'xmlns:([A-Za-z_][\w.-]*)\s*=')


class SdfError(Exception):
    """A problem of an SDF world; the message names the file, the model and the element."""


class SdfMissing(SdfError):
    """A model or mesh an SDF world names that is not there (``missing: warn`` skips it)."""


class _Refused(Exception):
    """A DTD or an entity declaration met by the parser."""


def _decode(data: bytes) -> str:
    """Return the text of XML bytes: UTF-8 (with or without BOM), else Latin-1 as declared."""
    try:
        return data.decode('utf-8-sig')
    except UnicodeDecodeError:
        return data.decode('latin-1')


def _repair_comment(comment: str) -> str:
    """Return a comment whose '--' runs (and a final '-') are split, as tinyxml2 ignores them."""
    body = comment[4:-3]
    fixed = body.replace('--', '- -').replace('--', '- -')
    if fixed.endswith('-'):
        fixed += ' '
    return f'<!--{fixed}-->'


def _declaration(text: str) -> tuple[int, int] | None:
    """Return (start, end) of the first '<?xml ...>' declaration, or None."""
    start = text.find('<?xml')
    while start >= 0 and text[start + 5:start + 6] not in ('?', ' ', '\t', '\r', '\n'):
        start = text.find('<?xml', start + 1)
    end = text.find('>', start) if start >= 0 else -1
    return None if end < 0 else (start, end + 1)


def _split_opaque(text: str) -> list[str]:
    """
    Return the pieces of text: plain text at even indices, comments / CDATA / PIs at odd ones.

    One pass with str.find (a regex with a lazy '.*?' rescans to the end of a 64 MiB file for
    every unterminated opener, quadratic time for a file of openers); an unterminated one ends
    the opaque pieces (expat refuses the file).
    """
    pieces, pos = [], 0
    nxt = [text.find(opener) for opener, _ in _OPAQUE]
    while True:
        live = [(p, k) for k, p in enumerate(nxt) if p >= 0]
        if not live:
            break
        start, k = min(live)
        opener, closer = _OPAQUE[k]
        end = text.find(closer, start + len(opener))
        if end < 0:
            break
        end += len(closer)
        pieces += [text[pos:start], text[start:end]]
        pos = end
        # -1 stays -1: an opener not found once is not found later (no rescans)
        nxt = [p if p >= pos or p < 0 else text.find(o, pos) for p, (o, _) in zip(nxt, _OPAQUE)]
    return pieces + [text[pos:]]


def _undeclared(text: str) -> list[str]:
    """Return the sorted prefixes of tags that no xmlns: attribute declares."""
    used = {m.group(1) for m in _PREFIXED_TAG.finditer(text)}
    return sorted(used - {m.group(1) for m in _DECLARED.finditer(text)})


def _without_declaration(text: str) -> tuple[str, bool]:
    """Return (text without its '<?xml ...>' declaration, whether text came before it)."""
    declaration = _declaration(text)
    if declaration is None:
        return text, False
    # the text is already decoded: expat must not re-read its encoding
    return (text[:declaration[0]] + text[declaration[1]:],
            bool(text[:declaration[0]].strip()))


def lenient_text(text: str) -> tuple[str, list[str]]:
    """
    Return (XML text expat reads, recoveries): tinyxml2's tolerances made explicit.

    text: without its declaration. recoveries: what was repaired ("'--' inside a comment",
    "a bare '&'"), in a fixed order. Linear in the text's length.
    """
    recoveries = []
    pieces = _split_opaque(text)
    comments = [k for k in range(1, len(pieces), 2) if pieces[k].startswith('<!--')]
    if any('--' in pieces[k][4:-3] or pieces[k][4:-3].endswith('-') for k in comments):
        recoveries.append("'--' inside a comment")
        for k in comments:
            pieces[k] = _repair_comment(pieces[k])
    plain = range(0, len(pieces), 2)
    if any(_BARE_AMP.search(pieces[k]) for k in plain):
        recoveries.append("a bare '&'")
        for k in plain:     # escape every '&', then give the references back their own
            pieces[k] = _REFERENCE.sub('&', pieces[k].replace('&', '&amp;'))
    return ''.join(pieces), recoveries


def _refuse(what: str) -> Callable[..., NoReturn]:
    """Return an expat handler that raises _Refused(what)."""
    def handler(*_: object) -> NoReturn:
        raise _Refused(what)
    return handler


def parse_text(text: str) -> Element:
    """Return the root element of XML text parsed without namespaces; _Refused, ExpatError."""
    builder = TreeBuilder()
    parser = expat.ParserCreate()
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
    parser.StartDoctypeDeclHandler = _refuse('a DOCTYPE')
    parser.EntityDeclHandler = _refuse('an entity declaration')
    parser.ExternalEntityRefHandler = _refuse('an external entity')
    parser.buffer_text = True
    parser.StartElementHandler = builder.start
    parser.EndElementHandler = builder.end
    parser.CharacterDataHandler = builder.data
    parser.Parse(text, True)
    return builder.close()


def read_xml(path: str | Path, what: str = 'SDF file') -> Element:
    """Return the root element of an XML file read as tinyxml2 reads it (SdfError otherwise)."""
    try:
        data = read_bytes(path)
    except FileRefused as exc:
        raise SdfError(f'{path}: {what} is {exc.strerror}') from None
    except OSError:
        raise SdfMissing(f'{path}: {what} not found') from None
    text, before = _without_declaration(_decode(data))
    recoveries = ['text before <?xml'] if before else []
    try:
        try:
            root = parse_text(text)     # well-formed XML pays for no repair
        except expat.ExpatError:
            text, repaired = lenient_text(text)
            recoveries += repaired
            root = parse_text(text)
    except _Refused as exc:
        raise SdfError(f'{path}: refused: {exc} (DTDs and entities are not read)') from None
    except expat.ExpatError as exc:
        raise SdfError(f'{path}: not valid XML, even as Gazebo reads it '
                       f'({expat.ErrorString(exc.code)}: line {exc.lineno}, column '
                       f'{exc.offset + 1})') from None
    undeclared = _undeclared(text)
    if undeclared:
        recoveries.append('undeclared prefix ' + ', '.join(p + ':' for p in undeclared))
    if recoveries:
        LOG.warning('%s: read as Gazebo (tinyxml2) reads it: %s', path, '; '.join(recoveries))
    return root


def text_of(el: Element, tag: str, where: str, default: str | None = None) -> str:
    """Return the stripped text of el's child tag (default when absent; SdfError if required)."""
    child = el.find(tag)
    if child is None or child.text is None or not child.text.strip():
        if default is None:
            raise SdfError(f'{where}: <{tag}> missing')
        return default
    return child.text.strip()


def numbers(text: str, n: int, where: str, what: str, limit: float = float('inf')
            ) -> list[float]:
    """Return n finite values, each within +-limit, of text; SdfError naming where and what."""
    parts = text.split()
    try:
        values = [float(p) for p in parts]
    except ValueError:
        values = []
    if len(values) != n or not all(abs(v) < float('inf') for v in values):
        raise SdfError(f"{where}: {what} '{text[:60]}' is not {n} numbers")
    if not all(abs(v) <= limit for v in values):
        raise SdfError(f"{where}: {what} '{text[:60]}' is beyond the {limit:g} allowed")
    return values


def number(el: Element, tag: str, where: str, default: float | None = None,
           positive: bool = True) -> float:
    """Parse one finite value (> 0 if positive) from a child element of el."""
    text = text_of(el, tag, where, None if default is None else str(default))
    value = numbers(text, 1, f'{where}/{tag}', 'value')[0]
    if positive and not value > 0:
        raise SdfError(f'{where}/{tag}: expected a number > 0, got {text}')
    return value
