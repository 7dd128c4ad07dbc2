"""
Reading SDF and model.config files: defused XML (no DTD, no entities), size-capped.

Elements are the standard library's ElementTree elements; ``text_of`` and ``number`` read a child's
text with the file, model and element named in every error.
"""

from defusedxml import DefusedXmlException
from defusedxml.ElementTree import parse as defused_parse

from ubot_lidar_sim.core.yaml_io import check_regular_file, FileRefused

# The most models (and included models) one SDF world may hold, counted as they are read.
MAX_MODELS = 100_000


class SdfError(Exception):
    """A problem of an SDF world; the message names the file, the model and the element."""


def read_xml(path, what='SDF file'):
    """Return the root element of an XML file, refused with entities, a DTD or beyond 64 MiB."""
    try:
        check_regular_file(path)
    except FileRefused as exc:
        raise SdfError(f'{path}: {what} is {exc.strerror}') from None
    except OSError:
        raise SdfError(f'{path}: {what} not found') from None
    try:
        return defused_parse(str(path)).getroot()
    except DefusedXmlException as exc:
        raise SdfError(f'{path}: refused: {type(exc).__name__} (DTDs and entities are not '
                       'read)') from None
    except Exception as exc:  # noqa: B902 (ParseError and expat's errors)
        raise SdfError(f'{path}: not valid XML ({exc})') from None


def text_of(el, tag, where, default=None):
    """Return the stripped text of el's child tag (default when absent; SdfError if required)."""
    child = el.find(tag)
    if child is None or child.text is None or not child.text.strip():
        if default is None:
            raise SdfError(f'{where}: <{tag}> missing')
        return default
    return child.text.strip()


def numbers(text, n, where, what):
    """Parse n finite numbers from text, else raise SdfError naming where and what."""
    parts = text.split()
    try:
        values = [float(p) for p in parts]
    except ValueError:
        values = []
    if len(values) != n or not all(abs(v) < float('inf') for v in values):
        raise SdfError(f"{where}: {what} '{text[:60]}' is not {n} numbers")
    return values


def number(el, tag, where, default=None, positive=True):
    """Parse one finite value (> 0 if positive) from a child element of el."""
    text = text_of(el, tag, where, None if default is None else str(default))
    value = numbers(text, 1, f'{where}/{tag}', 'value')[0]
    if positive and not value > 0:
        raise SdfError(f'{where}/{tag}: expected a number > 0, got {text}')
    return value
