#!/usr/bin/env python3
"""Where each row's instructions go, Goblin against its floor: scripts/breakdown.sh runs the
instructions driver with Goblin's line-table build and `--profile`, then this reads the dumps
(`<server>-<row>-<side>.out`) with callgrind_annotate and writes a table per row:

- the server's work the module asks for, by the module API functions called (inclusive, per
  call): parsing, key lookups, values, replication, events, reply, blocking;
- the module's own instructions (self, per call), by where the code is (the line tables say
  which source file each instruction comes from, inlined code included): parsing, the
  command's file (its parse and run, inlined), the pure decision, formatting, the effects and
  grants, the key layer, the reply, and the entry point's bookkeeping.

    scripts/breakdown.py DIR [CALLS] > bench/results/breakdown.md

CALLS is the calls a row's workload makes (20000; a row whose name says it serves waiters
makes 400). Numbers are instructions per call, rounded.
"""
import collections
import os
import re
import subprocess
import sys

SERVERS = {
    "redis70": "Redis 7.0",
    "redis82": "Redis 8.2",
    "valkey91": "Valkey 9.1",
    "redis810": "Redis 8.10",
}

# The module API functions a command calls, by what the server does for it. Inclusive: a
# function's figure holds what it calls (none of these calls another of the list, but
# RedisModule_CloseKey of a sorted set stops its iterator).
API = [
    ("parsing", r"^(RM|VM)_(StringPtrLen|StringToLongLong|StringToDouble)$"),
    ("key lookups", r"^(RM|VM)_(OpenKey|CloseKey|KeyType|ValueLength|GetExpire|GetAbsExpire)$"),
    ("values", r"^(RM|VM)_(StringDMA|StringTruncate|StringSet|SetAbsExpire|SetExpire|DeleteKey|UnlinkKey|Zset\w+|CreateString|FreeString)$"),
    ("replication", r"^(RM|VM)_Replicate$"),
    ("events", r"^(RM|VM)_NotifyKeyspaceEvent$"),
    ("reply", r"^(RM|VM)_ReplyWith\w+$"),
    ("blocking", r"^(RM|VM)_(BlockClientOnKeys|UnblockClient|SetDisconnectCallback|CreateTimer|StopTimer|SubscribeToKeyspaceEvents|AddPostNotificationJob|GetContextFlags|Call|FreeCallReply)$"),
    ("options", r"^(RM|VM)_(SetModuleOptions|CachedMicroseconds|Milliseconds|GetSelectedDb|AvoidReplicaTraffic)$"),
]

# The module's own code, by source file (inlined code keeps its file), then by the function it
# was compiled into for the standard library's code.
OWN_FILES = [
    ("parsing", r"src/server/args\.rs|core/src/word\.rs|src/commands/mod\.rs|src/server/numbers\.c"),
    ("the command's file", r"src/commands/"),
    ("formatting", r"core/src/decimal\.rs"),
    ("decision (core)", r"core/src/"),
    ("effects and grants", r"src/effects\.rs|src/grant\.rs|src/fencing/|src/server/ctx\.rs"),
    ("keys", r"src/server/(keys|strings|zsets|options)\.rs"),
    ("reply", r"src/server/reply\.rs"),
    ("entry, lines, inlined library code", r"src/server/(entry|blocking|stats|api)\.rs|src/waiting(\.rs|/)"),
]
OWN_FUNCTIONS = [
    ("parsing", r"server::args::|decimal::parse|exact_integer_double|KeyIndex|counted_groups|word::"),
    ("formatting", r"decimal::Decimal|StoredText|expires_at_text|core::fmt|flt2dec|Display"),
    ("decision (core)", r"^goblin_core::"),
    ("effects and grants", r"goblin::effects|goblin::grant|goblin::fencing|server::ctx::"),
    ("keys", r"server::keys|server::strings|server::zsets|server::options|keys::Key"),
    ("reply", r"server::reply|Reply"),
    ("the command's file", r"goblin::commands::"),
    ("entry, lines, inlined library code", r"."),
]
# The functions that read numbers: the arguments', and the stored values'.
PARSES = r"parse|args::|tat_of|standing|stored|count"

ORDER = ["parsing", "key lookups", "values", "replication", "events", "reply", "blocking",
         "options", "the command's file", "decision (core)", "formatting",
         "effects and grants", "keys", "entry, lines, inlined library code"]


def annotate(dump, inclusive):
    out = subprocess.run(
        ["callgrind_annotate", "--threshold=100",
         "--inclusive=" + ("yes" if inclusive else "no"), dump],
        capture_output=True, text=True, check=True).stdout
    rows = []
    for line in out.splitlines():
        m = re.match(r"^\s*([\d,]+) \([ \d.]+%\)\s+(.*?)(?: \[(.*)\])?\s*$", line)
        if not m or "PROGRAM TOTALS" in line:
            continue
        # `file:function`; a function's name has colons of its own, a file's path none.
        file, _, function = m.group(2).partition(":")
        rows.append((int(m.group(1).replace(",", "")), file, function, m.group(3) or ""))
    return rows


