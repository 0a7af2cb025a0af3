#!/usr/bin/env bash
# The Docker engine CI needs for test/docker, with no container registry reachable.
#   bash .ci/docker.sh start   installs docker.io, starts dockerd when none answers, builds the node base image
#   bash .ci/docker.sh stop    stops the dockerd that start launched, by its PID
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
shared="$repo/../shared"
[ -f "$shared/tools/offline-node-image.sh" ] || shared=/work/shared
# The tool's own default; it records the PID of a dockerd it started there.
work=${WORK:-/tmp/offline-node-image}
pidfile="$work/dockerd.pid"

case "${1:-}" in
  start)
    # The base image to build is the one the Dockerfile names, so the two cannot drift apart.
    major=$(sed -n 's/^FROM node:\([0-9][0-9]*\).*/\1/p' "$repo/Dockerfile" | head -n 1)
    NODE_MAJOR=${major:-24} bash "$shared/tools/offline-node-image.sh"
    ;;
  stop)
    [ -f "$pidfile" ] || { echo "docker.sh: no dockerd started by start ($pidfile missing)"; exit 0; }
    pid=$(cat "$pidfile")
    # A PID from an earlier boot may now name another process: only a dockerd is stopped.
    if [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = dockerd ]; then
      kill "$pid"
      for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
      if kill -0 "$pid" 2>/dev/null; then echo "docker.sh: dockerd $pid still running after 20 s" >&2; exit 1; fi
      echo "docker.sh: stopped dockerd $pid"
    fi
    rm -f "$pidfile"
    ;;
  *)
    echo "usage: $0 start|stop" >&2
    exit 2
    ;;
esac
