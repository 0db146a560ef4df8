#!/usr/bin/env bash
# Install the Wandering Towers table companion on Raspberry Pi OS (Bookworm or newer) as a
# systemd service. Run from a checkout of the repository:
#
#   sudo ./raspberry-pi/install.sh            # install, enable and start
#   sudo ./raspberry-pi/install.sh --no-start # install and enable, start at next boot
#
# What it does (idempotent: run it again after `git pull` to update):
#   1. apt: python3-picamera2 python3-opencv python3-lgpio python3-gpiozero python3-venv
#   2. a system user "companion" in the groups gpio, video and dialout (camera, pins, serial)
#   3. the code in /opt/companion, a venv with --system-site-packages (so picamera2 and lgpio
#      from apt are importable) and the companion installed into it
#   4. /etc/companion/companion.toml (from companion.example.toml; kept if it exists)
#   5. the data directory /var/lib/companion (journal, recordings)
#   6. /etc/systemd/system/companion.service, enabled (and started unless --no-start)
#
# Environment overrides: COMPANION_PREFIX (/opt/companion), COMPANION_USER (companion),
# COMPANION_DATA (/var/lib/companion), COMPANION_ETC (/etc/companion).
set -euo pipefail

PREFIX="${COMPANION_PREFIX:-/opt/companion}"
SERVICE_USER="${COMPANION_USER:-companion}"
DATA_DIR="${COMPANION_DATA:-/var/lib/companion}"
ETC_DIR="${COMPANION_ETC:-/etc/companion}"
UNIT_PATH=/etc/systemd/system/companion.service
APT_PACKAGES=(python3-picamera2 python3-opencv python3-lgpio python3-gpiozero python3-venv python3-pip rsync)

START=1
for arg in "$@"; do
  case "$arg" in
    --no-start) START=0 ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    *) echo "install.sh: unknown option $arg (try --help)" >&2; exit 2 ;;
  esac
done

say() { printf '\n==> %s\n' "$*"; }
die() { printf 'install.sh: %s\n' "$*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || die "run it as root: sudo $0 $*"
command -v apt-get >/dev/null 2>&1 || die "apt-get not found: this script is for Raspberry Pi OS / Debian"
command -v systemctl >/dev/null 2>&1 || die "systemctl not found: the service needs systemd"

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [ ! -f "$REPO/pyproject.toml" ] || [ ! -d "$REPO/companion" ]; then
  die "run it from a checkout of the repository ($REPO has no pyproject.toml)"
fi

if [ -r /proc/device-tree/model ] && grep -qa "Raspberry Pi" /proc/device-tree/model; then
  say "Raspberry Pi: $(tr -d '\0' </proc/device-tree/model)"
else
  echo "warning: this does not look like a Raspberry Pi; installing anyway (the simulated table runs without camera and pins)" >&2
fi

say "apt packages: ${APT_PACKAGES[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq "${APT_PACKAGES[@]}"

say "user $SERVICE_USER (groups gpio video dialout)"
for group in gpio video dialout; do
  getent group "$group" >/dev/null || groupadd --system "$group"
done
if ! id -u "$SERVICE_USER" >/dev/null 2>&1; then
  useradd --system --home-dir "$DATA_DIR" --no-create-home --shell /usr/sbin/nologin \
    --user-group "$SERVICE_USER"
fi
usermod -a -G gpio,video,dialout "$SERVICE_USER"

say "code in $PREFIX"
install -d -m 0755 "$PREFIX"
rsync -a --delete --exclude '.git/' --exclude '.venv/' --exclude 'data/' --exclude 'artifacts/' \
  --exclude '__pycache__/' --exclude '*.egg-info/' "$REPO/" "$PREFIX/src/"

say "virtualenv $PREFIX/venv (--system-site-packages)"
if [ ! -x "$PREFIX/venv/bin/python" ]; then
  python3 -m venv --system-site-packages "$PREFIX/venv"
fi
# picamera2's compiled helpers from apt (simplejpeg, pidng) are built against Debian's numpy 1.x;
# a numpy 2 wheel in the venv would shadow it and break them.
printf 'numpy<2\n' >"$PREFIX/constraints.txt"
"$PREFIX/venv/bin/python" -m pip install --quiet --upgrade pip
"$PREFIX/venv/bin/python" -m pip install --quiet -c "$PREFIX/constraints.txt" "$PREFIX/src"
"$PREFIX/venv/bin/python" -c "import companion.cli, cv2, gpiozero; print('companion installed; OpenCV', cv2.__version__)"

say "configuration $ETC_DIR/companion.toml"
install -d -m 0755 "$ETC_DIR"
if [ ! -f "$ETC_DIR/companion.toml" ]; then
  sed -e "s|^dir = \"data\".*|dir = \"$DATA_DIR\"|" \
    "$REPO/companion.example.toml" >"$ETC_DIR/companion.toml"
  echo "written (edit it, then: sudo systemctl restart companion)"
else
  echo "kept the existing file"
fi
"$PREFIX/venv/bin/python" -c 'import sys; from companion.config import load_config; load_config(sys.argv[1]); print("configuration valid")' "$ETC_DIR/companion.toml"

say "data directory $DATA_DIR"
install -d -m 0750 -o "$SERVICE_USER" -g "$SERVICE_USER" "$DATA_DIR"

say "systemd unit $UNIT_PATH"
sed -e "s|/opt/companion|$PREFIX|g" -e "s|/etc/companion|$ETC_DIR|g" \
  -e "s|^User=companion|User=$SERVICE_USER|" -e "s|^Group=companion|Group=$SERVICE_USER|" \
  "$REPO/raspberry-pi/companion.service" >"$UNIT_PATH"
chmod 0644 "$UNIT_PATH"
if [ "$DATA_DIR" != /var/lib/companion ]; then
  sed -i -e "s|^StateDirectory=.*|ReadWritePaths=$DATA_DIR|" -e "s|^WorkingDirectory=.*|WorkingDirectory=$DATA_DIR|" "$UNIT_PATH"
fi
systemd-analyze verify "$UNIT_PATH" || echo "warning: systemd-analyze reported the above about the unit" >&2
systemctl daemon-reload
systemctl enable companion.service
if [ "$START" -eq 1 ]; then
  systemctl restart companion.service
  say "started: journalctl -u companion -f   shows the table URL and the QR codes"
else
  say "enabled; it starts at the next boot (or: sudo systemctl start companion)"
fi
