#!/usr/bin/env bash
# Replay does not touch the outside world. isolation_client creates a file
# and exchanges a request and a reply with a TCP server on 127.0.0.1.
#   - recorded: the file is created and the server sees the connection;
#   - then the file is removed and the server stopped (nothing listens on
#     the port): the replay prints the recorded output, reply included, with
#     the recorded status, and does not create the file;
#   - a second replay while a logging server listens on the same port: that
#     server sees no connection.
# Usage: isolation.sh REPRO BUILD_DIR
source "$(dirname "$0")/lib.sh"
scenario_start isolation "$@"
need_tool ss
python=/usr/bin/python3
need_file "$python"
client=$build_dir/tests/e2e/scenarios/scenario_isolation_client
need_file "$client"
server_script=$scenario_dir/tcp_server.py

# start_server PORT_FILE LOG_FILE [PORT]: sets $server_pid and $port.
start_server() {
  start_background "$python" "$server_script" "$@"
  server_pid=$background_pid
  wait_for 20 test -s "$1" || fail "the TCP server did not start"
  port=$(cat "$1")
}
listening() { [ -n "$(ss -Hltn "sport = :$1")" ]; }

start_server port.a server-a.log
listening "$port" || fail "ss shows nothing listening on port $port"

bounded 30 "$client" native.file "$port" >native.out 2>native.err
[ $? -eq 0 ] || fail "native client failed: $(cat native.err)"
grep -q '^reply: pong ' native.out || fail "native client got no reply: $(cat native.out)"

mkdir out
record 60 trace record.out record.err "$client" "$work/out/file" "$port"
record_status=$status
[ "$record_status" -eq 0 ] || fail "recorded client exited $record_status: $(tail -n 5 record.err)"
diff <(grep -v '^reply: ' native.out) <(grep -v '^reply: ' record.out) >record.diff ||
  fail "recorded output differs from native: $(cat record.diff)"
grep -q '^reply: pong ' record.out || fail "recorded client got no reply: $(cat record.out)"
cmp -s <(grep '^reply: ' native.out) <(grep '^reply: ' record.out) &&
  fail "native and recorded replies are equal: the server is not answering each run"
[ "$(cat out/file 2>/dev/null)" = "written by isolation_client" ] ||
  fail "the recorded run did not write out/file"
[ "$(grep -c '^connection from 127.0.0.1' server-a.log)" -eq 2 ] ||
  fail "the server did not see exactly the native and recorded connections: $(cat server-a.log)"
expect_check_complete trace

rm -f out/file native.file
stop_pid "$server_pid"
wait_for 10 eval '! listening "$port"' || fail "port $port is still listening after the server stopped"

expect_same_replay trace record.out record.err "$record_status" 60
[ ! -e out/file ] || fail "replay created $work/out/file"
[ -z "$(ls -A out)" ] || fail "replay created files in out/: $(ls -A out)"
listening "$port" && fail "something listens on port $port after the replay"

# The same port again, now with a server that logs every connection.
start_server port.b server-b.log "$port"
[ "$(cat port.b)" -eq "$port" ] || fail "the logging server is on port $(cat port.b), not $port"
expect_same_replay trace record.out record.err "$record_status" 60
[ ! -e out/file ] || fail "the second replay created $work/out/file"
stop_pid "$server_pid"
[ ! -s server-b.log ] || fail "the replay connected to the live server: $(cat server-b.log)"
pass "reply replayed with no server, no file created, no connection made"
