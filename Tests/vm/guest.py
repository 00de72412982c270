#!/usr/bin/python3
"""The guest side of the real plug-in test (make test-vm): runs inside the QEMU guest, one phase per boot.

The wearable is a real USB device: a configfs gadget with a CDC-ACM function on dummy_hcd. Binding it to a
dummy UDC is plugging it in (the kernel's cdc_acm makes /dev/ttyACMn, real udev tags it); the wearable's own
end is /dev/ttyGS<port_num>. Every finding goes to the host at once over the virtio-serial port
vmtest.report, one line each: "PASS step ...", "FAIL step ...", "FIGURE name value", "SENT id",
"ACK id {reply}", "STORED {workout}", "PHASE_OK phase". The host (Tests/vm/run.sh) decides; the guest never
hides a failure: the first failed check ends the phase.
"""
import glob
import json
import os
import select
import subprocess
import sys
import termios
import threading
import time
import tty

REPORT = "/dev/virtio-ports/vmtest.report"
GADGETS = "/sys/kernel/config/usb_gadget"
STATE = "/var/lib/workoutd"
GUEST_STATE = "/root/vmtest-state.json"  # what one boot leaves for the next (guest disk, synced)
WEARABLE = ("0x1209", "0xa7e1")  # the ids in the project's udev rule
MODEM = ("0x0525", "0xa4a7")  # Linux "Gadget Serial" ids: a tty the daemon must leave alone
CUT_PAIRS = 150  # start/end pairs streamed per power cut

_report_fd = None
_report_lock = threading.Lock()


def report(line):
    global _report_fd
    with _report_lock:
        if _report_fd is None:
            _report_fd = os.open(REPORT, os.O_WRONLY)
        data = (line.rstrip("\n") + "\n").encode()
        while data:
            data = data[os.write(_report_fd, data):]


class StepFailed(Exception):
    pass


def check(step, ok, detail=""):
    if not ok:
        report(f"FAIL {step} {detail}")
        raise StepFailed(f"{step}: {detail}")
    report(f"PASS {step} {detail}".rstrip())


def run(cmd, check_rc=True):
    result = subprocess.run(cmd, shell=True, capture_output=True, text=True)
    if check_rc and result.returncode != 0:
        raise StepFailed(f"`{cmd}` exited {result.returncode}: {result.stdout}{result.stderr}")
    return result.stdout


