#!/usr/bin/env bash
# effects: `repro report --effects` names what a recorded shell pipeline touched
# outside itself, from the trace alone: the file it wrote (3 bytes, created
# or truncated: the shell never looked first), the file it deleted, the
# loopback TCP server it connected to (4 bytes each way) and the three
# programs it ran; nothing else. --json says the same, and --all lists the
# library reads the text leaves out.
source "$(dirname "$0")/lib.sh"
scenario_start effects "$@"
need_tool python3 sh rm

# The server runs outside the recording: it answers after the client shuts
# its side down (tcp_server.py), with "pong ...", of which the client reads 4 bytes.
start_background python3 "$scenario_dir/tcp_server.py" "$work/port" "$work/server.log"
wait_for 20 test -s "$work/port" || fail "the TCP server did not start"
port=$(cat "$work/port")
echo old >gone.txt
# The interpreter itself, not a wrapper script that finds it (pyenv's shims
# run a dozen programs of their own).
python=$(python3 -c 'import sys; print(sys.executable)') || fail "python3 does not run"

client="import socket; s=socket.create_connection((\"127.0.0.1\", $port)); s.sendall(b\"ping\"); s.shutdown(socket.SHUT_WR); s.recv(4)"
record 180 "$work/trace" rec.out rec.err sh -c "echo hi > out.txt; rm gone.txt; $python -c '$client'"
[ "$status" -eq 0 ] || fail "recording exited $status: $(tail -n 20 rec.err)"
[ "$(cat out.txt)" = hi ] || fail "out.txt holds '$(cat out.txt)'"
[ ! -e gone.txt ] || fail "gone.txt was not deleted"
grep -q "request b'ping'" "$work/server.log" || fail "the server got no ping: $(cat "$work/server.log")"

bounded 60 "$repro" report --effects "$work/trace" >effects.txt 2>effects.err ||
  fail "repro report --effects failed: $(cat effects.err)"
show=$'\n'"$(cat effects.txt)"
grep -qx 'Files changed (2):' effects.txt || fail "not exactly two files changed:$show"
grep -Eq "^  $work/out.txt +created, or truncated if it existed \(O_CREAT\|O_TRUNC\), wrote 3 bytes \(1 write\)$" effects.txt ||
  fail "out.txt is not listed as created and written with 3 bytes:$show"
grep -Eq "^  $work/gone.txt +deleted$" effects.txt || fail "gone.txt is not listed as deleted:$show"
grep -qx 'Network and socket endpoints (1):' effects.txt || fail "not exactly one endpoint:$show"
grep -qx "  tcp 127.0.0.1:$port  connected, sent 4 bytes, received 4 bytes" effects.txt ||
  fail "the connection to 127.0.0.1:$port is not listed with 4 bytes each way:$show"
grep -qx 'Programs executed (3):' effects.txt || fail "not exactly three programs:$show"
grep -Eq "^  pid [0-9]+  /(usr/)?bin/sh  \\$ sh -c 'echo hi > out.txt; rm gone.txt; .*'\$" effects.txt ||
  fail "sh is not listed with its argv:$show"
grep -Eq '^  pid [0-9]+  /.*/rm  \$ rm gone.txt$' effects.txt || fail "rm is not listed:$show"
grep -qF "  $python  \$ $python -c 'import socket; s=socket.create_connection(" effects.txt ||
  fail "python3 is not listed:$show"
grep -qx 'Signals sent outside the recording (0):' effects.txt || fail "signals listed:$show"
grep -q 'left out: .* of libraries and the loader' effects.txt ||
  fail "the library reads are not summarised:$show"

bounded 60 "$repro" report --effects --json "$work/trace" >effects.json 2>effects.err ||
  fail "repro report --effects --json failed: $(cat effects.err)"
python3 - "$work" "$port" effects.json "$python" <<'PY' || fail "--json does not say the same: $(cat effects.json)"
import json, sys
work, port, path, python = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
report = json.load(open(path))
changed = {f["path"]: f for f in report["files_changed"]}
assert set(changed) == {work + "/out.txt", work + "/gone.txt"}, changed
out = changed[work + "/out.txt"]
assert out["bytes_written"] == 3 and out["creation"] == "created-if-missing", out
assert out.get("truncated_if_existed") is True, out
assert changed[work + "/gone.txt"].get("deleted") is True, changed
[endpoint] = report["endpoints"]
assert endpoint["role"] == "connected" and endpoint["protocol"] == "tcp", endpoint
assert endpoint["address"] == "127.0.0.1:%d" % port, endpoint
assert endpoint["bytes_sent"] == 4 and endpoint["bytes_received"] == 4, endpoint
argv = [p["argv"][0] for p in report["programs"]]
assert argv == ["sh", "rm", python], argv
assert report["signals_outside"] == [], report["signals_outside"]
assert report["left_out"]["libraries"]["files"] > 0, report["left_out"]
PY

bounded 60 "$repro" report --effects --all "$work/trace" >all.txt 2>effects.err ||
  fail "repro report --effects --all failed: $(cat effects.err)"
grep -Eq '^  /.*libc\.so\.6 +read [0-9]+ bytes' all.txt || fail "--all does not list libc:"$'\n'"$(cat all.txt)"
pass "effects lists out.txt (3 bytes), gone.txt, 127.0.0.1:$port (4 bytes each way), sh, rm and $python"
