#!/usr/bin/env bash
# A local stand-in for python:3.11-slim where no container registry is reachable:
# Debian bookworm (debootstrap's minbase) with python3 and python3-venv, imported
# into Docker as IMAGE.  deploy/Dockerfile builds on it as on python:3.11-slim:
#
#   deploy/make-base-image.sh                      # -> three-thirteen-base:bookworm
#   make image-test BASE_IMAGE=three-thirteen-base:bookworm
#
# Needs root, debootstrap and a Debian mirror (DEBIAN_MIRROR, default deb.debian.org).
# Behind a TLS-intercepting proxy, the builds in the image must trust its CA as this
# host does: the certificates in EXTRA_CA_DIR (default /usr/local/share/ca-certificates,
# where Debian keeps local ones) are added to the image's store, and pip is pointed at it.
set -euo pipefail
image=${1:-three-thirteen-base:bookworm}
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
root=$(mktemp -d /tmp/t13-base-XXXXXX)
trap 'rm -rf "$root"' EXIT
debootstrap --variant=minbase --include=python3,python3-venv,ca-certificates \
    bookworm "$root" "$mirror"
extra_ca=${EXTRA_CA_DIR:-/usr/local/share/ca-certificates}
changes=(-c 'ENV LANG=C.UTF-8' -c 'CMD ["python3"]')
if compgen -G "$extra_ca/*.crt" >/dev/null; then
    cp "$extra_ca"/*.crt "$root/usr/local/share/ca-certificates/"
    chroot "$root" update-ca-certificates
    changes+=(-c 'ENV PIP_CERT=/etc/ssl/certs/ca-certificates.crt')
fi
chroot "$root" apt-get clean
rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin
tar -C "$root" --numeric-owner -c . | docker import "${changes[@]}" - "$image"
echo "$image"
