#!/usr/bin/env bash
# Packs what benchmarks/device/worker-curve.sh needs on a machine with no Node.js and no network into one archive
# (the device tool carries at most 64 MiB): this machine's node binary, the null endpoint built static, h2load with
# its libraries, and each REV's CLI installed from its packed tarball (production dependencies only).
#   pack.sh OUT.tar.xz NAME=REV [NAME=REV ...]      e.g. pack.sh .devbench/bundle.tar.xz before=a7bce17 after=HEAD
set -euo pipefail
out=$(realpath -m "$1"); shift
repo=$(git rev-parse --show-toplevel)
stage=$(mktemp -d); trap 'rm -rf "$stage"; git -C "$repo" worktree prune' EXIT
mkdir -p "$stage/bundle/lib"
cp "$(readlink -f "$(command -v node)")" "$stage/bundle/node"
cp "$(npx --prefix "$repo" tsx -e 'import("./benchmarks/lib/null-endpoint.ts").then((m) => console.log(m.nullEndpointBinary()))')" "$stage/bundle/null-endpoint"
cp /usr/bin/h2load "$stage/bundle/h2load"
ldd /usr/bin/h2load | awk '/=> \// { print $3 }' | grep -v -E '/(libc|libm|libpthread|libdl|ld-linux)[.-]' | xargs -I{} cp {} "$stage/bundle/lib/"
for spec in "$@"; do
  name=${spec%%=*}; rev=${spec#*=}
  tree="$stage/tree-$name"
  git -C "$repo" worktree add -q --detach "$tree" "$rev"
  ln -s "$repo/node_modules" "$tree/node_modules"
  (cd "$tree" && npm run -s build >/dev/null && npm pack -s --pack-destination "$stage" >/dev/null && mv "$stage"/vespa-bulk-*.tgz "$stage/$name.tgz")
  git -C "$repo" worktree remove --force "$tree"
  mkdir -p "$stage/bundle/build-$name" && echo '{"private":true}' > "$stage/bundle/build-$name/package.json"
  (cd "$stage/bundle/build-$name" && npm install -s --omit=dev --no-audit --no-fund "$stage/$name.tgz" >/dev/null)
done
mkdir -p "$(dirname "$out")"
tar -C "$stage" -cJf "$out" bundle
echo "$out: $(du -h "$out" | cut -f1)"
