#!/usr/bin/env bash
# Every relative link and image in the Markdown documentation resolves (ctest `docs_links`):
#  * files checked: README.md and every other *.md at the top level, and every *.md under docs/;
#  * links checked: [text](target), ![alt](target), [label]: target definitions, and the src/href
#    of HTML <img> and <a> tags, outside fenced code blocks and inline code;
#  * a relative target must name an existing file or folder inside the repository;
#  * an #anchor into a Markdown file (or into the same file) must match one of its headings, by
#    GitHub's rule: the heading's text lower-cased, punctuation dropped except hyphens and spaces,
#    spaces turned into hyphens, repeated headings suffixed -1, -2, …; <a name|id="…"> counts too;
#  * http(s), mailto and other absolute URLs are not fetched.
# Each broken link is printed as FILE:LINE: broken link TARGET (reason); exit 1 if any, else 0.
#   docs_links.sh SOURCE_DIR
set -uo pipefail
root=${1:?usage: docs_links.sh SOURCE_DIR}
[ -d "$root" ] || { echo "docs_links.sh: $root is not a folder" >&2; exit 2; }
exec /usr/bin/python3 - "$root" <<'PYTHON'
import html
import os
import re
import sys
import unicodedata
import urllib.parse

root = os.path.realpath(sys.argv[1])

FENCE = re.compile(r'^ {0,3}(`{3,}|~{3,})')
ATX = re.compile(r'^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$')
SETEXT = re.compile(r'^ {0,3}(=+|-+)[ \t]*$')
REF_DEF = re.compile(r'^ {0,3}\[([^\]]+)\]:[ \t]*(<[^>]*>|\S+)')
HTML_ATTR = re.compile(r'<(?:img|a|source)\b[^>]*?\b(?:src|href)\s*=\s*("([^"]*)"|\'([^\']*)\')',
                       re.IGNORECASE)
HTML_ANCHOR = re.compile(r'<a\b[^>]*?\b(?:name|id)\s*=\s*("([^"]*)"|\'([^\']*)\')', re.IGNORECASE)
SCHEME = re.compile(r'^[A-Za-z][A-Za-z0-9+.-]*:')
# Inline code: a run of backticks up to the same run, within one paragraph (no blank line).
CODE_SPAN = re.compile(r'(?<!`)(`+)(?!`)((?:(?!\n[ \t]*\n).)+?)(?<!`)\1(?!`)', re.DOTALL)


def doc_files():
    """README.md and the other top-level *.md, and docs/**/*.md, as paths relative to root."""
    found = set()
    for name in os.listdir(root):
        if name.lower().endswith('.md') and os.path.isfile(os.path.join(root, name)):
            found.add(name)
    docs = os.path.join(root, 'docs')
    for folder, _, names in os.walk(docs):
        for name in names:
            if name.lower().endswith('.md'):
                found.add(os.path.relpath(os.path.join(folder, name), root))
    return sorted(found)


def blank_out(match):
    """Replaces a match by spaces, keeping its newlines (and so every line number)."""
    return re.sub(r'[^\n]', ' ', match.group(0))


def scan(text):
    """The text with fenced code blocks and inline code blanked out, and the heading lines
    [(line number, heading text)], both outside fences."""
    lines = text.split('\n')
    kept = []
    headings = []
    fence = None
    previous = ''
    for number, line in enumerate(lines, 1):
        match = FENCE.match(line)
        if fence is not None:
            if match and match.group(1)[0] == fence[0] and len(match.group(1)) >= len(fence) \
                    and line.strip() == match.group(1):
                fence = None
            kept.append('')
            previous = ''
            continue
        if match:
            fence = match.group(1)
            kept.append('')
            previous = ''
            continue
        kept.append(line)
        atx = ATX.match(line)
        if atx:
            headings.append((number, atx.group(2) or ''))
            previous = ''
            continue
        if SETEXT.match(line) and previous.strip() and not previous.lstrip().startswith('|') \
                and not ATX.match(previous):
            headings.append((number - 1, previous.strip()))
            previous = ''
            continue
        previous = line
    return CODE_SPAN.sub(blank_out, '\n'.join(kept)), headings


def rendered(heading):
    """A heading's text as GitHub renders it (markup removed, code kept)."""
    parts = re.split(r'(`+[^`]*`+)', heading)
    out = []
    for part in parts:
        if part.startswith('`'):
            out.append(part.strip('`'))
            continue
        part = re.sub(r'!?\[([^\]]*)\]\([^)]*\)', r'\1', part)   # links and images: their text
        part = re.sub(r'<[^>]+>', '', part)                       # inline HTML
        part = re.sub(r'\\(.)', r'\1', part)                      # backslash escapes
        part = re.sub(r'(?<![\w])_+|_+(?![\w])', '', part)        # _emphasis_ (not snake_case)
        out.append(html.unescape(part))
    return ''.join(out).strip()


