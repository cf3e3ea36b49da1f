#!/usr/bin/env bash
# Build evalkit's base image with no container registry: debootstrap a minimal
# Debian with python3, pytest and git, add the unprivileged `agent` user, and
# `docker import` the tree. Needs root, debootstrap and a Debian mirror.
# The suite decides the Python (bullseye 3.9, bookworm 3.11, trixie 3.13);
# EXTRA_PACKAGES (comma-separated) are added to the common list, e.g.
# python3-pip,python3-venv for the per-Python-version bases. When pip is among
# them, Debian's EXTERNALLY-MANAGED marker is removed so `pip install` works in
# the disposable sandbox as it does on the registry's python image.
#   usage: debootstrap.sh IMAGE_TAG [MIRROR] [SUITE] [EXTRA_PACKAGES]
set -euo pipefail
tag=${1:?usage: debootstrap.sh IMAGE_TAG [MIRROR] [SUITE] [EXTRA_PACKAGES]}
mirror=${2:-http://deb.debian.org/debian}
suite=${3:-bookworm}
extra=${4:-}
packages=python3,python-is-python3,python3-pytest,git,ca-certificates,patch,procps,ripgrep,less
if [[ -n $extra ]]; then packages=$packages,$extra; fi
root=$(mktemp -d /tmp/evalkit-rootfs.XXXXXX)
trap 'rm -rf "$root"' EXIT
debootstrap --variant=minbase --include="$packages" "$suite" "$root" "$mirror" >&2
chroot "$root" useradd --create-home --uid 1000 --shell /bin/bash agent
chroot "$root" install -d -o agent -g agent /workspace
chroot "$root" git config --system user.name evalkit
chroot "$root" git config --system user.email evalkit@localhost
chroot "$root" git config --system safe.directory '*'
chroot "$root" git config --system init.defaultBranch main
chroot "$root" apt-get clean
if [[ ,$extra, == *,python3-pip,* ]]; then rm -f "$root"/usr/lib/python3*/EXTERNALLY-MANAGED; fi
rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin "$root"/usr/share/doc/* "$root"/usr/share/man/*
tar -C "$root" -c . | docker import \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'ENV LANG=C.UTF-8' \
  --change 'ENV PYTHONDONTWRITEBYTECODE=1' \
  --change 'WORKDIR /workspace' \
  --change 'CMD ["sleep", "infinity"]' \
  --message "evalkit base ($suite, debootstrap)" - "$tag"
