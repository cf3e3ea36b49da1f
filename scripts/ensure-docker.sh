#!/usr/bin/env bash
# Make sure a Docker engine answers. On Debian as root: install docker.io (and debootstrap, for
# the offline base image) when missing and start dockerd in the background. Elsewhere: say in one
# line what is missing.
set -euo pipefail
py=${VENV:-.venv}/bin/python
answers() { "$py" -c 'import docker; docker.from_env(timeout=5).ping()' >/dev/null 2>&1; }

if answers; then
  if ! command -v debootstrap >/dev/null && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    apt-get install -y -qq debootstrap >/dev/null 2>&1 || true
  fi
  exit 0
fi
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
  echo "evalkit: no Docker engine answers; start Docker (or set DOCKER_HOST) and retry" >&2
  exit 1
fi
missing=()
command -v dockerd >/dev/null || missing+=(docker.io)
command -v debootstrap >/dev/null || missing+=(debootstrap)
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing ${missing[*]} with apt-get" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq "${missing[@]}" >/dev/null
fi
echo "starting dockerd (log: /tmp/evalkit-dockerd.log)" >&2
setsid nohup dockerd >/tmp/evalkit-dockerd.log 2>&1 </dev/null &  # own session: outlives the shell that started it
for _ in $(seq 1 60); do
  answers && exit 0
  sleep 1
done
echo "evalkit: dockerd did not answer within 60 s; see /tmp/evalkit-dockerd.log" >&2
exit 1
