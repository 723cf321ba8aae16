#!/usr/bin/env bash
# Makes sure a Redis server answers where the tests look for it
# (A2AGW_REDIS_ADDR, default 127.0.0.1:6379; see internal/testredis):
# installs it from Debian's packages if missing, starts it if stopped (on
# this machine only). With A2AGW_SKIP_REDIS=1 the Redis tests skip, and so
# does this.
set -euo pipefail
if [[ "${A2AGW_SKIP_REDIS:-}" == 1 ]]; then
  echo "redis: A2AGW_SKIP_REDIS=1, the Redis tests skip"; exit 0
fi
addr="${A2AGW_REDIS_ADDR:-127.0.0.1:6379}"
host="${addr%:*}" port="${addr##*:}"
ping() { redis-cli -h "$host" -p "$port" ping >/dev/null 2>&1; }
if ping; then
  echo "redis: running on $addr"; exit 0
fi
case "$host" in
  127.0.0.1 | localhost) ;;
  *) echo "redis: nothing answers on $addr, and it is not this machine's to start" >&2; exit 1 ;;
esac
if ! command -v redis-server >/dev/null; then
  echo "redis: installing redis-server"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null
fi
mkdir -p /var/lib/redis /var/log/redis
redis-server --daemonize yes --bind 127.0.0.1 -::1 --port "$port" --save "" --appendonly no \
  --dir /var/lib/redis --logfile /var/log/redis/ci.log
for _ in $(seq 50); do
  ping && { echo "redis: started on $addr"; exit 0; }
  sleep 0.1
done
echo "redis: did not start" >&2; exit 1
