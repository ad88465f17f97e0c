#!/usr/bin/env bash
# Runs a command as on a fresh machine: bubblewrap and Chromium hidden, WITNESS_TEST_PG_URL unset.
#
#   bash test-support/without-tools.sh npm test
#
# The README's `npm test` must pass where only Node.js is installed: a test that needs one of these tools
# skips there, saying why. This is how .ci/run (and anyone) checks that without a second machine: in a
# private mount namespace, each `bwrap` and `chromium` on the search path is covered by /dev/null (which
# cannot be executed), so every check of "can I run it" says no and a test that runs the tool without
# asking fails. The namespace ends with the command; nothing outside changes.
# Mounting needs root: run as root, or with sudo available (the command then runs as you again).
set -euo pipefail

if [ "$#" -eq 0 ]; then
  echo "usage: bash test-support/without-tools.sh <command> [arguments]" >&2
  exit 2
fi

if [ "${WITNESS_WITHOUT_TOOLS_INSIDE:-}" != "1" ]; then
  script="$(readlink -f "$0")"
  if [ "$(id -u)" = "0" ]; then
    exec env WITNESS_WITHOUT_TOOLS_INSIDE=1 unshare --mount --propagation private -- bash "$script" "$@"
  fi
  # sudo resets the environment and PATH: pass them through explicitly, and the user to return to.
  exec sudo -- env "PATH=$PATH" WITNESS_WITHOUT_TOOLS_INSIDE=1 "WITNESS_WITHOUT_TOOLS_USER=$(id -u):$(id -g)" \
    "WITNESS_WITHOUT_TOOLS_ENV=$(env -0 | base64 -w0)" \
    unshare --mount --propagation private -- bash "$script" "$@"
fi

# Inside the namespace, as root.
hidden=()
declare -A seen=()
search="$PATH:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
IFS=: read -r -a directories <<<"$search"
for tool in bwrap chromium; do
  for directory in "${directories[@]}"; do
    candidate="$directory/$tool"
    [ -e "$candidate" ] && [ -z "${seen[$candidate]:-}" ] || continue
    seen[$candidate]=1
    mount --bind /dev/null "$candidate"
    hidden+=("$candidate")
  done
done
for tool in bwrap chromium; do
  if command -v "$tool" >/dev/null 2>&1 && [ -x "$(command -v "$tool")" ]; then
    echo "without-tools: $tool is still executable at $(command -v "$tool")" >&2
    exit 1
  fi
done
echo "without-tools: hidden ${hidden[*]:-nothing (none was installed)}; WITNESS_TEST_PG_URL unset" >&2

if [ -n "${WITNESS_WITHOUT_TOOLS_USER:-}" ]; then
  uid="${WITNESS_WITHOUT_TOOLS_USER%%:*}"
  gid="${WITNESS_WITHOUT_TOOLS_USER##*:}"
  # The caller's environment, restored as it was (sudo's own variables dropped with it).
  saved=()
  while IFS= read -r -d '' variable; do
    case "$variable" in WITNESS_TEST_PG_URL=*) ;; *) saved+=("$variable") ;; esac
  done < <(printf '%s' "$WITNESS_WITHOUT_TOOLS_ENV" | base64 -d)
  exec setpriv --reuid="$uid" --regid="$gid" --init-groups -- env -i "${saved[@]}" "$@"
fi
exec env -u WITNESS_TEST_PG_URL -u WITNESS_WITHOUT_TOOLS_INSIDE -- "$@"
