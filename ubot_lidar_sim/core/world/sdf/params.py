"""
An include's ``<experimental:params>`` applied to its model (sdformat src/ParamPassing.cc).

Each child names an element of the included model by its tag and ``element_id``, the ``::``
path of names below the model (``link::visual``; ``getElementById``), and carries an
``action``: ``remove`` (the element, or only the children the action's element lists;
``remove``), ``modify`` (its attributes and text, child by child; ``modify``), ``add`` (the
action's element, without ``element_id`` and ``action``, appended to the element the id names,
or to the model for an empty id; ``add``) or ``replace`` (its content; ``replace``). A child
without an ``action`` has children that each carry one (``handleIndividualChildActions``). As
sdformat does, an alteration whose element is not found is skipped with a warning, and the
rest still apply (``updateParams``).
"""

import copy
import logging
from xml.etree.ElementTree import Element

LOG = logging.getLogger(__name__)
ACTIONS = ('add', 'modify', 'remove', 'replace')
TAG = 'experimental:params'


def _named(parent: Element, tag: str | None, name: str) -> Element | None:
    """Return the child of parent with this tag (any tag if None) and name attribute, or None."""
    for child in parent:
        if (tag is None or child.tag == tag) and child.get('name') == name:
            return child
    return None


def _by_id(model: Element, tag: str | None, element_id: str
           ) -> tuple[Element | None, Element | None]:
    """Return (parent, element) of the element tag named by the '::' path below model."""
    parent: Element | None = None
    el: Element | None = model
    parts = element_id.split('::')
    for k, part in enumerate(parts):
        if el is None:
            return None, None
        parent, el = el, _named(el, tag if k == len(parts) - 1 else None, part)
    if el is None:
        return None, None
    return parent, el


def _match(parent: Element, spec: Element) -> Element | None:
    """Return the child of parent a spec element names: same tag, same name if it has one."""
    name = spec.get('name')
    for child in parent:
        if child.tag == spec.tag and (name is None or child.get('name') == name):
            return child
    return None


def _clean(spec: Element) -> Element:
    """Return a copy of spec without element_id and action."""
    out = copy.deepcopy(spec)
    for attr in ('element_id', 'action'):
        out.attrib.pop(attr, None)
    return out


def _modify(target: Element, spec: Element) -> None:
    """Set target's attributes and text from spec, and so on down its children (a stack)."""
    todo = [(target, spec)]
    while todo:
        target, spec = todo.pop()
        for key, value in spec.attrib.items():
            if key not in ('element_id', 'action'):
                target.set(key, value)
        if spec.text and spec.text.strip():
            target.text = spec.text
            continue
        for child in spec:
            match = _match(target, child)
            if match is None:
                LOG.warning('experimental:params: <%s> not found in <%s>; modification '
                            'skipped', child.tag, target.tag)
            else:
                todo.append((match, child))


def _apply(action: str, parent: Element | None, target: Element, spec: Element) -> None:
    """Apply one action to target (a child of parent)."""
    if action == 'remove':
        if len(spec) == 0 and parent is not None:
            parent.remove(target)
        for child in spec:
            match = _match(target, child)
            if match is not None:
                target.remove(match)
    elif action == 'modify':
        _modify(target, spec)
    elif action == 'add':
        target.append(_clean(spec))
    else:
        new = _clean(spec)
        target.clear()
        target.attrib.update(new.attrib)
        target.text = new.text
        target.extend(list(new))


def apply_params(model: Element, params: Element, where: str) -> None:
    """Apply the children of an <experimental:params> element to a <model> element in place."""
    for spec in params:
        if not isinstance(spec.tag, str):
            continue
        element_id, action = spec.get('element_id'), spec.get('action')
        if element_id is None or (action is not None and action not in ACTIONS):
            LOG.warning("%s: <%s> without element_id or with action '%s' skipped (sdformat "
                        'skips it too)', where, spec.tag, action)
            continue
        if action == 'add':
            parent, target = (None, model) if not element_id else _by_id(model, None,
                                                                         element_id)
        else:
            parent, target = _by_id(model, spec.tag, element_id)
        if target is None:
            LOG.warning("%s: <%s element_id='%s'> not found in the included model; skipped",
                        where, spec.tag, element_id)
            continue
        if action is not None:
            _apply(action, parent, target, spec)
            continue
        for child in spec:
            sub = child.get('action')
            if sub not in ACTIONS:
                LOG.warning("%s: <%s> under element_id '%s' has no valid action; skipped",
                            where, child.tag, element_id)
            elif sub == 'add':
                target.append(_clean(child))
            else:
                match = _match(target, child)
                if match is not None:
                    _apply(sub, target, match, child)