def slug(text):
    """github-slugger: lower case; keep letters, marks, numbers, connector punctuation, '-' and
    ' '; spaces to hyphens."""
    kept = []
    for char in text.lower():
        category = unicodedata.category(char)
        if char in '- ' or category[0] in 'LMN' or category == 'Pc':
            kept.append(char)
    return ''.join(kept).replace(' ', '-')


anchor_cache = {}


def anchors_of(path):
    """Every anchor GitHub gives the Markdown file at path (absolute)."""
    if path in anchor_cache:
        return anchor_cache[path]
    with open(path, encoding='utf-8') as handle:
        text = handle.read()
    blanked, headings = scan(text)
    occurrences = {}
    anchors = set()
    for _, heading in headings:
        base = slug(rendered(heading))
        result = base
        while result in occurrences:
            occurrences[base] += 1
            result = '%s-%d' % (base, occurrences[base])
        occurrences[result] = 0
        anchors.add(result)
    for match in HTML_ANCHOR.finditer(blanked):
        anchors.add(match.group(2) if match.group(2) is not None else match.group(3))
    anchor_cache[path] = anchors
    return anchors


def link_targets(text):
    """(offset, target) of every link, image, reference definition and HTML src/href in text
    (code already blanked out)."""
    targets = []
    for match in re.finditer(r'\]\(', text):
        start = match.end()
        position = start
        while position < len(text) and text[position] in ' \t':
            position += 1
        if position < len(text) and text[position] == '<':
            end = text.find('>', position)
            if end < 0:
                continue
            targets.append((position, text[position + 1:end]))
            continue
        depth = 0
        end = position
        while end < len(text):
            char = text[end]
            if char in ' \t\n':
                break
            if char == '(':
                depth += 1
            elif char == ')':
                if depth == 0:
                    break
                depth -= 1
            elif char == '\\':
                end += 1
            end += 1
        targets.append((position, text[position:end]))
    offset = 0
    for line in text.split('\n'):
        match = REF_DEF.match(line)
        if match and not match.group(1).startswith('^'):
            target = match.group(2)
            if target.startswith('<'):
                target = target[1:-1]
            targets.append((offset + match.start(2), target))
        offset += len(line) + 1
    for match in HTML_ATTR.finditer(text):
        value = match.group(2) if match.group(2) is not None else match.group(3)
        targets.append((match.start(1), html.unescape(value)))
    return sorted(targets)


def check(target, source):
    """None if target (as written in the file at source, absolute) resolves, else the reason."""
    if not target:
        return 'empty target'
    if SCHEME.match(target) or target.startswith('//'):
        return None                                   # external: not fetched
    path_part, _, fragment = target.partition('#')
    path_part = path_part.split('?', 1)[0]
    path_part = urllib.parse.unquote(path_part)
    fragment = urllib.parse.unquote(fragment)
    if path_part:
        if path_part.startswith('/'):
            resolved = os.path.normpath(os.path.join(root, path_part.lstrip('/')))
        else:
            resolved = os.path.normpath(os.path.join(os.path.dirname(source), path_part))
        if resolved != root and not resolved.startswith(root + os.sep):
            return 'outside the repository'
        if not os.path.exists(resolved):
            return 'no such file'
    else:
        resolved = source
    if '#' in target:
        if not fragment:
            return 'empty anchor'
        if os.path.isfile(resolved) and resolved.lower().endswith('.md'):
            if fragment.lower() not in {a.lower() for a in anchors_of(resolved)}:
                return 'no heading #%s in %s' % (fragment, os.path.relpath(resolved, root))
    return None


broken = 0
links = 0
external = 0
files = doc_files()
for relative in files:
    source = os.path.join(root, relative)
    with open(source, encoding='utf-8') as handle:
        text = handle.read()
    blanked, _ = scan(text)
    for offset, raw in link_targets(blanked):
        target = raw.strip()
        if SCHEME.match(target) or target.startswith('//'):
            external += 1
            continue
        links += 1
        reason = check(target, source)
        if reason:
            line = blanked.count('\n', 0, offset) + 1
            print('%s:%d: broken link %s (%s)' % (relative, line, target, reason))
            broken += 1

if broken:
    print('docs_links: %d of %d relative links broken in %d Markdown files'
          % (broken, links, len(files)))
    sys.exit(1)
print('docs_links: all %d relative links, images and anchors resolve in %d Markdown files '
      '(%d external links not fetched)' % (links, len(files), external))
PYTHON
