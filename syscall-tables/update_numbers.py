#!/usr/bin/env python3
"""Check, or with --write refresh, the syscall numbers in syscalls.def.

Run by hand after new kernel headers are installed; never from the build.

    syscall-tables/update_numbers.py            # report differences, exit 1 if any
    syscall-tables/update_numbers.py --write    # rewrite the two number columns

Sources of truth:
  x86-64   <asm/unistd_64.h>       #define __NR_<name> <number>
  aarch64  <asm-generic/unistd.h>  the generic numbering arm64 uses, evaluated
           with the __ARCH_WANT_* switches of arch/arm64 (see AARCH64_DEFINES).

Only the second (x86-64) and third (aarch64) fields of each REPRO_SYSCALL(...)
row are touched; every other character of the file is kept. Rows numbered past
the header's last syscall belong to newer kernels than the headers: they are
listed and left alone (the unit test checks their numbers). A syscall that is
in <asm/unistd_64.h> but has no row is reported with a stub row to paste and
fill in by hand (arg kinds, policy and flags need a human).
"""

import argparse
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_DEF = HERE / "syscalls.def"
X86_64_HEADERS = [
    Path("/usr/include/x86_64-linux-gnu/asm/unistd_64.h"),
    Path("/usr/include/asm/unistd_64.h"),
]
GENERIC_HEADER = Path("/usr/include/asm-generic/unistd.h")

# What arch/arm64 defines before including asm-generic/unistd.h (arm64's
# uapi unistd.h up to 6.10; from 6.11 on, arch/arm64/kernel/Makefile.syscalls
# lists the same ABIs: renameat newstat rlimit memfd_secret). If aarch64
# numbers look wrong for fstat, renameat, getrlimit or memfd_secret, this list
# is out of date.
AARCH64_DEFINES = {
    "__ARCH_WANT_RENAMEAT",
    "__ARCH_WANT_NEW_STAT",
    "__ARCH_WANT_SET_GET_RLIMIT",
    "__ARCH_WANT_TIME32_SYSCALLS",
    "__ARCH_WANT_SYS_CLONE3",
    "__ARCH_WANT_MEMFD_SECRET",
}
AARCH64_BITS_PER_LONG = 64

# REPRO_SYSCALL(name, x86_64, aarch64, ...: rows may continue on later lines.
ROW_RE = re.compile(r"^REPRO_SYSCALL\(\s*(\w+)\s*,\s*(-?\d+)\s*,\s*(-?\d+)\s*,", re.MULTILINE)
DEFINE_RE = re.compile(r"^#\s*define\s+(__NR3264_\w+|__NR_\w+)\s+(\S+)\s*$")
NOT_SYSCALLS = {"syscalls", "arch_specific_syscall"}


def read_x86_64(path):
    """{name: number} from <asm/unistd_64.h>."""
    numbers = {}
    for line in path.read_text().splitlines():
        match = DEFINE_RE.match(line)
        if match and match.group(1).startswith("__NR_") and match.group(2).isdigit():
            numbers[match.group(1)[len("__NR_"):]] = int(match.group(2))
    return numbers


def eval_condition(expr, defines, bits_per_long):
    """Evaluates a #if expression of the kind asm-generic/unistd.h uses."""
    expr = re.sub(r"defined\s*\(\s*(\w+)\s*\)|defined\s+(\w+)",
                  lambda m: " 1 " if (m.group(1) or m.group(2)) in defines else " 0 ", expr)
    expr = expr.replace("__BITS_PER_LONG", str(bits_per_long))
    expr = expr.replace("||", " or ").replace("&&", " and ")
    expr = re.sub(r"!(?!=)", " not ", expr)
    if re.search(r"[A-Za-z_]\w*", re.sub(r"\b(or|and|not)\b", "", expr)):
        raise ValueError(f"cannot evaluate #if {expr!r}")
    return bool(eval(expr, {"__builtins__": {}}, {}))  # digits and operators only


