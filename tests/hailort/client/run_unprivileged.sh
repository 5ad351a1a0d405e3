#!/bin/sh
# run_unprivileged.sh DIR CASE COMMAND...: runs COMMAND with HOME and the
# working folder in DIR, laid out for CASE, as a user HailoRT's access(W_OK)
# checks apply to (utils/hailort_logger.cpp create_file_sink): as root (CI)
# under uid/gid 65534 (nobody) through setpriv, else as the caller. Cases:
#   readonly_main  $HOME/.hailo/hailort/hailort.log exists and cannot be
#                  written (its folder can), the working folder can
#   no_log         the same, and the working folder cannot be written
# RIG_LOG_CASE tells the test which case it runs in.
set -eu
dir=$1 case=$2
shift 2
rm -rf "$dir"
mkdir -p "$dir/home/.hailo/hailort" "$dir/cwd"
: >"$dir/home/.hailo/hailort/hailort.log"
chmod 0444 "$dir/home/.hailo/hailort/hailort.log"
chmod 0777 "$dir" "$dir/home" "$dir/home/.hailo" "$dir/home/.hailo/hailort" "$dir/cwd"
case $case in
  readonly_main) ;;
  no_log) chmod 0555 "$dir/cwd" ;;
  *) echo "run_unprivileged.sh: unknown case '$case'" >&2; exit 2 ;;
esac
cd "$dir/cwd"
export HOME="$dir/home" RIG_LOG_CASE="$case"
unset HAILORT_LOGGER_PATH
if [ "$(id -u)" = 0 ]; then
  exec setpriv --reuid=65534 --regid=65534 --clear-groups "$@"
fi
exec "$@"
