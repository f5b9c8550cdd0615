# Sourced by the install scripts that run as root (bubblewrap, Chromium, PostgreSQL): a
# machine-wide lock that another local user cannot turn against root. Never a fixed name in
# /tmp: anyone may create that name first — a symlink to /etc/shadow, which root's
# `exec 9>` would follow and truncate. The lock lives in /run/forkflow, a folder only root
# may create or write (under /run, root's 0755), and is opened without truncating.
machine_lock() {
  local dir=/run/forkflow
  mkdir -p -m 0755 "$dir"
  if [ -L "$dir" ] || [ "$(stat -c %u "$dir")" != 0 ] || [ $(( 0$(stat -c %a "$dir") & 022 )) -ne 0 ]; then
    echo "$(basename "$0"): $dir is not a folder of root's alone; remove it and run again" >&2
    exit 1
  fi
  exec 9>>"$dir/$1.lock"
  flock 9
}
