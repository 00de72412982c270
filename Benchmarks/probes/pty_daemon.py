"""A daemon on a fresh pty and state directory, for the bench scripts (footprint.py, sdcard-writes.py)."""
import os
import select
import shlex
import signal
import subprocess
import tempfile
import time
import tty


class PtyDaemon:
    """Starts COMMAND with {device} (the pty's slave) and {state} (a new directory on disk) substituted."""

    def __init__(self, template, prefix):
        self.work = tempfile.mkdtemp(prefix=prefix, dir=os.environ.get("BENCH_STATE_DIR", "/var/tmp"))
        self.state = os.path.join(self.work, "state")
        self.master, self.slave = os.openpty()
        tty.setraw(self.master)
        self.argv = [part.replace("{device}", os.ttyname(self.slave)).replace("{state}", self.state)
                     for part in shlex.split(template)]
        self.log = open(os.path.join(self.work, "log"), "wb")
        self.start()

    def start(self):
        self.process = subprocess.Popen(self.argv, stdout=self.log, stderr=self.log)
        self.pid = self.process.pid
        self.wait_until_serving()

    def restart(self, between):
        """Stops the program, calls `between()` (its state directory left as it was), and starts it again."""
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(timeout=30)
        between()
        self.start()

    def wait_until_serving(self):
        """Probes until a reply comes: a line sent before the program set the tty up may be flushed."""
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            os.write(self.master, b'{"command_type":"end_workout"}\n')
            readable, _, _ = select.select([self.master], [], [], 0.5)
            if readable:
                time.sleep(0.5)
                while select.select([self.master], [], [], 0.2)[0]:
                    os.read(self.master, 1 << 16)
                return
        raise SystemExit(f"{self.process.args} never replied; log: {self.work}/log")

    def exchange(self, lines):
        """Writes `lines` as fast as the pty takes them while reading replies (a program blocked writing
        replies nobody reads stops reading), until as many replies arrived."""
        pending, wanted = b"".join(lines), len(lines)
        got, buffer = 0, b""
        deadline = time.monotonic() + 300  # a hang, not a speed limit
        os.set_blocking(self.master, False)
        while got < wanted:
            if time.monotonic() > deadline:
                raise SystemExit(f"no reply after {got} of {wanted}")
            readable, writable, _ = select.select([self.master], [self.master] if pending else [], [], 1.0)
            if writable:
                try:
                    pending = pending[os.write(self.master, pending[:4096]):]
                except BlockingIOError:
                    pass
            if readable:
                chunk = os.read(self.master, 1 << 16)
                if b'"status":"error"' in chunk:
                    raise SystemExit(f"error reply: {chunk[:300]!r}")
                buffer += chunk
                got += buffer.count(b"\n")
                buffer = buffer[buffer.rfind(b"\n") + 1:]
        os.set_blocking(self.master, True)

    def stop(self):
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
        os.close(self.master)
        os.close(self.slave)
        subprocess.run(["rm", "-rf", self.work])


START = b'{"command_type":"start_workout","location":"Gary\'s Gym","date":"2020-03-16 19:45:13 +0000","intensityLevel":5}\n'
END = b'{"command_type":"end_workout"}\n'


def durable_commands(count, ids=False):
    """Alternating start/end: every one a durable state change that gets an ok. With `ids`, each carries a
    fresh id, as wearables send them (workoutd then also remembers each reply for retries)."""
    if not ids:
        return [START if index % 2 == 0 else END for index in range(count)]
    lines = []
    for index in range(count):
        line = START if index % 2 == 0 else END
        lines.append(line[:1] + b'"id":%d,' % durable_commands.next_id + line[1:])
        durable_commands.next_id += 1
    return lines


durable_commands.next_id = 1
