# Sourced by scripts that build Debian roots (nspawn-root.sh, vm-image.sh).
# debian_mirror prints the mirror to use: WORKOUTD_DEBIAN_MIRROR, else the one apt already uses on this machine
# (deb822 or one-line sources: it is the one this machine can reach), else Debian's redirector.
debian_mirror() {
    local file found=""
    for file in /etc/apt/sources.list.d/*.sources; do
        [[ -f "$file" ]] || continue
        found=$(awk '/^URIs:/ { for (i = 2; i <= NF; i++) if ($i ~ /\/debian\/?$/) { print $i; exit } }' "$file")
        [[ -n "$found" ]] && break
    done
    if [[ -z "$found" && -f /etc/apt/sources.list ]]; then
        found=$(awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i ~ /^https?:.*\/debian\/?$/) { print $i; exit } }' \
            /etc/apt/sources.list)
    fi
    printf '%s\n' "${WORKOUTD_DEBIAN_MIRROR:-${found:-http://deb.debian.org/debian}}"
}
