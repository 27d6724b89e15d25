#!/bin/sh
# usage: make-repos.sh <hooks file> <dir> [<hooks list>]
# Makes <dir>/hooks, a git repository holding the given .pre-commit-hooks.yaml
# (committed), and <dir>/user, a git repository whose .pre-commit-config.yaml
# uses hooks from it at that commit: the clang-astra-rewrite hook, or the
# `hooks:` entries in the file <hooks list> (YAML, indented by six spaces).
set -e
hooks_file="$1"; dir="$2"; hooks_list="${3:-}"
git_id() { git -C "$1" config user.name "Astra Test"; git -C "$1" config user.email "astra@example.invalid"; }
mkdir -p "$dir/hooks" "$dir/user"
cp "$hooks_file" "$dir/hooks/.pre-commit-hooks.yaml"
git -C "$dir/hooks" init -q
git_id "$dir/hooks"
git -C "$dir/hooks" add .pre-commit-hooks.yaml
git -C "$dir/hooks" commit -q -m "clang-astra hooks"
sha="$(git -C "$dir/hooks" rev-parse HEAD)"
git -C "$dir/user" init -q
git_id "$dir/user"
cat > "$dir/user/.pre-commit-config.yaml" <<CFG
repos:
  - repo: $dir/hooks
    rev: $sha
    hooks:
CFG
if [ -n "$hooks_list" ]; then
  cat "$hooks_list" >> "$dir/user/.pre-commit-config.yaml"
else
  echo "      - id: clang-astra-rewrite" >> "$dir/user/.pre-commit-config.yaml"
fi
