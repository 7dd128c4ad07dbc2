"""
Reading SDF and model.config files as Gazebo reads them: leniently, but never a DTD or entity.

sdformat parses with tinyxml2 (sdformat src/parser.cc, ``tinyxml2::XMLDocument::Parse``), which
reads what a strict XML parser refuses: a comment holding ``--`` (gz-sim's ``empty.sdf``), a
comment or blank before ``<?xml`` (Classic's ``cafe.world``), a bare ``&`` (AWS hospital
``model.config`` files; tinyxml2's ``XMLUtil::GetCharacterRef`` leaves an unknown reference as
text) and prefixes no ``xmlns:`` declares (``gz:``, ``experimental:``; tinyxml2 has no
namespaces). Those are repaired, each kind logged once per file, and the text is parsed by expat
without namespace processing, so a tag keeps its prefix (``experimental:params``). Refused: a
DOCTYPE of any kind (internal subset or ``SYSTEM``, nothing is fetched), an entity declaration,
a file larger than yaml_io.MAX_FILE_BYTES or not a regular file.

Elements are the standard library's ElementTree elements; ``text_of`` and ``number`` read a child's
text with the file, model and element named in every error.
"""

import logging
import re
from xml.etree.ElementTree import TreeBuilder
from xml.parsers import expat

from ubot_lidar_sim.core.yaml_io import FileRefused, read_bytes

LOG = logging.getLogger(__name__)

# The most models (and included models) one SDF world may hold, counted before anything is built.
MAX_MODELS = 100_000

_DECLARATION = re.compile(r'<\?xml[\s?][^>]*>')
# a comment, a CDATA section or a processing instruction: text that entity repair leaves alone
_OPAQUE = re.compile(r'(<!--.*?-->|<!\[CDATA\[.*?\]\]>|<\?.*?\?>)', re.DOTALL)
# '&' that does not start one of XML's five entities or a character reference
_BARE_AMP = re.compile(r'&(?!(?:amp|lt|gt|quot|apos|#[0-9]+|#x[0-9a-fA-F]+);)')
_PREFIXED_TAG = re.compile(r'</?([A-Za-z_][\w.-]*):[A-Za-z_]')
_DECLARED = re.compile(r'xmlns:([A-Za-z_][\w.-]*)\s*=')


class SdfError(Exception):
    """A problem of an SDF world; the message names the file, the model and the element."""


class SdfMissing(SdfError):
    """A model or mesh an SDF world names that is not there (``missing: warn`` skips it)."""


class _Refused(Exception):
    """A DTD or an entity declaration met by the parser."""


def _decode(data):
    """Return the text of XML bytes: UTF-8 (with or without BOM), else Latin-1 as declared."""
    try:
        return data.decode('utf-8-sig')
    except UnicodeDecodeError:
        return data.decode('latin-1')


def _repair_comment(comment):
    """Return a comment whose '--' runs (and a final '-') are split, as tinyxml2 ignores them."""
    body = comment[4:-3]
    fixed = body.replace('--', '- -').replace('--', '- -')
    if fixed.endswith('-'):
        fixed += ' '
    return f'<!--{fixed}-->'


def lenient_text(text):
    """
    Return (XML text expat reads, recoveries): tinyxml2's tolerances made explicit.

    recoveries: short names of what was repaired ('comment with --', ...), in a fixed order.
    """
    recoveries = []
    stripped = text.lstrip()
    declaration = _DECLARATION.search(text)
    if declaration is not None:
        if not stripped.startswith(declaration.group(0)):
            recoveries.append('text before <?xml')
        # the text is already decoded: expat must not re-read its encoding
        text = text[:declaration.start()] + text[declaration.end():]
    pieces = _OPAQUE.split(text)
    comments = [k for k in range(1, len(pieces), 2) if pieces[k].startswith('<!--')]
    if any('--' in pieces[k][4:-3] or pieces[k][4:-3].endswith('-') for k in comments):
        recoveries.append("'--' inside a comment")
        for k in comments:
            pieces[k] = _repair_comment(pieces[k])
    if any(_BARE_AMP.search(pieces[k]) for k in range(0, len(pieces), 2)):
        recoveries.append("a bare '&'")
        for k in range(0, len(pieces), 2):
            pieces[k] = _BARE_AMP.sub('&amp;', pieces[k])
    text = ''.join(pieces)
    undeclared = sorted(set(_PREFIXED_TAG.findall(text)) - set(_DECLARED.findall(text)))
    if undeclared:
        recoveries.append('undeclared prefix ' + ', '.join(p + ':' for p in undeclared))
    return text, recoveries


def _refuse(what):
    """Return an expat handler that raises _Refused(what)."""
    def handler(*_):
        raise _Refused(what)
    return handler


def parse_text(text):
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


def read_xml(path, what='SDF file'):
    """Return the root element of an XML file read as tinyxml2 reads it (SdfError otherwise)."""
    try:
        data = read_bytes(path)
    except FileRefused as exc:
        raise SdfError(f'{path}: {what} is {exc.strerror}') from None
    except OSError:
        raise SdfMissing(f'{path}: {what} not found') from None
    text, recoveries = lenient_text(_decode(data))
    try:
        root = parse_text(text)
    except _Refused as exc:
        raise SdfError(f'{path}: refused: {exc} (DTDs and entities are not read)') from None
    except expat.ExpatError as exc:
        raise SdfError(f'{path}: not valid XML, even as Gazebo reads it '
                       f'({expat.ErrorString(exc.code)}: line {exc.lineno}, column '
                       f'{exc.offset + 1})') from None
    if recoveries:
        LOG.warning('%s: read as Gazebo (tinyxml2) reads it: %s', path, '; '.join(recoveries))
    return root


def text_of(el, tag, where, default=None):
    """Return the stripped text of el's child tag (default when absent; SdfError if required)."""
    child = el.find(tag)
    if child is None or child.text is None or not child.text.strip():
        if default is None:
            raise SdfError(f'{where}: <{tag}> missing')
        return default
    return child.text.strip()


def numbers(text, n, where, what, limit=float('inf')):
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


def number(el, tag, where, default=None, positive=True):
    """Parse one finite value (> 0 if positive) from a child element of el."""
    text = text_of(el, tag, where, None if default is None else str(default))
    value = numbers(text, 1, f'{where}/{tag}', 'value')[0]
    if positive and not value > 0:
        raise SdfError(f'{where}/{tag}: expected a number > 0, got {text}')
    return value
