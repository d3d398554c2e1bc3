#!/usr/bin/env bash
# A measurement, not a test (CI does not run it): the daemon's peak RSS while 300
# snapshots of 4 MB arrive during a 10^7-visit search, the time SIGTERM takes to stop
# that search, and 5,000 rapid QoS 1 commands counted as replies and "dropped" alerts.
# Needs mosquitto, mosquitto_pub/mosquitto_sub (Debian's mosquitto-clients), socat, bc.
# Usage: tests/flood-rss.sh [TENGEN_BINARY]   (default target/debug/tengen)
set -u
BIN=$(realpath "${1:-target/debug/tengen}")
D=$(mktemp -d)
P=18830
cat > $D/m.conf <<C
listener $P 127.0.0.1
allow_anonymous true
persistence false
max_queued_messages 100000
C
/usr/sbin/mosquitto -c $D/m.conf > $D/m.log 2>&1 & MQ=$!
socat pty,raw,echo=0,link=$D/board pty,raw,echo=0,link=$D/ctl & SO=$!
sleep 0.5
cat > $D/t.toml <<C
[mqtt]
host = "127.0.0.1"
port = $P
device_id = "x"
[serial]
port = "$D/board"
[game]
engine = "none"
[engine]
model = "none"
mode = "search"
visits = 10000000
max_visits = 10000000
max_time = 3600
threads = 1
[state]
dir = "$D/state"
C
RUST_LOG=warn $BIN serve --config $D/t.toml 2> $D/d.log & TG=$!
sleep 1.5
exec 3<>$D/ctl
echo "genmove b" >&3
sleep 0.5
echo "rss before: $(grep VmRSS /proc/$TG/status)"
head -c 4000000 /dev/zero | tr '\0' '.' > $D/big
mosquitto_sub -p $P -t 'tengen/x/alert' -v > $D/alerts.txt & SUB=$!
sleep 0.3
for i in $(seq 300); do mosquitto_pub -p $P -q 1 -t tengen/x/board/snapshot -f $D/big; done
sleep 2
echo "after 300 x 4 MB snapshots: $(grep -E 'VmHWM|VmRSS' /proc/$TG/status | tr '\n' ' ')"
echo "too-large alerts: $(grep -c 'over the' $D/alerts.txt)"
kill $SUB
T0=$(date +%s.%N)
kill -TERM $TG
wait $TG; echo "SIGTERM during the search: exit $? after $(echo "$(date +%s.%N) - $T0" | bc) s"
RUST_LOG=warn $BIN serve --config $D/t.toml 2>> $D/d.log & TG=$!
sleep 1.5
# 5,000 rapid commands.
mosquitto_sub -p $P -t 'tengen/x/#' -v > $D/all.txt & SUB=$!
sleep 0.3
seq 5000 | awk '{printf "{\"cmd\":\"gtp\",\"line\":\"name\",\"id\":\"%d\"}\n", $1}' | mosquitto_pub -p $P -q 1 -t tengen/x/command -l
sleep 3
kill -TERM $TG; wait $TG
sleep 0.5
kill $SUB
echo "replies: $(grep -c 'gtp/reply' $D/all.txt) dropped alerts: $(grep -c '"dropped"' $D/all.txt)"
kill $SO $MQ 2>/dev/null
echo dir $D