def wait_for(what, predicate, timeout=30.0, interval=0.01):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise StepFailed(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(interval)


def write(path, value):
    with open(path, "w") as f:
        f.write(value)


def read(path):
    with open(path) as f:
        return f.read().strip()


# ---- the daemon, as systemd and /proc see it ----

def unit_property(name):
    return run(f"systemctl show -p {name} --value workoutd").strip()


def main_pid():
    return int(unit_property("MainPID") or 0)


def open_ttys(pid):
    """The tty device nodes the daemon's process holds open (resolved paths)."""
    paths = set()
    for fd in glob.glob(f"/proc/{pid}/fd/*"):
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("/dev/tty"):
            paths.add(target)
    return paths


def wait_service_ready():
    wait_for("workoutd active", lambda: unit_property("ActiveState") == "active", timeout=90, interval=0.2)


# ---- the wearable: a configfs USB gadget with a CDC-ACM function ----

def load_gadget_modules():
    if not os.path.isdir("/sys/module/dummy_hcd"):
        run("modprobe dummy_hcd num=3")
    run("modprobe libcomposite")
    if not os.path.ismount("/sys/kernel/config"):
        run("mount -t configfs none /sys/kernel/config")


class Gadget:
    def __init__(self, name, serial, ids=WEARABLE):
        self.name, self.serial = name, serial
        self.path = f"{GADGETS}/{name}"
        if not os.path.isdir(self.path):
            os.mkdir(self.path)
            write(f"{self.path}/idVendor", ids[0])
            write(f"{self.path}/idProduct", ids[1])
            os.makedirs(f"{self.path}/strings/0x409", exist_ok=True)
            write(f"{self.path}/strings/0x409/serialnumber", serial)
            os.makedirs(f"{self.path}/configs/c.1", exist_ok=True)
            os.mkdir(f"{self.path}/functions/acm.{name}")
            os.symlink(f"{self.path}/functions/acm.{name}", f"{self.path}/configs/c.1/acm.{name}")
        self.gs = f"/dev/ttyGS{read(f'{self.path}/functions/acm.{name}/port_num')}"
        self.udc = None
        self.fd = None
        self.buffer = b""

    def plug(self, udc):
        self.udc = udc
        started = time.monotonic()
        write(f"{self.path}/UDC", udc)
        return started

    def unplug(self):
        self.close()
        write(f"{self.path}/UDC", "\n")

    def host_tty(self):
        """The /dev/ttyACMn the host side got for this gadget, once udev made its /dev/wearable link."""
        link = f"/dev/wearable/{self.serial}"
        return os.path.realpath(link) if os.path.exists(link) else None

    def acm_node_for_udc(self):
        """The cdc_acm node on this gadget's dummy host controller, as soon as the kernel created it
        (before udev has run the rules): /sys/class/tty/ttyACMn whose USB device hangs off our UDC's bus."""
        bus_index = self.udc.rsplit(".", 1)[1]
        for node in glob.glob("/sys/class/tty/ttyACM*"):
            device = os.path.realpath(node + "/device")
            if f"/dummy_hcd.{bus_index}/" in device and os.path.exists("/dev/" + os.path.basename(node)):
                return "/dev/" + os.path.basename(node)
        return None

    def open(self):
        self.close()
        self.fd = os.open(self.gs, os.O_RDWR | os.O_NOCTTY)
        tty.setraw(self.fd)  # ttyGS starts with echo on; the protocol is raw bytes
        attrs = termios.tcgetattr(self.fd)
        attrs[3] &= ~(termios.ECHO | termios.ECHONL | termios.ICANON)
        termios.tcsetattr(self.fd, termios.TCSANOW, attrs)
        termios.tcflush(self.fd, termios.TCIOFLUSH)
        self.buffer = b""

    def close(self):
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    def send(self, command):
        data = (json.dumps(command) + "\n").encode()
        while data:
            data = data[os.write(self.fd, data):]

    def read_reply(self, timeout=20.0):
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise StepFailed(f"{self.serial}: no reply within {timeout:.0f} s (buffer {self.buffer[:200]!r})")
            ready, _, _ = select.select([self.fd], [], [], left)
            if ready:
                chunk = os.read(self.fd, 65536)
                if not chunk:
                    raise StepFailed(f"{self.serial}: {self.gs} hung up")
                self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return json.loads(line)

    def request(self, command, timeout=20.0):
        self.send(command)
        while True:
            reply = self.read_reply(timeout)
            if reply.get("id") == command.get("id"):
                return reply


def start(serial_tag, n=0):
    return {"command_type": "start_workout", "id": f"{serial_tag}-s{n}", "location": f"{serial_tag}-{n}",
            "date": "2026-11-23 10:00:00 +0000", "intensityLevel": 5}


def plug_and_serve(gadget, udc, step):
    """Plugs the gadget in, waits until the daemon holds its tty, and returns the figures of that path."""
    plugged = gadget.plug(udc)
    node = wait_for(f"{gadget.serial}: cdc_acm tty node", gadget.acm_node_for_udc, timeout=60, interval=0.005)
    t_node = time.monotonic()
    wait_for(f"{gadget.serial}: /dev/wearable link", gadget.host_tty, timeout=30, interval=0.005)
    t_link = time.monotonic()
    pid = main_pid()  # read once: a systemctl call per poll would cost more than what is measured
    wait_for(f"{gadget.serial}: daemon (pid {pid}) opens {node}", lambda: node in open_ttys(pid),
             timeout=30, interval=0.005)
    t_open = time.monotonic()
    gadget.open()
    return node, {"plug_to_node": t_node - plugged, "node_to_link": t_link - t_node,
                  "link_to_open": t_open - t_link, "node_to_open": t_open - t_node, "t_open": t_open,
                  "plugged": plugged}


def udev_properties(node):
    props = {}
    for line in run(f"udevadm info -q property -n {node}").splitlines():
        key, _, value = line.partition("=")
        props[key] = value
    return props


def figures(step, f, replied):
    report(f"FIGURE {step}.plug_to_node {f['plug_to_node']:.3f}")
    report(f"FIGURE {step}.node_to_udev_link {f['node_to_link']:.3f}")
    report(f"FIGURE {step}.udev_link_to_open {f['link_to_open']:.3f}")
    report(f"FIGURE {step}.node_to_open {f['node_to_open']:.3f}")
    report(f"FIGURE {step}.open_to_reply {replied - f['t_open']:.3f}")
    report(f"FIGURE {step}.node_to_reply {f['node_to_open'] + replied - f['t_open']:.3f}")
    report(f"FIGURE {step}.plug_to_reply {replied - f['plugged']:.3f}")


def journal_split(step, node):
    """The same path as the kernel and the daemon log it (journal receive times, monotonic): node created
    (cdc_acm's "ttyACMn: USB ACM device"), udev event received by the daemon ("serving discovered device"),
    tty opened ("device connected"). Shows whether node -> open goes to udev or to the daemon."""
    name = os.path.basename(node)
    marks = {}
    for line in run("journalctl -b -o short-monotonic --no-pager -q", check_rc=False).splitlines():
        if not line.startswith("["):
            continue
        stamp = float(line[1:line.index("]")])
        if f"{name}: USB ACM device" in line:
            marks = {"node": stamp}
        elif "serving discovered device" in line and f"node=/dev/{name}" in line and "node" in marks:
            marks.setdefault("event", stamp)
        elif "device connected" in line and f"node=/dev/{name}" in line and "event" in marks:
            marks.setdefault("open", stamp)
    if len(marks) == 3:
        report(f"FIGURE {step}.journal_node_to_daemon_event {marks['event'] - marks['node']:.3f}")
        report(f"FIGURE {step}.journal_daemon_event_to_open {marks['open'] - marks['event']:.3f}")


def boot_to_ready():
    # ActiveEnterTimestampMonotonic of a Type=notify unit is when READY=1 arrived (µs since boot).
    ready = int(unit_property("ActiveEnterTimestampMonotonic") or 0) / 1e6
    started = int(unit_property("ExecMainStartTimestampMonotonic") or 0) / 1e6
    report(f"FIGURE boot_to_ready {ready:.3f}")
    report(f"FIGURE start_to_ready {ready - started:.3f}")


def stored_workouts():
    out = run(f"workoutd workouts --state-dir {STATE} --json --limit 100000")
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def save_state(state):
    with open(GUEST_STATE, "w") as f:
        json.dump(state, f)
        f.flush()
        os.fsync(f.fileno())


def load_state():
    with open(GUEST_STATE) as f:
        return json.load(f)


# ---- phases ----

def phase_install(args):
    # The case that failed on real kernels: nothing CDC-ACM was plugged in since boot, cdc_acm not loaded.
    check("fresh-boot", not os.path.isdir("/sys/module/cdc_acm"), "cdc_acm not loaded before the install")
    debs = sorted(glob.glob("/run/vmtest/debs/workoutd_*.deb"))
    check("deb-present", len(debs) == 1, " ".join(debs))
    out = run(f"cd /run/vmtest/debs && DEBIAN_FRONTEND=noninteractive apt-get install -y "
              f"./{os.path.basename(debs[0])} 2>&1", check_rc=False)
    installed = run("dpkg-query -W -f='${Status}' workoutd", check_rc=False) == "install ok installed"
    check("1.apt-install", installed, "" if installed else out[-1500:].replace("\n", " | "))
    wait_service_ready()
    check("1.service-active", unit_property("ActiveState") == "active", unit_property("SubState"))
    check("1.service-enabled", run("systemctl is-enabled workoutd", check_rc=False).strip() == "enabled")
    fragment = unit_property("FragmentPath")
    # trixie's systemd names the unit by its /usr path; the package (bookworm's layout) ships it under /lib, the
    # same file on a merged-/usr system, and dpkg knows it by the name the package used.
    names = [fragment] + ([fragment[len("/usr"):]] if fragment.startswith("/usr/lib/") else [])
    owners = [run(f"dpkg -S {name}", check_rc=False) for name in names]
    owner = next((o for o in owners if o.startswith("workoutd:")), owners[0])
    check("1.unit-is-packaged", owner.startswith("workoutd:"), f"FragmentPath={fragment} owner={owner.strip()}")
    dropins = unit_property("DropInPaths")
    check("1.unit-no-dropins", dropins == "", f"DropInPaths={dropins}")
    verify = run("dpkg -V workoutd", check_rc=False)
    check("1.package-unchanged", verify.strip() == "", f"dpkg -V: {verify.strip()}")
    listed = run("dpkg -L workoutd", check_rc=False).split()
    manuals = ["man8/workoutd.8", "man1/workoutctl.1", "man5/workoutd.yaml.5"]
    absent = [m for m in manuals if not any(f.startswith(f"/usr/share/man/{m}") for f in listed)]
    check("1.manuals-packaged", absent == [], f"not in the package: {absent}")
    versions = {run(f"{c} --version", check_rc=False).strip() for c in ("workoutd", "workoutctl")}
    check("1.version", len(versions) == 1 and "" not in versions, f"--version: {versions}")

    load_gadget_modules()
    w1 = Gadget("w1", "WRB-0001")
    pid = main_pid()
    node, f = plug_and_serve(w1, "dummy_udc.0", "2.plug-after-start")
    props = udev_properties(node)
    check("1.udev-property", props.get("WORKOUTD_DEVICE") == "1", f"{node} WORKOUTD_DEVICE={props.get('WORKOUTD_DEVICE')}")
    check("1.udev-link", os.path.realpath("/dev/wearable/WRB-0001") == node, f"/dev/wearable/WRB-0001 -> {node}")
    reply = w1.request(start("w1", 1))
    replied = time.monotonic()
    check("2.plug-after-start", reply.get("status") == "ok" and "workout_id" in reply, json.dumps(reply))
    figures("plug_after_start", f, replied)
    journal_split("plug_after_start", node)
    workout = reply["workout_id"]

    # 3: pull the cable mid-workout, plug it back in: the same session ends the same workout, then shares it.
    w1.unplug()
    wait_for("ttyACM node gone after unplug", lambda: not os.path.exists(node), timeout=30)
    wait_for("daemon closes the unplugged tty", lambda: node not in open_ttys(main_pid()), timeout=30)
    node, f = plug_and_serve(w1, "dummy_udc.0", "3.replug")
    reply = w1.request({"command_type": "end_workout", "id": "w1-e1"})
    replied = time.monotonic()
    check("3.replug-ends-same-workout", reply.get("status") == "ok" and reply.get("workout_id") == workout,
          f"started {workout}, end reply {json.dumps(reply)}")
    figures("replug", f, replied)
    journal_split("replug", node)
    reply = w1.request({"command_type": "share_workout", "id": "w1-sh1", "service": "twitter"})
    check("3.share-queued", reply.get("status") == "ok" and reply.get("workout_id") == workout, json.dumps(reply))
    spool = f"{STATE}/outbox/twitter/share-{reply.get('share_id')}.json"
    wait_for(f"spool file {spool}", lambda: os.path.exists(spool), timeout=30, interval=0.05)
    with open(spool) as fh:
        body = fh.read()
    check("3.share-delivered", str(workout) in body, f"{spool}: {body[:200]}")

    # 4: a second wearable at once, its own session.
    w2 = Gadget("w2", "WRB-0002")
    plug_and_serve(w2, "dummy_udc.1", "4.second")
    r1 = w1.request(start("w1", 2))
    r2 = w2.request(start("w2", 1))
    check("4.two-sessions-start", r1.get("status") == "ok" and r2.get("status") == "ok"
          and r1.get("workout_id") != r2.get("workout_id"), f"{json.dumps(r1)} {json.dumps(r2)}")
    e2 = w2.request({"command_type": "end_workout", "id": "w2-e1"})
    e1 = w1.request({"command_type": "end_workout", "id": "w1-e2"})
    check("4.each-its-own-session", e2.get("workout_id") == r2.get("workout_id")
          and e1.get("workout_id") == r1.get("workout_id"), f"{json.dumps(e1)} {json.dumps(e2)}")
    check("4.both-open", len(open_ttys(main_pid()) & {w1.host_tty(), w2.host_tty()}) == 2,
          " ".join(sorted(open_ttys(main_pid()))))

    # 5: a modem-like tty (other ids) is never opened, and plugging it changes nothing.
    before = open_ttys(main_pid())
    modem = Gadget("modem", "MODEM-1", MODEM)
    modem.plug("dummy_udc.2")
    modem_node = wait_for("modem tty node", modem.acm_node_for_udc, timeout=60)
    run("udevadm settle --timeout=30")
    props = udev_properties(modem_node)
    check("5.modem-not-tagged", props.get("WORKOUTD_DEVICE") != "1", f"{modem_node}")
    # The daemon saw the add event by now if it reacts to it at all: a wearable round trip after settle
    # goes through the same event loop; a short observation window then catches a late open.
    w1.request({"command_type": "end_workout", "id": "w1-probe"})
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline:
        check_ok = modem_node not in open_ttys(main_pid())
        if not check_ok:
            break
        time.sleep(0.05)
    after = open_ttys(main_pid())
    check("5.modem-never-opened", modem_node not in after, f"daemon fds: {sorted(after)}")
    check("5.nothing-changed", after == before and main_pid() == pid, f"before {sorted(before)} after {sorted(after)}")

    # 6: reload keeps serving, no restarts, nothing at err or worse.
    run("systemctl reload workoutd")
    wait_service_ready()
    r = w1.request(start("w1", 3))
    check("6.serves-after-reload", r.get("status") == "ok", json.dumps(r))
    r = w2.request(start("w2", 2))
    check("6.second-serves-after-reload", r.get("status") == "ok", json.dumps(r))
    check("6.same-process", main_pid() == pid, f"MainPID {pid} -> {main_pid()}")
    check("6.no-restarts", unit_property("NRestarts") == "0", f"NRestarts={unit_property('NRestarts')}")
    errors = run("journalctl -b -u workoutd -p err --no-pager -q", check_rc=False).strip()
    check("6.journal-no-errors", errors == "", errors[:1500].replace("\n", " | "))
    priority = run("journalctl -b -u workoutd --no-pager -q | grep -c 'Failed to set thread priority'", check_rc=False)
    report(f"INFO thread-priority-warnings {priority.strip()}")
    for w in (w1, w2):
        w.request({"command_type": "end_workout", "id": f"{w.name}-e-final"})
    stored = stored_workouts()
    save_state({"stored": stored})
    check("6.stored", len(stored) >= 3, f"{len(stored)} workouts stored")
    for w in (w1, w2, modem):
        w.unplug()


def phase_reboot(args):
    # 2 (second half) and 7: the wearable was bound by vmtest-early.service before workoutd started.
    early = read("/run/vmtest-early-plug")
    check("2.plugged-before-daemon", early.startswith("workoutd=inactive"), early)
    wait_service_ready()
    check("7.service-up-by-itself", unit_property("ActiveState") == "active")
    boot_to_ready()
    w1 = Gadget("w1", "WRB-0001")
    w1.udc = "dummy_udc.0"
    node = wait_for("early wearable's tty", w1.host_tty, timeout=30)
    wait_for(f"daemon opens {node} found at start-up", lambda: node in open_ttys(main_pid()), timeout=30)
    w1.open()
    r = w1.request(start("w1", 10))
    check("2.plugged-before-start-served", r.get("status") == "ok", json.dumps(r))
    w1.request({"command_type": "end_workout", "id": "w1-e10"})
    before = {w["id"] for w in load_state()["stored"]}
    now = {w["id"] for w in stored_workouts()}
    check("7.stored-workouts-kept", before <= now, f"missing after reboot: {sorted(before - now)}")
    w2 = Gadget("w2", "WRB-0002")
    node2, f = plug_and_serve(w2, "dummy_udc.1", "7.plug-after-reboot")
    r = w2.request(start("w2", 10))
    replied = time.monotonic()
    check("7.plug-after-reboot", r.get("status") == "ok", json.dumps(r))
    figures("plug_after_reboot", f, replied)
    journal_split("plug_after_reboot", node2)
    w2.request({"command_type": "end_workout", "id": "w2-e10"})
    check("7.no-restarts", unit_property("NRestarts") == "0")
    errors = run("journalctl -b -u workoutd -p err --no-pager -q", check_rc=False).strip()
    check("7.journal-no-errors", errors == "", errors[:1500].replace("\n", " | "))
    clock_steps(w2)
    guest_benchmark(w1)



# ---- the wall clock stepped around workouts, as NTP steps a board without a real-time clock ----

def clock_steps(w):
    """Durations come from the boot-time clock, so a step of the wall clock (forward or back) during a workout
    neither adds hours nor makes it zero; the guest has no NTP, so the times are marked unsynchronised, and
    corrected once systemd-timesyncd's flag says the clock is synchronised."""
    ids = []
    for n, step in ((20, "+3 hours"), (21, "-5 hours")):
        started = w.request(start(w.name, n))
        ids.append(started.get("workout_id"))
        run(f"date -s '{step}'")
        time.sleep(1)
        ended = w.request({"command_type": "end_workout", "id": f"{w.name}-e{n}"})
        duration = ended.get("duration_seconds", -1)
        check(f"30.clock-step-{step.replace(' ', '')}-not-counted", 0.5 <= duration < 120, json.dumps(ended))
    run("date -s '+2 hours'")  # about where it was
    marks = {r["id"]: r.get("clockMark") for r in stored_workouts() if r["id"] in ids}
    check("30.unsynchronised-times-marked", all(marks.get(i) == "unsynchronized" for i in ids), json.dumps(marks))
    os.makedirs("/run/systemd/timesync", exist_ok=True)
    write("/run/systemd/timesync/synchronized", "")
    wait_for("the marked workouts corrected",
             lambda: all(r.get("clockMark") == "corrected" for r in stored_workouts() if r["id"] in ids),
             timeout=120, interval=1)
    check("30.corrected-once-synchronised", True, f"workouts {ids}")


# ---- figures: the installed service beside a C echo in the same guest ----

ECHO = "/run/vmtest/echo-baseline"  # Benchmarks/peers/echo-baseline.c, built for this guest's architecture (run.sh)
ROUND_TRIPS = 400


def switches(pid):
    """Context switches of every thread of PID so far: each is a wakeup of that thread (or a preemption)."""
    total = 0
    for status in glob.glob(f"/proc/{pid}/task/*/status"):
        try:
            with open(status) as f:
                for line in f:
                    if line.startswith(("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches")):
                        total += int(line.split()[1])
        except OSError:
            pass  # a thread that ended while we read
    return total


def rss_kib(pid):
    """Resident set from the page tables (smaps_rollup): before Linux 6.2 (bookworm's 6.1) VmRSS is a per-thread
    counter folded in every 64 faults, and a process as small as the echo showed 4 KiB."""
    with open(f"/proc/{pid}/smaps_rollup") as f:
        for line in f:
            if line.startswith("Rss:"):
                return int(line.split()[1])
    return 0


def first_reply_after(gadget, started, command):
    """Seconds from STARTED until GADGET gets a reply, probing every 50 ms (the node may still be closed)."""
    deadline = started + 120
    while time.monotonic() < deadline:
        gadget.send(command)
        ready, _, _ = select.select([gadget.fd], [], [], 0.05)
        if not ready:
            continue
        gadget.buffer += os.read(gadget.fd, 65536)
        # Until the program has set its end raw, the host tty's line discipline echoes the probes back
        # (mangled): only a JSON reply counts.
        while b"\n" in gadget.buffer:
            line, gadget.buffer = gadget.buffer.split(b"\n", 1)
            try:
                replied_with = json.loads(line)
            except ValueError:
                continue
            if not (isinstance(replied_with, dict) and "status" in replied_with):
                continue
            replied = time.monotonic()
            time.sleep(0.3)  # the other probes' replies: read and dropped
            while select.select([gadget.fd], [], [], 0.1)[0]:
                os.read(gadget.fd, 65536)
            gadget.buffer = b""
            return replied - started
    raise StepFailed(f"{gadget.serial}: no reply within 120 s of the start")


def single_flight(gadget, tag):
    """ROUND_TRIPS commands, each sent once the previous reply arrived; returns sorted latencies (s)."""
    samples = []
    for n in range(ROUND_TRIPS):
        command = start(tag, n) if n % 2 == 0 else {"command_type": "end_workout", "id": f"{tag}-e{n}"}
        t0 = time.monotonic()
        gadget.send(command)
        gadget.read_reply()
        samples.append(time.monotonic() - t0)
    return sorted(samples)


def percentile(sorted_samples, p):
    return sorted_samples[min(len(sorted_samples) - 1, int(p / 100 * len(sorted_samples)))]


def guest_benchmark(w1):
    """Start-up, idle wakeups, RSS and single-flight latency of the packaged service, each beside the C echo
    on the same kind of node: the echo serves a second CDC-ACM gadget with the modem ids (which the daemon
    leaves alone), so both answer over the same USB path in the same guest. Figures only, no thresholds:
    under emulation only their ratios mean something (docs/benchmarks.md)."""
    modem = Gadget("modem", "MODEM-1", MODEM)
    modem.plug("dummy_udc.2")
    modem_node = wait_for("modem tty node", modem.acm_node_for_udc, timeout=60)
    modem.open()
    started = time.monotonic()
    echo = subprocess.Popen([ECHO, modem_node], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    report(f"FIGURE bench.echo.start_to_first_reply {first_reply_after(modem, started, {'command_type': 'end_workout'}):.3f}")

    # The service's start, as a user would see it: `systemctl restart` to the plugged wearable's first reply.
    started = time.monotonic()
    run("systemctl restart --no-block workoutd")
    took = first_reply_after(w1, started, {"command_type": "end_workout", "id": "bench-probe"})
    report(f"FIGURE bench.workoutd.restart_to_first_reply {took:.3f}")
    wait_service_ready()
    daemon = main_pid()

    time.sleep(5)  # settle: the start's own work (udev enumeration, first commit) is not idling
    before = {"workoutd": switches(daemon), "echo": switches(echo.pid)}
    t0 = time.monotonic()
    time.sleep(20)
    seconds = time.monotonic() - t0
    for name, pid in (("workoutd", daemon), ("echo", echo.pid)):
        report(f"FIGURE bench.{name}.idle_wakeups_per_s {(switches(pid) - before[name]) / seconds:.2f}")
        report(f"FIGURE bench.{name}.idle_rss_kib {rss_kib(pid)}")

    for name, gadget in (("workoutd", w1), ("echo", modem)):
        samples = single_flight(gadget, f"bench-{name}")
        report(f"FIGURE bench.{name}.single_flight_p50_ms {percentile(samples, 50) * 1000:.2f}")
        report(f"FIGURE bench.{name}.single_flight_p99_ms {percentile(samples, 99) * 1000:.2f}")
    report(f"FIGURE bench.workoutd.rss_after_kib {rss_kib(daemon)}")
    report(f"FIGURE bench.echo.rss_after_kib {rss_kib(echo.pid)}")
    check("bench.figures-taken", echo.poll() is None and main_pid() == daemon)
    echo.kill()
    modem.unplug()


def cut_commands(cut):
    commands = []
    for n in range(CUT_PAIRS):
        commands.append(start(f"k{cut}", n))
        commands.append({"command_type": "end_workout", "id": f"k{cut}-e{n}"})
    return commands


def phase_cut(args):
    """Recovers from the previous cut (if any), then streams pipelined commands until the host kills QEMU."""
    wait_service_ready()
    load_gadget_modules()
    w = Gadget("w1", "WRB-0001")
    node, _ = plug_and_serve(w, "dummy_udc.0", "8.plug")
    previous = int(args.get("recover", "0"))
    if previous:
        # What survived the cut, before anything is resent; the host compares it with the acks it saw.
        for workout in stored_workouts():
            report("STORED " + json.dumps(workout, sort_keys=True))
        report("STORED_END before")
        # Resend everything of the previous cut with the same ids, in order: acked ones must come back
        # replayed, unacked ones run at most once.
        for command in cut_commands(previous):
            reply = w.request(command)
            report("RESENT " + command["id"] + " " + json.dumps(reply, sort_keys=True))
        for workout in stored_workouts():
            report("STORED " + json.dumps(workout, sort_keys=True))
        report("STORED_END after")
    cut = int(args.get("cut", "0"))
    if not cut:
        return
    # Pipelined: a window of commands in flight; each reply is reported the moment it is read, so the
    # host knows what was acked when it pulls the plug.
    commands = cut_commands(cut)
    window = threading.Semaphore(32)

    def reader():
        for _ in commands:
            reply = w.read_reply(timeout=60)
            report("ACK " + str(reply.get("id")) + " " + json.dumps(reply, sort_keys=True))
            window.release()

    thread = threading.Thread(target=reader, daemon=True)
    report("STREAM_START")
    thread.start()
    for command in commands:
        window.acquire()
        report("SENT " + command["id"])
        w.send(command)
    thread.join()
    report("STREAM_END")  # the host kills before this, normally; if not, it kills now


def phase_purge(args):
    run("DEBIAN_FRONTEND=noninteractive apt-get purge -y workoutd")
    check("9.purged", run("dpkg-query -W -f='${Status}' workoutd 2>&1", check_rc=False).strip()
          in ("", "unknown ok not-installed") or "no packages found" in
          run("dpkg-query -W workoutd 2>&1", check_rc=False), run("dpkg -l workoutd 2>&1", check_rc=False)[-300:])
    left = run("find / -xdev \\( -path /proc -o -path /sys -o -path /run/vmtest \\) -prune -o "
               "-iname '*workoutd*' -print", check_rc=False).split()
    check("9.no-files-left", left == [], " ".join(left))
    for path in ("/var/lib/workoutd", "/var/lib/private/workoutd", "/etc/workoutd", "/run/workoutd"):
        check(f"9.gone:{path}", not os.path.lexists(path))
    check("9.no-unit", run("systemctl cat workoutd 2>&1", check_rc=False).find("No files found") >= 0
          or run("systemctl list-unit-files workoutd.service", check_rc=False).find("0 unit files") >= 0)
    check("9.no-user", run("getent passwd workoutd", check_rc=False).strip() == "")
    check("9.no-rule", not glob.glob("/lib/udev/rules.d/*workoutd*") and not glob.glob("/etc/udev/rules.d/*workoutd*"))


# ---- the previous release upgraded while a wearable streams, then a downgrade refused ----

UPGRADE_PAIRS_BEFORE = 20  # start/end pairs stored by the previous release before the stream starts
UPGRADE_PAIRS_AFTER = 20   # pairs the stream still sends once the new version serves


def installed_version():
    return run("dpkg-query -W -f='${Version}' workoutd", check_rc=False).strip()


def database_digest():
    """What the database holds, byte for byte: the file's sha256 and the WAL's size. A daemon that stopped
    cleanly checkpointed its WAL, so the file is all the data; a reader may create an empty WAL (SQLite opens
    one even read-only) and the -shm index, neither of which is data."""
    digest = run(f"sha256sum {STATE}/workoutd.sqlite", check_rc=False).split(" ")[0]
    wal = f"{STATE}/workoutd.sqlite-wal"
    return f"{digest} wal={os.path.getsize(wal) if os.path.exists(wal) else 0}"


def request_retrying(gadget, command, per_try=3.0, give_up=240.0):
    """What a wearable does while its daemon restarts: resend the same command (same id) until its reply comes.
    Returns (reply, tries). Replies to an earlier try of an earlier command carry another id and are skipped."""
    deadline = time.monotonic() + give_up
    tries = 0
    while True:
        tries += 1
        try:
            gadget.send(command)
            while True:
                reply = gadget.read_reply(per_try)
                if reply.get("id") == command["id"]:
                    return reply, tries
        except (StepFailed, OSError, ValueError):
            if time.monotonic() > deadline:
                raise StepFailed(f"{command['id']}: no reply in {give_up:.0f} s over {tries} tries")
            time.sleep(0.2)


def upgrade_pair(n):
    return [start("u", n), {"command_type": "end_workout", "id": f"u-e{n}"}]


def phase_upgrade(args):
    """The previous release (0.1.0) installed and storing; apt upgrades it to this package while the wearable
    keeps sending single commands and resending by id whatever got no reply. Nothing acked may be lost or
    stored twice. Then the downgrade: the old binary meets a database the new one wrote, refuses it (exit 73,
    naming the version) and leaves it byte for byte as it was; upgrading again serves everything."""
    previous = sorted(glob.glob("/run/vmtest/previous/workoutd_*.deb"))
    new = sorted(glob.glob("/run/vmtest/debs/workoutd_*.deb"))
    check("10.debs-present", len(previous) == 1 and len(new) == 1, " ".join(previous + new))
    check("10.nothing-installed", installed_version() == "", installed_version())

    def apt_install(deb, extra=""):
        started = time.monotonic()
        out = run(f"cd {os.path.dirname(deb)} && DEBIAN_FRONTEND=noninteractive apt-get install -y {extra} "
                  f"./{os.path.basename(deb)} 2>&1", check_rc=False)
        seconds = time.monotonic() - started
        report(f"INFO apt-get install {extra} {os.path.basename(deb)}: {seconds:.1f} s")
        return out, seconds

    out, _ = apt_install(previous[0])
    old_version = installed_version()
    check("10.previous-installed", old_version != "", old_version or out[-1500:].replace("\n", " | "))
    wait_service_ready()
    load_gadget_modules()
    w = Gadget("w1", "WRB-0001")
    plug_and_serve(w, "dummy_udc.0", "10.plug")
    acks = {}
    for n in range(UPGRADE_PAIRS_BEFORE):
        for command in upgrade_pair(n):
            acks[command["id"]] = w.request(command)
    check("10.previous-stores", all(r.get("status") == "ok" for r in acks.values()),
          f"{len(acks)} commands on {old_version}")

    # The stream: single-flight, as a wearable talks, resending by id through the restart.
    upgraded = threading.Event()
    stream_error = []
    retried = []
    gaps = []

    def stream():
        n = UPGRADE_PAIRS_BEFORE
        after = 0
        last = time.monotonic()
        try:
            while after < UPGRADE_PAIRS_AFTER and n < 5000:
                if upgraded.is_set():
                    after += 1
                time.sleep(0.1)  # a wearable's pace, not a flood: the upgrade's own disk writes share the card
                for command in upgrade_pair(n):
                    reply, tries = request_retrying(w, command)
                    acks[command["id"]] = reply
                    if tries > 1:
                        retried.append((command["id"], tries, reply.get("replayed", False)))
                    now = time.monotonic()
                    gaps.append(now - last)
                    last = now
                n += 1
        except Exception as error:  # reported by the main thread
            stream_error.append(f"{type(error).__name__}: {error}")

    thread = threading.Thread(target=stream, daemon=True)
    thread.start()
    wait_for("the stream under way", lambda: len(acks) >= 2 * UPGRADE_PAIRS_BEFORE + 10 or stream_error, timeout=60)
    old_pid = main_pid()
    out, apt_seconds = apt_install(new[0])
    new_version = installed_version()
    upgraded_ok = new_version not in ("", old_version)
    check("10.upgraded", upgraded_ok, f"{old_version} -> {new_version}"
          + ("" if upgraded_ok else ": " + out[-1500:].replace("\n", " | ")))
    wait_service_ready()
    new_pid = main_pid()
    check("10.restarted-once", new_pid not in (0, old_pid) and unit_property("NRestarts") == "0",
          f"MainPID {old_pid} -> {new_pid}, NRestarts={unit_property('NRestarts')}")
    upgraded.set()
    thread.join(timeout=600)
    check("10.stream-through-upgrade", not thread.is_alive() and not stream_error, "; ".join(stream_error))
    report(f"FIGURE upgrade.apt_install_seconds {apt_seconds:.3f}")
    report(f"FIGURE upgrade.longest_reply_gap {max(gaps):.3f}")
    report(f"INFO upgrade: {len(acks)} commands acked, {len(retried)} resent by id: {retried[:12]}")

    pairs = len(acks) // 2
    bad = {i: r for i, r in acks.items() if r.get("status") != "ok"}
    check("10.every-command-ok", not bad, json.dumps(dict(list(bad.items())[:5])))
    by_location = {}
    for workout in stored_workouts():
        by_location.setdefault(str(workout.get("location")), []).append(workout)
    problems = []
    for n in range(pairs):
        stored = by_location.get(f"u-{n}", [])
        if len(stored) != 1:
            problems.append(f"u-{n} stored {len(stored)} times")
        elif stored[0].get("id") != acks[f"u-s{n}"].get("workout_id") or not stored[0].get("endedAt"):
            problems.append(f"u-{n}: acked {acks[f'u-s{n}']} / {acks[f'u-e{n}']}, stored {stored[0]}")
    check("10.nothing-lost-no-duplicates", not problems and len(by_location) >= pairs,
          f"{pairs} pairs acked; " + "; ".join(problems[:8]))

    # The downgrade: apt puts the old package back; its daemon must refuse the newer database, untouched.
    # Stopped first so the digest is of what the new version left (a running daemon writes at any time).
    run("systemctl stop workoutd")
    digest = database_digest()
    out, _ = apt_install(previous[0], "--allow-downgrades")
    check("10.downgraded", installed_version() == old_version,
          old_version if installed_version() == old_version else out[-1500:].replace("\n", " | "))
    wait_for("the old daemon to give up", lambda: unit_property("ActiveState") in ("failed", "inactive")
             and unit_property("SubState") != "auto-restart", timeout=60, interval=0.2)
    status = unit_property("ExecMainStatus")
    check("10.downgrade-refused-73", status == "73", f"ExecMainStatus={status} {unit_property('ActiveState')}")
    said = run("journalctl -b -u workoutd --no-pager -q -o cat", check_rc=False)
    wanted = f"written by workoutd {new_version}, newer than this version (this is {old_version})"
    check("10.downgrade-names-version", wanted in said, f"'{wanted}'" if wanted in said else f"journal lacks '{wanted}'")
    run("systemctl start workoutd", check_rc=False)  # an operator trying again: refused again
    wait_for("the second refusal", lambda: unit_property("ActiveState") in ("failed", "inactive"), timeout=60)
    check("10.downgrade-left-database-alone", not digest.startswith(" ") and database_digest() == digest,
          f"before: {digest} after: {database_digest()}")

    # Upgrading again serves every workout and takes new ones.
    out, _ = apt_install(new[0])
    check("10.upgraded-again", installed_version() == new_version,
          new_version if installed_version() == new_version else out[-1500:].replace("\n", " | "))
    wait_service_ready()
    wait_for("daemon opens the wearable again", lambda: w.host_tty() in open_ttys(main_pid()), timeout=30)
    w.open()
    reply, _ = request_retrying(w, start("u", 9999))
    check("10.serves-after-reupgrade", reply.get("status") == "ok", json.dumps(reply))
    locations = {str(workout.get("location")) for workout in stored_workouts()}
    missing = [n for n in range(pairs) if f"u-{n}" not in locations]
    check("10.all-workouts-after-reupgrade", not missing, f"missing {missing[:10]}")


def early(args):
    """Run by vmtest-early.service, ordered before workoutd: plugs the wearable in before the daemon starts."""
    if args.get("earlyplug") != "1":
        return 0
    state = run("systemctl is-active workoutd", check_rc=False).strip()
    load_gadget_modules()
    w1 = Gadget("w1", "WRB-0001")
    w1.plug("dummy_udc.0")
    w1.udc = "dummy_udc.0"
    node = wait_for("early tty node", w1.acm_node_for_udc, timeout=60)
    write("/run/vmtest-early-plug", f"workoutd={state} node={node}")
    return 0


def main():
    args = {}
    for item in read("/proc/cmdline").split():
        if item.startswith("vmtest."):
            key, _, value = item[len("vmtest."):].partition("=")
            args[key] = value
    if sys.argv[1:] == ["--early"]:
        return early(args)
    phase = args.get("phase", "")
    report(f"PHASE {phase} {json.dumps(args, sort_keys=True)}")
    try:
        {"install": phase_install, "reboot": phase_reboot, "cut": phase_cut,
         "purge": lambda a: (phase_cut(a), phase_purge(a)), "upgrade": phase_upgrade}[phase](args)
        report(f"PHASE_OK {phase}")
    except Exception as error:  # every failure, also an unexpected one, must reach the host
        report(f"FAIL {phase} {type(error).__name__}: {error}")
    finally:
        journal = run("journalctl -b --no-pager -o short-monotonic 2>&1 | tail -n 400", check_rc=False)
        for line in journal.splitlines():
            report("JOURNAL " + line)
        report("END")
    if phase != "cut":
        run("systemctl poweroff", check_rc=False)


if __name__ == "__main__":
    sys.exit(main())
