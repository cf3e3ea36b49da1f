"""Splitting a bash command line into simple commands and their words; resolving paths. Best effort.

A command is flattened (comments, line continuations and heredoc bodies out, redirections' fd numbers
dropped, unquoted newlines made `;`), tokenised with shlex (posix, punctuation_chars; a plain split of
the raw text when that fails, e.g. on unbalanced quotes) and cut into simple commands on ; && || | &
( ) ` $( ). Each simple command keeps its words, with leading assignments (`VAR=x cmd`), keywords
(`!`, `if`, `do`, `time`, `nohup`, `exec`...) and wrappers (env, timeout, nice, sudo, xargs...) dropped,
and apart its redirections: files written (> >> >| &> >&file, not >&2 or 2>&1), files read (<),
heredoc bodies and here-strings.

Known limits: nothing is expanded or executed. An unquoted `( )`, `$( )` or backtick subshell is only
a separator, so a `cd` inside it looks lasting to a caller following the cwd; quoted `$(...)` and
backticks stay inside their word (`substitutions` finds them, one level of nested parentheses deep);
`for`, `case`, functions and aliases are not understood; globs are not expanded; `resolve` knows only
~, $HOME and $PWD, so a path with any other variable (`cd $VAR`), ~user or a backtick is None: unknown.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from dataclasses import dataclass, field


def word_set(text: str) -> frozenset[str]:
    """The whitespace-separated words of `text`, as a set (for tables of names)."""
    return frozenset(text.split())


HOME = "/home/agent"
_PUNCT = "();<>|&`"
_PROTECT = str.maketrans({c: chr(0xE000 + k) for k, c in enumerate(_PUNCT)})
_RESTORE = str.maketrans({chr(0xE000 + k): c for k, c in enumerate(_PUNCT)})
_HEREDOC = re.compile(r"<<(-?)[ \t]*(['\"]?)([^\s'\";&|<>()\d][^\s'\";&|<>()]*)\2")
_FD_NUMBER = re.compile(r"\d+(?=[<>])")
_REDIRECT = re.compile(r"&>>?|[<>]+[&|]?")
_ASSIGNMENT = re.compile(r"[A-Za-z_]\w*=")
_KEYWORDS = word_set("! { } if then else elif do while until time nohup exec command builtin doas")
_WRAPPERS = {  # wrapper -> its options that take a value
    "env": {"-u", "-C", "-S"},
    "timeout": {"-s", "-k"},
    "nice": {"-n"},
    "ionice": {"-c", "-n"},
    "stdbuf": set(),
    "sudo": {"-u", "-g", "-C", "-h", "-p"},
    "xargs": {"-n", "-I", "-P", "-d", "-L", "-s", "-E", "-a"},
}


@dataclass
class SimpleCommand:
    """One simple command: its words (leading assignments, keywords and wrappers dropped), redirections."""

    argv: list[str]
    writes: list[str] = field(default_factory=list)
    reads: list[str] = field(default_factory=list)
    stdin_code: list[str] = field(default_factory=list)  # heredoc bodies and here-strings


def normalise(path: str) -> str:
    """`path` with `.`, `..` and repeated slashes folded (lexically; an absolute path stays absolute)."""
    return "/" + posixpath.normpath(path).lstrip("/") if path.startswith("/") else posixpath.normpath(path)


def inside(path: str, root: str) -> bool:
    """Whether normalised `path` is `root` or under it."""
    return path == root or path.startswith(root.rstrip("/") + "/")


def resolve(path: str, cwd: str | None, home: str = HOME) -> str | None:
    """`path` made absolute and normalised (~, $HOME, $PWD expanded; relative to `cwd`), or None when
    it cannot be known: another variable, ~user, a backtick, or a relative path under an unknown cwd."""
    if path == "~" or path.startswith("~/"):
        path = home + path[1:]
    for variable, value in (("$HOME", home), ("${HOME}", home), ("$PWD", cwd), ("${PWD}", cwd)):
        if path == variable or path.startswith(variable + "/"):
            path = value + path[len(variable) :] if value else ""
    if not path or path.startswith("~") or "$" in path or "`" in path:
        return None
    if not path.startswith("/"):
        if cwd is None:
            return None
        path = cwd + "/" + path
    return normalise(path)


def positionals(args: list[str], value_options: set[str] | frozenset[str] = frozenset()) -> list[str]:
    """Arguments that are neither options nor option values (`--` ends the options)."""
    out, i = [], 0
    while i < len(args):
        if args[i] == "--":
            return out + args[i + 1 :]
        if args[i].startswith("-") and args[i] != "-":
            i += 2 if args[i] in value_options else 1
            continue
        out.append(args[i])
        i += 1
    return out


def short_flags(args: list[str]) -> set[str]:
    """The letters of the short options (`-la` gives l and a; long options are left out)."""
    return {ch for a in args if a.startswith("-") and not a.startswith("--") for ch in a[1:]}


def substitutions(word: str) -> list[str]:
    """The commands of the `$(...)` and backtick substitutions left inside a (quoted) word."""
    return [inner[0] or inner[1] for inner in re.findall(r"\$\(((?:[^()]|\([^()]*\))*)\)|`([^`]*)`", word)]


def dash_c_code(args: list[str]) -> list[str]:
    """The code a shell (bash, sh...) is given with -c, from its arguments ([] without -c)."""
    flag = next((j for j, a in enumerate(args) if re.fullmatch(r"-[a-z]*c[a-z]*", a)), None)
    return args[flag + 1 : flag + 2] if flag is not None else []


def _flatten(command: str) -> tuple[str, list[str]]:
    """Drop comments, line continuations and redirections' fd numbers; protect quoted or escaped
    punctuation; make unquoted newlines ` ; `; cut heredoc bodies out (the delimiter becomes
    `__heredocN__`, N indexing the returned bodies)."""
    out: list[str] = []
    bodies: list[str] = []
    pending: list[tuple[str, bool]] = []
    quote, i, n = "", 0, len(command)
    while i < n:
        c, prev = command[i], (out[-1][-1:] if out else "")
        if quote:
            quote = "" if c == quote else quote
            if c == "\\" and quote == '"' and i + 1 < n:
                out.append(c)
                i, c = i + 1, command[i + 1]
            out.append(c.translate(_PROTECT))
            i += 1
        elif c == "\\" and i + 1 < n:
            nxt = command[i + 1]
            out.append("" if nxt == "\n" else nxt.translate(_PROTECT) if nxt in _PUNCT else c + nxt)
            i += 2
        elif c == "#" and prev in ("", " ", "\t", ";", "&", "|", "(", ")"):
            end = command.find("\n", i)
            i = n if end < 0 else end
        elif c.isdigit() and prev in ("", " ", "\t") and (fd := _FD_NUMBER.match(command, i)):
            i = fd.end()
        elif command.startswith("<<<", i):
            out.append(" <<< ")
            i += 3
        elif command.startswith("<<", i) and (heredoc := _HEREDOC.match(command, i)):
            out.append(f" << __heredoc{len(bodies) + len(pending)}__ ")
            pending.append((heredoc.group(3), heredoc.group(1) == "-"))
            i = heredoc.end()
        elif c == "\n":
            out.append(" ; ")
            i += 1
            for delimiter, strip_tabs in pending:
                lines = []
                while i < n:
                    end = command.find("\n", i) % (n + 1)  # -1 (no newline) becomes n
                    line, i = command[i:end], end + 1
                    if (line.lstrip("\t") if strip_tabs else line) == delimiter:
                        break
                    lines.append(line)
                bodies.append("\n".join(lines))
            pending = []
        else:
            quote = c if c in "'\"" else ""
            out.append(c)
            i += 1
    bodies.extend("" for _ in pending)
    return "".join(out), bodies


def simple_commands(command: str) -> list[SimpleCommand]:
    """The simple commands of a bash command line, in order (empty ones left out)."""
    text, bodies = _flatten(command)
    try:
        lexer = shlex.shlex(text, posix=True, punctuation_chars=_PUNCT)
        lexer.whitespace_split, lexer.commenters = True, ""
        tokens = list(lexer)
    except ValueError:  # unbalanced quotes and the like: a plain split of the raw text, punctuation apart
        tokens = re.findall(r"[();<>|&`]+|[^\s();<>|&`]+", text.translate(_RESTORE))
    is_op = [bool(t) and set(t) <= set(_PUNCT) for t in tokens]  # protected punctuation is a word
    tokens = [t.translate(_RESTORE) for t in tokens]
    commands, current, i = [], SimpleCommand([]), 0
    while i < len(tokens):
        token = tokens[i]
        if is_op[i] and _REDIRECT.fullmatch(token):
            target = tokens[i + 1] if i + 1 < len(tokens) and not is_op[i + 1] else None
            i += 1 if target is None else 2
            if target is None or (token.endswith("&") and re.fullmatch(r"\d+|-", target)):
                continue  # a lone operator, or a duplication like >&2
            if token in ("<<", "<<<"):
                heredoc = re.fullmatch(r"__heredoc(\d+)__", target) if token == "<<" else None
                current.stdin_code.append(bodies[int(heredoc.group(1))] if heredoc else target)
            else:
                (current.writes if ">" in token else current.reads).append(target)
            continue
        if is_op[i]:
            commands.append(current)
            current = SimpleCommand([])
        elif token != "$":
            current.argv.append(token)
        i += 1
    commands.append(current)
    for simple in commands:
        simple.argv = _unwrap(simple.argv)
    return [c for c in commands if c.argv or c.writes or c.reads or c.stdin_code]


def _unwrap(words: list[str]) -> list[str]:
    """Drop leading assignments (`VAR=x cmd`), shell keywords and wrappers (env, timeout, xargs, sudo...)."""
    i = 0
    while i < len(words):
        word = words[i]
        if word in _WRAPPERS:
            while i + 1 < len(words) and words[i + 1].startswith("-"):
                i += 2 if words[i + 1] in _WRAPPERS[word] else 1
            i += int(word == "timeout")  # its duration
        elif word not in _KEYWORDS and not _ASSIGNMENT.match(word):
            break
        i += 1
    return words[i:]
