#!/usr/bin/env python3
"""Checks that no function body in the given Swift files or folders is longer than a bound.

A body is the brace block of a function, initializer, accessor, computed property or closure: its length is
counted from the line after `{` to the line before the matching `}` (a one-line body is 0 lines). Blocks of
type declarations (struct, class, enum, extension, protocol, actor) are not bodies; blocks of control flow
(if, for, switch...) are counted inside the function that holds them. Braces inside string literals
(interpolations included) and comments are ignored.

Usage: check-function-length.py [--max LINES] PATH...   (default 58; the house rule is "under 60", and two
lines of slack keep it true whichever way a reader counts the braces). Prints one line per offender as
`path:line: <declaration>: N lines (at most M)` and exits 1 when there is one, 0 otherwise.
"""

import argparse
import os
import sys

TYPE_KEYWORDS = {"class", "struct", "enum", "extension", "protocol", "actor"}
MEMBER_KEYWORDS = {"func", "var", "let", "init", "deinit", "subscript", "typealias", "case"}
CONTROL_KEYWORDS = {"if", "guard", "while", "for", "switch", "do", "catch", "else", "repeat", "defer"}
# A newline does not end a statement after these tokens, nor before the tokens of CONTINUES_LINE.
ENDS_CONTINUED = {",", "=", "->", ":", "&&", "||", "+", "-", "*", "/", "??", "?", "(", "["}
CONTINUES_LINE = {".", "else", "where", "&&", "||", "->", "throws", "async", "rethrows", "??", "?", ":", "in"}


class Token:
    __slots__ = ("text", "line")

    def __init__(self, text, line):
        self.text = text
        self.line = line


def tokenize(source):
    """Yields the code tokens of Swift source (strings and comments dropped, newlines kept as "\\n")."""
    tokens = []
    i = 0
    line = 1
    n = len(source)
    # Each entry: the parenthesis depth at which an interpolation `\(` started inside a string, with the
    # string's delimiter to return to.
    interpolations = []
    paren_depth = 0

    def read_string(start, delimiter, pounds):
        """Skips a string literal body from `start`; returns (index after it or of an interpolation, line,
        interpolation-opened)."""
        nonlocal line
        j = start
        closing = delimiter + "#" * pounds
        escape = "\\" + "#" * pounds
        while j < n:
            if source.startswith(escape + "(", j):
                return j + len(escape) + 1, True
            if source.startswith(escape, j):
                j += len(escape) + 1
                continue
            if source.startswith(closing, j):
                return j + len(closing), False
            if source[j] == "\n":
                line += 1
            j += 1
        return j, False

    def open_string(j):
        """At a string opening at j (after any `#`), returns (delimiter, index of the body)."""
        if source.startswith('"""', j):
            return '"""', j + 3
        return '"', j + 1

    while i < n:
        c = source[i]
        if c == "\n":
            tokens.append(Token("\n", line))
            line += 1
            i += 1
        elif c in " \t\r":
            i += 1
        elif source.startswith("//", i):
            while i < n and source[i] != "\n":
                i += 1
        elif source.startswith("/*", i):
            depth = 1
            i += 2
            while i < n and depth:
                if source.startswith("/*", i):
                    depth += 1
                    i += 2
                elif source.startswith("*/", i):
                    depth -= 1
                    i += 2
                else:
                    if source[i] == "\n":
                        line += 1
                    i += 1
        elif c == "#" and (source.startswith("#if", i) or source.startswith("#else", i)
                           or source.startswith("#elseif", i) or source.startswith("#endif", i)) \
                and (i == 0 or source[i - 1] in " \t\n"):
            # A compiler directive line ends any statement before it.
            while i < n and source[i] != "\n":
                i += 1
            tokens.append(Token(";", line))
        elif c == '"' or (c == "#" and _raw_string_start(source, i)):
            pounds = 0
            while source[i] == "#":
                pounds += 1
                i += 1
            delimiter, body = open_string(i)
            tokens.append(Token("STRING", line))
            i, interpolated = read_string(body, delimiter, pounds)
            if interpolated:
                interpolations.append((paren_depth, delimiter, pounds))
                paren_depth += 1
        elif c == "(":
            paren_depth += 1
            tokens.append(Token("(", line))
            i += 1
        elif c == ")":
            paren_depth -= 1
            if interpolations and interpolations[-1][0] == paren_depth:
                _, delimiter, pounds = interpolations.pop()
                i, interpolated = read_string(i + 1, delimiter, pounds)
                if interpolated:
                    interpolations.append((paren_depth, delimiter, pounds))
                    paren_depth += 1
            else:
                tokens.append(Token(")", line))
                i += 1
        elif c.isalnum() or c == "_" or c == "@" or c == "$" or c == "`":
            j = i + 1
            while j < n and (source[j].isalnum() or source[j] in "_`"):
                j += 1
            tokens.append(Token(source[i:j], line))
            i = j
        elif c in "{}[],;:.":
            tokens.append(Token(c, line))
            i += 1
        else:
            j = i + 1
            while j < n and source[j] in "=-+*/<>!?&|%^~":
                j += 1
            tokens.append(Token(source[i:j], line))
            i = j
    return tokens


