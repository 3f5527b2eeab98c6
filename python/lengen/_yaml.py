"""The YAML that LenGen stores as a run's config, read without a YAML library.

The package depends on h5py, numpy and pandas only. The stored config is what `lengen validate`
prints (yaml-cpp's emitter, engine/src/config/config_emit.cpp): block mappings, block and flow
sequences, flow mappings, plain or quoted scalars, `#` comments. That subset is read here;
anything else (anchors, tags, multi-line scalars) is refused with the line it is on.
"""

import math
import re

_INT = re.compile(r"^[-+]?(0|[1-9][0-9]*)$")
_FLOAT = re.compile(r"^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$")


class YamlError(ValueError):
    pass


def scalar(text):
    """A plain scalar's value, YAML 1.2 core schema: null, bools, ints, floats, else text."""
    t = text.strip()
    if t in ("", "~", "null", "Null", "NULL"):
        return None
    if t in ("true", "True", "TRUE"):
        return True
    if t in ("false", "False", "FALSE"):
        return False
    if _INT.match(t):
        return int(t)
    if _FLOAT.match(t):
        return float(t)
    low = t.lower()
    if low in (".inf", "+.inf"):
        return math.inf
    if low == "-.inf":
        return -math.inf
    if low == ".nan":
        return math.nan
    return t


def _strip_comment(line):
    """The line without a trailing comment (a `#` after a space, outside quotes)."""
    quote = None
    for i, c in enumerate(line):
        if quote:
            if c == quote:
                quote = None
        elif c in "'\"":
            quote = c
        elif c == "#" and (i == 0 or line[i - 1] in " \t"):
            return line[:i].rstrip()
    return line.rstrip()


def _quoted(text, i):
    """(value, next index) of the quoted scalar starting at text[i]."""
    q = text[i]
    out = []
    j = i + 1
    while j < len(text):
        c = text[j]
        if q == "'" and c == "'":
            if text[j + 1:j + 2] == "'":
                out.append("'")
                j += 2
                continue
            return "".join(out), j + 1
        if q == '"' and c == "\\":
            nxt = text[j + 1:j + 2]
            table = {"n": "\n", "t": "\t", '"': '"', "\\": "\\", "/": "/", "0": "\0"}
            if nxt in table:
                out.append(table[nxt])
                j += 2
                continue
            if nxt in ("x", "u", "U"):
                width = {"x": 2, "u": 4, "U": 8}[nxt]
                out.append(chr(int(text[j + 2:j + 2 + width], 16)))
                j += 2 + width
                continue
            raise YamlError("unknown escape \\%s" % nxt)
        if q == '"' and c == '"':
            return "".join(out), j + 1
        out.append(c)
        j += 1
    raise YamlError("unterminated quoted string")


def _flow(text, i):
    """(value, next index) of the flow value starting at text[i]: [..], {..} or a scalar."""
    while i < len(text) and text[i] == " ":
        i += 1
    if i >= len(text):
        return None, i
    c = text[i]
    if c in "'\"":
        return _quoted(text, i)
    if c in "[{":
        close = "]" if c == "[" else "}"
        items = [] if c == "[" else {}
        i += 1
        while True:
            while i < len(text) and text[i] in " ,":
                i += 1
            if i >= len(text):
                raise YamlError("unclosed %s" % c)
            if text[i] == close:
                return items, i + 1
            if c == "[":
                v, i = _flow(text, i)
                items.append(v)
            else:
                k, i = _flow_key(text, i)
                v, i = _flow(text, i)
                items[k] = v
            while i < len(text) and text[i] == " ":
                i += 1
            if i < len(text) and text[i] not in ",]}":
                raise YamlError("unexpected %r" % text[i])
    j = i
    while j < len(text) and text[j] not in ",]}":
        j += 1
    return scalar(text[i:j]), j


def _flow_key(text, i):
    if text[i] in "'\"":
        k, i = _quoted(text, i)
    else:
        j = text.index(":", i)
        k, i = scalar(text[i:j]), j
    while i < len(text) and text[i] == " ":
        i += 1
    if text[i:i + 1] != ":":
        raise YamlError("expected ':' in a flow mapping")
    return k, i + 1


