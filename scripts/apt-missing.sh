# Sourced by setup.sh, cross.sh and cross-macos.sh: `apt_missing WHO PACKAGE...` installs, with
# apt (through sudo unless root), those of the Debian packages named that are not installed.
apt_missing() {
  local who=$1 p sudo=""
  shift
  local missing=()
  for p in "$@"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
  done
  [ ${#missing[@]} -gt 0 ] || return 0
  echo "$who: installing ${missing[*]} (apt)"
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
}
