#!/usr/bin/env bash
# Runs the README's command-line examples as written, in a scratch directory, with the joinery
# binary given: every line must succeed. The GPU experiments (bench gpu-joins, wide-joins, out-of-core,
# gpu-groupby) need a GPU and take minutes; they run only with --all.
#   bash tests/cli/readme_examples.sh JOINERY_BINARY [--all]
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
readme=$here/../../README.md
binary=$(realpath "$1")
all=${2:-}
scratch=$(mktemp -d "${TMPDIR:-/tmp}/joinery-readme.XXXXXX")
trap 'rm -rf "$scratch"' EXIT

# The fenced block under "## The command line".
awk '/^## The command line/ { in_section = 1 }
     in_section && /^```sh/ { in_block = 1; next }
     in_block && /^```/ { exit }
     in_block { print }' "$readme" >"$scratch/examples.sh"
[[ -s $scratch/examples.sh ]] || { echo "readme_examples: no example block found" >&2; exit 1; }
if [[ $all != --all ]]; then
  # Drop the GPU experiments (and their continuation comment lines).
  grep -vE '^\$J bench (gpu-joins|wide-joins|gpu-groupby|out-of-core)|^ +# ' "$scratch/examples.sh" \
    >"$scratch/run.sh"
else
  cp "$scratch/examples.sh" "$scratch/run.sh"
fi
grep -q '^J=build/bin/joinery' "$scratch/run.sh" ||
  { echo "readme_examples: the block no longer starts with J=build/bin/joinery" >&2; exit 1; }
sed -i "s|^J=build/bin/joinery|J=$binary|" "$scratch/run.sh"
echo "readme_examples: running $(grep -c '^\$J' "$scratch/run.sh") commands in $scratch"
cd "$scratch"
bash -euxo pipefail run.sh >"$scratch/log" 2>&1 || { cat "$scratch/log"; exit 1; }
tail -n 20 "$scratch/log"
echo "readme_examples: all passed"