def _value(text):
    t = text.strip()
    if not t:
        return None
    if t[0] in "&*!|>":
        raise YamlError("anchors, aliases, tags and block scalars are not read here")
    v, end = _flow(t, 0)
    if t[end:].strip():
        raise YamlError("unexpected text after the value: %r" % t[end:])
    return v


def _split_key(content):
    """(key, rest) of `key: rest`, or None when the line holds no mapping key."""
    if content[0] in "'\"":
        key, i = _quoted(content, 0)
        rest = content[i:].lstrip()
        return (key, rest[1:]) if rest.startswith(":") else None
    m = re.match(r"^([^\s:#'\"][^:#]*?)\s*:(\s|$)", content)
    if not m:
        return None
    return scalar(m.group(1)) if _INT.match(m.group(1)) else m.group(1), content[m.end():]


def _depth(text):
    """How many flow brackets the text leaves open (quotes skipped)."""
    depth, quote = 0, None
    for c in text:
        if quote:
            quote = None if c == quote else quote
        elif c in "'\"":
            quote = c
        elif c in "[{":
            depth += 1
        elif c in "]}":
            depth -= 1
    return depth


def loads(text):
    """The document's value: dicts, lists, str, int, float, bool, None."""
    lines = []
    for n, raw in enumerate(text.splitlines(), 1):
        if raw.strip() in ("---", "..."):
            continue
        line = _strip_comment(raw)
        if "\t" in line[:len(line) - len(line.lstrip())]:
            raise YamlError("line %d: tab indentation" % n)
        if not line.strip():
            continue
        if lines and _depth(lines[-1][2]) > 0:  # a flow collection continued on this line
            lines[-1] = (lines[-1][0], lines[-1][1], lines[-1][2] + " " + line.strip())
        else:
            lines.append((n, len(line) - len(line.lstrip(" ")), line.strip()))
    if not lines:
        return None
    pos = [0]

    def block(indent):
        n, ind, content = lines[pos[0]]
        try:
            if content.startswith("- ") or content == "-":
                return sequence(ind)
            if _split_key(content) is not None:
                return mapping(ind)
            pos[0] += 1
            return _value(content)
        except YamlError as e:
            if str(e).startswith("line "):
                raise
            raise YamlError("line %d: %s" % (n, e)) from None

    def nested(parent_indent, rest, n, same_indent_sequence=True):
        if rest.strip():
            return _value(rest)
        if pos[0] < len(lines) and (lines[pos[0]][1] > parent_indent or (
                same_indent_sequence and lines[pos[0]][2].startswith("-")
                and lines[pos[0]][1] == parent_indent)):
            return block(lines[pos[0]][1])
        return None

    def mapping(indent):
        out = {}
        while pos[0] < len(lines) and lines[pos[0]][1] == indent:
            n, _, content = lines[pos[0]]
            kv = _split_key(content)
            if kv is None:
                raise YamlError("line %d: expected 'key: value'" % n)
            pos[0] += 1
            try:
                out[kv[0]] = nested(indent, kv[1], n)
            except YamlError as e:
                raise YamlError("line %d: %s" % (n, e) if not str(e).startswith("line ")
                                else str(e)) from None
        if pos[0] < len(lines) and lines[pos[0]][1] > indent:
            raise YamlError("line %d: unexpected indentation" % lines[pos[0]][0])
        return out

    def sequence(indent):
        out = []
        while pos[0] < len(lines) and lines[pos[0]][1] == indent and (
                lines[pos[0]][2].startswith("- ") or lines[pos[0]][2] == "-"):
            n, _, content = lines[pos[0]]
            item = content[1:].lstrip()
            if item and _split_key(item) is not None and item[0] not in "[{":
                # "- key: v" starts a mapping whose keys sit at the item's column.
                lines[pos[0]] = (n, indent + len(content) - len(item), item)
                out.append(mapping(lines[pos[0]][1]))
            else:
                pos[0] += 1
                out.append(nested(indent, item, n, same_indent_sequence=False))
        return out

    value = block(lines[0][1])
    if pos[0] < len(lines):
        raise YamlError("line %d: unexpected text" % lines[pos[0]][0])
    return value
