#!/usr/bin/env bash
# Builds vespa-bulk's OCI image with buildah from image/Containerfile: the single executable (scripts/build-sea.mjs)
# on a root staged here from this machine's files, so nothing is pulled from an image registry.
#
#   bash scripts/build-image.sh [--arch x64] [--name NAME] [--out FILE.tar] [--stage-only DIR]
#
# It prints the image's name (default vespa-bulk:VERSION), then the digest of its manifest as pushed (what a
# registry keeps), then the archive's path with --out (an OCI archive: `podman load -i FILE`, or `skopeo copy
# oci-archive:FILE docker://REGISTRY/vespa-bulk:VERSION`). --stage-only stages the build context into DIR and
# stops: `docker build` takes it from there (image/Containerfile says how).
#
# Reproducible: the same executable and the same staged files give the same digest. Every file's time is set to
# 0 and buildah's --timestamp 0 sets the image's creation time and the layer's file times; the shared libraries
# and CA certificates come from this machine (Debian's packages), so they are inputs too.
#
# The root holds: /usr/local/bin/vespa-bulk, the libraries `ldd` names for it (glibc, libstdc++, libgcc_s) at the
# paths it names, /etc/ssl/certs/ca-certificates.crt, /etc/passwd and /etc/group with the user vespa-bulk (65532),
# /tmp (1777) and /data (the working folder, the user's: staged apart, as COPY --chown gives it). Buildah here: `apt-get install buildah` (Debian).
set -euo pipefail
cd "$(dirname "$0")/.."

arch=$(node -p process.arch)
out=""
stage_only=""
name=""
while [ $# -gt 0 ]; do
  case "$1" in
    --arch) arch="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --name) name="$2"; shift 2 ;;
    --stage-only) stage_only="$2"; shift 2 ;;
    *) echo "build-image.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
if [ "$arch" != "$(node -p process.arch)" ]; then
  # The libraries are copied from this machine, so they are of its architecture.
  echo "build-image.sh: --arch $arch: only this machine's architecture ($(node -p process.arch)) can be staged here" >&2
  exit 2
fi

version=$(node -p 'require("./package.json").version')
exe=$(node scripts/build-sea.mjs --arch "$arch" | tail -1 | sed 's/ (.*//')
case "$exe" in /*) ;; *) exe="$PWD/$exe" ;; esac

context=${stage_only:-$(mktemp -d "${TMPDIR:-/tmp}/vespa-bulk-image.XXXXXX")}
rm -rf "$context/rootfs" "$context/data"
mkdir -p "$context/rootfs"
root="$context/rootfs"
trap '[ -n "$stage_only" ] || rm -rf "$context"' EXIT

install -D -m 0755 "$exe" "$root/usr/local/bin/vespa-bulk"
# Each library at the path the dynamic loader looks for it, its content copied (not a link to this machine's).
ldd "$exe" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' | sort -u | while read -r lib; do
  install -D -m 0755 "$(readlink -f "$lib")" "$root$lib"
done
install -D -m 0644 /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/ca-certificates.crt"
mkdir -p "$root/etc" "$root/tmp" "$context/data"
printf 'root:x:0:0:root:/root:/sbin/nologin\nvespa-bulk:x:65532:65532:vespa-bulk:/data:/sbin/nologin\n' > "$root/etc/passwd"
printf 'root:x:0:\nvespa-bulk:x:65532:\n' > "$root/etc/group"
# glibc resolves names through /etc/hosts first, then DNS (Kubernetes mounts its own hosts and resolv.conf).
printf 'hosts: files dns\n' > "$root/etc/nsswitch.conf"
chmod 1777 "$root/tmp"
chmod -R u+w,go-w "$root/etc" "$root/usr"
cp image/Containerfile "$context/Containerfile"
find "$context" -exec touch -h -d @0 {} +

if [ -n "$stage_only" ]; then
  echo "$context"
  exit 0
fi

name=${name:-vespa-bulk:$version}
buildah build --quiet --isolation chroot --timestamp 0 --layers=false --pull=never \
  --build-arg "VERSION=$version" -f "$context/Containerfile" -t "$name" "$context" > /dev/null
echo "$name"
# The image as it is handed on: an OCI layout (its layers compressed), whose manifest digest a registry keeps.
layout="$context/layout"
buildah push --quiet "$name" "oci:$layout:$name" > /dev/null
node -p 'JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).manifests[0].digest' "$layout/index.json"
if [ -n "$out" ]; then
  # Tarred with fixed times, owners and order, so the archive's bytes are reproducible too.
  find "$layout" -exec touch -h -d @0 {} +
  rm -f "$out"
  tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -C "$layout" -cf "$out" .
  echo "$out"
fi