def _raw_string_start(source, i):
    j = i
    while j < len(source) and source[j] == "#":
        j += 1
    return j < len(source) and source[j] == '"'


def header_tokens(tokens, brace_index):
    """The tokens of the statement that the `{` at brace_index opens a block for (newlines dropped), and
    whether the block is an argument inside brackets (a closure)."""
    header = []
    depth = 0
    k = brace_index - 1
    while k >= 0:
        text = tokens[k].text
        if text in (")", "]"):
            depth += 1
        elif text in ("(", "["):
            if depth == 0:
                header.reverse()
                return header, True  # an unmatched bracket: the block is a closure argument
            depth -= 1
        elif depth == 0 and text in ("{", "}", ";"):
            break
        elif depth == 0 and text == "\n":
            before = tokens[k - 1].text if k > 0 else ";"
            # A `{` alone on its line belongs to the statement above it (a long signature's body).
            after = header[-1].text if header else "."
            if before not in ENDS_CONTINUED and after not in CONTINUES_LINE and before != "\n":
                break
            k -= 1
            continue
        if text != "\n":
            header.append(tokens[k])
        k -= 1
    header.reverse()
    return header, False


def classify(header, in_brackets):
    """'type', 'control' or 'body' for the block a header opens."""
    if in_brackets:
        return "body"
    words = [token.text for token in header]
    for index, word in enumerate(words):
        if word in TYPE_KEYWORDS:
            if not any(later in MEMBER_KEYWORDS for later in words[index + 1:]):
                return "type"
            break
        if word in MEMBER_KEYWORDS or word == "=":
            break
    if words and words[0] in CONTROL_KEYWORDS:
        return "control"
    if not words:
        return "control"  # a bare block at statement level (`do` without the keyword does not exist)
    return "body"


def bodies(tokens):
    """Yields (line of `{`, body lines, header text) for every function body."""
    stack = []
    for index, token in enumerate(tokens):
        if token.text == "{":
            header, in_brackets = header_tokens(tokens, index)
            stack.append((token.line, classify(header, in_brackets), " ".join(t.text for t in header)))
        elif token.text == "}" and stack:
            line, kind, header = stack.pop()
            if kind == "body":
                yield line, max(0, token.line - line - 1), header


def swift_files(paths):
    for path in paths:
        if os.path.isfile(path):
            yield path
            continue
        for root, directories, files in os.walk(path):
            directories[:] = sorted(d for d in directories if not d.startswith("."))
            for name in sorted(files):
                if name.endswith(".swift"):
                    yield os.path.join(root, name)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max", type=int, default=58, help="the most lines a body may have (default 58)")
    parser.add_argument("paths", nargs="+")
    arguments = parser.parse_args()
    offenders = 0
    for path in swift_files(arguments.paths):
        with open(path, encoding="utf-8") as file:
            tokens = tokenize(file.read())
        for line, length, header in bodies(tokens):
            if length > arguments.max:
                offenders += 1
                shown = header.replace("STRING", '"..."')
                if len(shown) > 80:
                    shown = shown[:77] + "..."
                print(f"{path}:{line}: {shown or '{'}: {length} lines (at most {arguments.max})")
    if offenders:
        print(f"{offenders} function bodies longer than {arguments.max} lines", file=sys.stderr)
    return 1 if offenders else 0


if __name__ == "__main__":
    sys.exit(main())