def breakdown(dump, calls, by_file):
    """Per category, per call: the API's inclusive costs and the module's own (by source file
    where `by_file`, else its total alone: the floor has no line tables)."""
    costs = collections.Counter()
    seen = set()
    for cost, _file, function, _obj in annotate(dump, True):
        name = re.sub(r"\.(lto_priv|part|constprop|isra)\.\d+", "", function)
        for category, pattern in API:
            if re.match(pattern, name) and name not in seen:
                seen.add(name)
                costs["server: " + category] += cost
    rows = annotate(dump, False)
    # A function's first line names its object; the lines of other files inlined into it do not.
    own = {function for _cost, _file, function, obj in rows if "libgoblin" in obj}
    total = 0
    for cost, file, function, _obj in rows:
        if function not in own:
            continue
        total += cost
        if not by_file:
            continue
        category = None
        if file.endswith("core/src/decimal.rs") and re.search(PARSES, function):
            # The integer parser, inlined where arguments and stored values are read.
            category = "parsing"
        elif "/rustc/" not in file and ".cargo" not in file:
            category = next((c for c, p in OWN_FILES if re.search(p, file)), None)
        if category is None:
            category = next(c for c, p in OWN_FUNCTIONS if re.search(p, function))
        costs["own: " + category] += cost
    costs["own: total"] = total
    return {k: v / calls for k, v in costs.items()}


def call_total(dump, calls, woken):
    """`call()`, and with `woken` the server's answers to the waiters woken (outside it), as the
    instructions driver counts them."""
    total, found = 0.0, set()
    for cost, _file, function, _obj in annotate(dump, True):
        name = re.sub(r"\.(lto_priv|part|constprop|isra)\.\d+", "", function)
        if name in found:
            continue
        if name == "call" or (woken and name == "moduleHandleBlockedClients"):
            found.add(name)
            total += cost
    return total / calls


def main():
    directory = sys.argv[1]
    default_calls = int(sys.argv[2]) if len(sys.argv) > 2 else 20000
    # The rows in the driver's order, by their file names (`rows.tsv`).
    names = collections.OrderedDict()
    with open(os.path.join(directory, "rows.tsv"), encoding="utf-8") as index:
        for line in index:
            slug, _, name = line.rstrip("\n").partition("\t")
            names[slug] = name
    pairs = collections.OrderedDict()
    for slug, name in names.items():
        for server in SERVERS:
            sides = {}
            for side in ("goblin", "floor"):
                path = os.path.join(directory, f"{server}-{slug}-{side}.out")
                if os.path.exists(path):
                    sides[side] = path
            if sides:
                pairs[(name, server)] = sides
    print("# Where the instructions go: Goblin against its floor\n")
    print("Written by `scripts/breakdown.sh` (callgrind's dumps of `make instructions`' workloads,")
    print("Goblin built with line tables, read by `scripts/breakdown.py`). Instructions per call.")
    print("**server:** what the server does for the module API functions a call makes, inclusive;")
    print("**own:** the module's own instructions, by the source file they come from (inlined code")
    print("keeps its file; library code inlined into a function of Goblin's counts with the entry")
    print("point); the floor's, one function a command and no line tables, as a total. The rest of")
    print("`call()` is the server's own and the same on both sides.\n")
    for (row, server), sides in pairs.items():
        if "goblin" not in sides or "floor" not in sides:
            continue
        calls = 400 if "serving" in row else default_calls
        g = breakdown(sides["goblin"], calls, True)
        f = breakdown(sides["floor"], calls, False)
        woken = "serving" in row
        gt = call_total(sides["goblin"], calls, woken)
        ft = call_total(sides["floor"], calls, woken)
        print(f"## {row} ({SERVERS.get(server, server)})\n")
        counted = "`call()` and the waiters' answers" if woken else "`call()`"
        print(f"{counted}: Goblin {gt:,.0f}, floor {ft:,.0f}, {gt - ft:+,.0f} ({gt / ft:.2f}x)\n")
        print("| where | Goblin | floor | more |")
        print("|---|---:|---:|---:|")
        keys = [f"server: {c}" for c in ORDER] + [f"own: {c}" for c in ORDER] + ["own: total"]
        for key in keys:
            a, b = g.get(key, 0.0), f.get(key, 0.0)
            if round(a) == 0 and round(b) == 0:
                continue
            if key.startswith("own: ") and key != "own: total":
                # The floor's own code is one function a command: only its total compares.
                print(f"| {key} | {a:,.0f} | | |")
            else:
                print(f"| {key} | {a:,.0f} | {b:,.0f} | {a - b:+,.0f} |")
        print()


if __name__ == "__main__":
    main()
