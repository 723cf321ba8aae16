#!/usr/bin/env bash
# Makes sure a Redis server answers on 127.0.0.1:6379 for the store tests:
# installs it from Debian's packages if missing, starts it if stopped.
set -euo pipefail
if redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; then
  echo "redis: running"; exit 0
fi
if ! command -v redis-server >/dev/null; then
  echo "redis: installing redis-server"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null
fi
mkdir -p /var/lib/redis /var/log/redis
redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no \
  --dir /var/lib/redis --logfile /var/log/redis/ci.log
for _ in $(seq 50); do
  redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1 && { echo "redis: started"; exit 0; }
  sleep 0.1
done
echo "redis: did not start" >&2; exit 1
