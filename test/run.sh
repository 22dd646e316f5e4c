#!/usr/bin/env bash
# `npm test`: the one test command, on a developer's machine and in CI (.ci/run calls it).
# First what the tests need beyond Node: installed when this machine can (root with apt), else it
# stops at once with the exact install line. Then the static checks, then every vitest project.
# Arguments go to vitest: `npm test -- --project node test/unit/foo.test.ts`.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { echo "npm test: $*" >&2; }

# Debian packages: scripts in the tests run on python3 and bash; DynamoDB Local (aws tier) needs
# Java 17+; the browser tier drives Debian's Chromium at /usr/bin/chromium (never a downloaded build).
java_major() { java -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -n 1; }
missing=()
command -v python3 >/dev/null || missing+=(python3)
command -v bash >/dev/null || missing+=(bash)
if ! command -v java >/dev/null || [ "$(java_major)" -lt 17 ] 2>/dev/null; then missing+=(openjdk-17-jre-headless); fi
[ -x /usr/bin/chromium ] || missing+=(chromium)
# Every job runs inside bubblewrap's namespaces (README: Job confinement); the confinement tests need it.
[ -x /usr/bin/bwrap ] || missing+=(bubblewrap)
# Each job's network namespace and disk-quota tmpfs (README: Job confinement, the network
# boundary) are made with unshare/nsenter (util-linux), ip (iproute2) and mount/umount (mount).
{ [ -x /usr/bin/nsenter ] && command -v unshare >/dev/null; } || missing+=(util-linux)
command -v ip >/dev/null || [ -x /usr/sbin/ip ] || missing+=(iproute2)
command -v mount >/dev/null || missing+=(mount)
# Go scripts are compiled with Debian's Go, and the Go client's `go vet` / `go test` run on it.
command -v go >/dev/null || missing+=(golang-go)
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    say "installing ${missing[*]}"
    apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y "${missing[@]}"
  else
    say "missing ${missing[*]}; install them, then run npm test again:"
    say "  sudo apt-get update && sudo apt-get install -y ${missing[*]}"
    exit 1
  fi
fi

# The aws tier's KMS and SES emulator is moto's server for python3 (test/aws/kms-local.ts). Debian
# 12 packages no moto; a pyenv python3 that has it is used when the first python3 on PATH lacks it.
pyenv_shims="${PYENV_ROOT:-${HOME:-/root}/.pyenv}/shims"
if ! python3 -c 'import moto.server' 2>/dev/null && [ -x "$pyenv_shims/python3" ]; then
  export PATH="$pyenv_shims:$PATH"
fi
if ! python3 -c 'import moto.server' 2>/dev/null; then
  say "python3 cannot import moto.server (moto with its server extras), which the aws tier starts; install it, then run npm test again:"
  say "  python3 -m pip install 'moto[server]>=5'"
  exit 1
fi

# A fresh clone: the project's own packages (this also builds dist/, which the server tiers run).
if [ ! -d node_modules ]; then
  say "no node_modules: running npm ci"
  npm ci
fi

npm run check
# Arguments choose what vitest runs; without any, the fast tier first (it fails in seconds), then the rest.
if [ $# -gt 0 ]; then
  exec npx vitest run "$@"
fi
npm run test:unit
exec npx vitest run --project '!unit'

