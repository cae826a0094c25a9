#!/bin/sh
# run_firmware.sh DIR BOARD QEMU [QEMU-OPTION...] - run DIR/firmware.elf
# under QEMU with semihosting, its output to DIR/output.txt and stdout,
# and judge it: the last line must be "N passed, 0 failed" and QEMU's
# exit status 0 (SYS_EXIT), within KPN_QEMU_TIMEOUT seconds (default
# 60).  Exits 0 if so, 1 with the reason otherwise.  tools/test_qemu.sh
# and test_qemu_riscv.sh run each board through it.
set -eu
d=$1 board=$2
shift 2
rc=0
timeout "${KPN_QEMU_TIMEOUT:-60}" "$@" -nographic -monitor none -serial none \
    -semihosting-config enable=on,target=native -kernel "$d/firmware.elf" \
    >"$d/output.txt" 2>&1 || rc=$?
cat "$d/output.txt"
if [ "$rc" = 124 ]; then
    echo "run_firmware: $board timed out after ${KPN_QEMU_TIMEOUT:-60}s"
    exit 1
fi
if ! tail -n 1 "$d/output.txt" | grep -Eq '^[0-9]+ passed, 0 failed$' || [ "$rc" != 0 ]; then
    echo "run_firmware: $board failed (exit $rc)"
    exit 1
fi
