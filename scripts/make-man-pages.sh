#!/usr/bin/env bash
# Writes the manual pages cordis-node.1 and cordis-console.1 from what the binaries print for --help, so
# the pages say what the binaries do: the usage lines become SYNOPSIS, the flag and command lines
# OPTIONS and COMMANDS, the other lines DESCRIPTION, "Exit codes: ..." EXIT STATUS.
#
#   scripts/make-man-pages.sh BIN_DIR OUT_DIR     e.g. .build/release dist/man/man1
#   man -l OUT_DIR/cordis-node.1                  to read one
set -euo pipefail
if (($# != 2)); then
  sed -n '2,8s/^# \{0,1\}//p' "$0" >&2
  exit 64
fi
bin="$1" out="$2"
mkdir -p "$out"
version="$("$bin/cordis-node" --version | awk '{ print $NF }')"
for program in cordis-node cordis-console; do
  "$bin/$program" --help >"$out/$program.help"
  python3 - "$program" "$version" "$out/$program.help" >"$out/$program.1" <<'PYTHON'
import re, sys

program, version, path = sys.argv[1], sys.argv[2], sys.argv[3]
summary = {
    "cordis-node": "run one node of a Cordis cluster",
    "cordis-console": "see and change a Cordis cluster",
}[program]
lines = open(path, encoding="utf-8").read().rstrip("\n").split("\n")


def roff(text):
    """Text escaped for roff: backslashes, hyphens of flags and names, a leading dot or quote."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    if text[:1] in (".", "'"):
        text = "\\&" + text
    return text


def bold_flags(text):
    return re.sub(r"(\\-\\-[a-z][a-z\\-]*)", r"\\fB\1\\fR", roff(text))


title = program.upper().replace("-", "\\-")
out = [f'.TH {title} 1 "" "Cordis {version}" "User Commands"',
       ".SH NAME", f"{roff(program)} \\- {summary}", ".SH SYNOPSIS", ".nf"]
# The synopsis: the first line and the lines indented under it, up to a blank line or a command line.
index = 0
first = re.sub(r"^[Uu]sage: ", "", lines[0])
out.append(roff(first))
index = 1
while index < len(lines) and lines[index].startswith("         "):
    out.append(roff(lines[index].strip()))
    index += 1
out.append(".fi")

description, options, commands, exits = [], [], [], []
section = None
current_heading = None
for line in lines[index:]:
    if not line.strip():
        continue
    if line.startswith("Exit codes:"):
        exits.append(line[len("Exit codes:"):].strip())
        continue
    # cordis-console's lines at two spaces are commands (one is "--discovery URL members"); cordis-node's
    # are flags.
    flag = None if program == "cordis-console" else re.match(r"^  (--[a-z][a-z-]*(?: [^ ].*?)?)\s{2,}(.*)$", line)
    command = re.match(r"^  ([a-z-][^ ]*(?: [^ ].*?)?)(?:\s{2,}(.*))?$", line)
    continuation = re.match(r"^\s{20,}(\S.*)$", line)
    if continuation and (options or commands) and section in ("options", "commands"):
        (options if section == "options" else commands)[-1][1].append(continuation.group(1))
    elif flag:
        section = "options"
        options.append((flag.group(1), [flag.group(2)], current_heading))
    elif command and not line.startswith("   "):
        section = "commands"
        commands.append((command.group(1), [command.group(2)] if command.group(2) else []))
    elif re.match(r"^[A-Z][A-Za-z ]+:$", line):
        section = "heading"
        current_heading = line[:-1]
        options.append((None, [], current_heading))
    else:
        section = "description"
        description.append(line.strip())

if description:
    out.append(".SH DESCRIPTION")
    for text in description:
        out.append(bold_flags(text))
if commands:
    out.append(".SH COMMANDS")
    for synopsis, text in commands:
        out += [".TP", f"\\fB{roff(synopsis)}\\fR"]
        if text:
            out.append(bold_flags(" ".join(text)))
if any(name for name, _, _ in options):
    out.append(".SH OPTIONS")
    for name, text, heading in options:
        if name is None:
            out.append(f".SS {roff(heading)}")
            continue
        parts = name.split(" ", 1)
        argument = f" \\fI{roff(parts[1])}\\fR" if len(parts) > 1 else ""
        out += [".TP", f"\\fB{roff(parts[0])}\\fR{argument}", bold_flags(" ".join(text))]
if exits:
    out += [".SH EXIT STATUS", roff(" ".join(exits))]
other = "cordis-console" if program == "cordis-node" else "cordis-node"
out += [".SH SEE ALSO", f"\\fB{roff(other)}\\fR(1); the documentation in docs/operations.md of the Cordis package."]
print("\n".join(out))
PYTHON
  rm "$out/$program.help"
done