def read_generic(path, defines, bits_per_long):
    """{name: number} from asm-generic/unistd.h, with a tiny preprocessor."""
    defines = set(defines)
    numbers = {}
    raw = {}  # __NR_* and __NR3264_* macro -> value text, in taken branches only
    stack = []  # (this branch taken, any branch of this #if taken so far)
    for line in path.read_text().splitlines():
        stripped = line.strip()
        directive = re.match(r"#\s*(\w+)\s*(.*)", stripped)
        active = all(taken for taken, _ in stack)
        if directive:
            word, rest = directive.group(1), directive.group(2).split("/*")[0].strip()
            if word in ("if", "ifdef", "ifndef"):
                if word == "ifdef":
                    taken = rest in defines
                elif word == "ifndef":
                    taken = rest not in defines
                else:
                    taken = eval_condition(rest, defines, bits_per_long)
                stack.append((taken, taken))
                continue
            if word == "elif":
                _, any_taken = stack.pop()
                taken = not any_taken and eval_condition(rest, defines, bits_per_long)
                stack.append((taken, any_taken or taken))
                continue
            if word == "else":
                _, any_taken = stack.pop()
                stack.append((not any_taken, True))
                continue
            if word == "endif":
                stack.pop()
                continue
            if word == "define" and active:
                match = DEFINE_RE.match(stripped)
                if match:
                    raw[match.group(1)] = match.group(2)
                elif re.match(r"\w+", rest):
                    defines.add(re.match(r"\w+", rest).group(0))
            continue
    for macro, value in raw.items():
        if not macro.startswith("__NR_"):
            continue
        seen = set()
        while not value.isdigit() and value in raw and value not in seen:
            seen.add(value)
            value = raw[value]
        name = macro[len("__NR_"):]
        if value.isdigit() and name not in NOT_SYSCALLS:
            numbers[name] = int(value)
    return numbers


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true", help="rewrite syscalls.def in place")
    parser.add_argument("--def", dest="def_path", type=Path, default=DEFAULT_DEF)
    parser.add_argument("--x86-64-header", type=Path,
                        default=next((p for p in X86_64_HEADERS if p.exists()), X86_64_HEADERS[0]))
    parser.add_argument("--generic-header", type=Path, default=GENERIC_HEADER)
    args = parser.parse_args()

    x86_64 = read_x86_64(args.x86_64_header)
    aarch64 = read_generic(args.generic_header, AARCH64_DEFINES, AARCH64_BITS_PER_LONG)
    if not x86_64:
        sys.exit(f"update_numbers.py: no __NR_ defines in {args.x86_64_header}")

    text = args.def_path.read_text()
    rows = list(ROW_RE.finditer(text))
    changes = []  # (start, end, replacement)
    problems = []
    newer = []  # rows of syscalls newer than the headers: kept, not checked
    named = set()
    newest_in_header = max(x86_64.values())
    for row in rows:
        name = row.group(1)
        named.add(name)
        old = (int(row.group(2)), int(row.group(3)))
        if name not in x86_64:
            if old[0] > newest_in_header:
                newer.append(name)
            else:
                problems.append(f"{name}: row has no __NR_{name} in {args.x86_64_header}")
            continue
        new = (x86_64[name], aarch64.get(name, -1))
        if new != old:
            problems.append(f"{name}: numbers {old[0]}, {old[1]} should be {new[0]}, {new[1]}")
            changes.append((row.start(2), row.end(3), f"{new[0]}, {new[1]}"))
    for name, number in sorted(x86_64.items(), key=lambda item: item[1]):
        if name not in named:
            problems.append(
                f"{name}: no row; add one in x86-64 number order, e.g.\n"
                f"  REPRO_SYSCALL({name}, {number}, {aarch64.get(name, -1)}, 0, Emulate,"
                " Unsupported)")

    for problem in problems:
        print(problem)
    if newer:
        print(f"{len(newer)} row(s) newer than {args.x86_64_header}, not checked: "
              + " ".join(newer))
    if args.write and changes:
        for start, end, replacement in reversed(changes):
            text = text[:start] + replacement + text[end:]
        args.def_path.write_text(text)
        print(f"rewrote {len(changes)} row(s) of {args.def_path}")
    if not problems:
        print(f"{len(rows) - len(newer)} rows match {args.x86_64_header} and {args.generic_header}")
    unfixed = len(problems) - (len(changes) if args.write else 0)
    return 1 if unfixed else 0


if __name__ == "__main__":
    sys.exit(main())
