# Sourced by the tests that drive npm packages: npm_ci_once DIR NAME installs DIR's
# node_modules from its committed package-lock.json when missing or stale (a stamp
# holds the lock file's hash), so a rerun installs nothing.
npm_ci_once() {
  local dir=$1 name=$2 stamp want start
  stamp="$dir/node_modules/.trainyard-lock.sha256"
  want=$(sha256sum "$dir/package-lock.json" | cut -d' ' -f1)
  if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
    echo "$name: npm ci in $dir"
    start=$(date +%s)
    (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
    echo "$want" > "$stamp"
    echo "$name: npm ci took $(( $(date +%s) - start ))s"
  fi
}
