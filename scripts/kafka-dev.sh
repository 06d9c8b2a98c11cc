#!/usr/bin/env bash
# Builds (when its source changed) and runs librdkafka's mock cluster as a Kafka-protocol broker
# on a loopback port: `npm run kafka:dev`, or `scripts/kafka-dev.sh --build-only` (prints the
# binary's path). Needs Debian's librdkafka-dev and gcc. The binary is cached outside git in
# node_modules/.cache/curvestream/ (or $CURVESTREAM_CACHE_DIR). With no arguments it creates the
# engine's topics (chain.events and the cluster roles' market.snapshots, market.feed, signals) with $BUS_PARTITIONS (default 16) partitions; run the engine against it with
# KAFKA_IDEMPOTENT=false (the mock cannot serve an idempotent producer: docs/decisions.md).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
src="$root/scripts/kafka-mock/mock_broker.c"
cache="${CURVESTREAM_CACHE_DIR:-$root/node_modules/.cache/curvestream}"
bin="$cache/kafka-mock-broker"

if [ ! -x "$bin" ] || [ "$src" -nt "$bin" ]; then
  if [ ! -f /usr/include/librdkafka/rdkafka_mock.h ]; then
    echo "kafka-dev: librdkafka-dev is not installed (apt-get install librdkafka-dev gcc)" >&2
    exit 1
  fi
  mkdir -p "$cache"
  gcc -O2 -Wall -Wextra -Werror -o "$bin.tmp.$$" "$src" -lrdkafka
  mv "$bin.tmp.$$" "$bin"
fi

if [ "${1:-}" = "--build-only" ]; then
  echo "$bin"
  exit 0
fi

if [ "$#" -eq 0 ]; then
  partitions="${BUS_PARTITIONS:-16}"
  set -- --topic "chain.events:$partitions" --topic "market.snapshots:$partitions" --topic "market.feed:$partitions" --topic "signals:$partitions"
fi
exec "$bin" "$@"
