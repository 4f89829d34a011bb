"""Runs scripts/test.sh's pytest processes, as many at a time as there are cores.

The suite runs natively in two processes (tests/targets, whose modules mostly walk every
target themselves, and the rest), once more for the once-tests (tests/once: fresh
installs, the figures check) and again on every foreign target in the emulator
(tests/conftest.py, COPAPY_TEST_TARGET). An emulated pass of a part leaves out the tests
its native process recorded as target-independent (COPAPY_TEST_TARGET_USE), so it waits
for that process; nothing else waits. Jobs start in the order listed below, the longest
first, whenever a core is free: no core idles while a job is ready, and the short jobs
fill the end. A failed job's log is printed in full and the others are stopped.

Usage: pytest_jobs.py LOGDIR [FOREIGN_TARGET ...]
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

PYTEST = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
# the two parts of the suite, each with its own native process and record
PARTS = {"targets": ["tests/targets"], "rest": ["tests", "--ignore=tests/targets"]}


@dataclass
class Job:
    name: str  # what the summary line says
    args: list[str]
    env: dict[str, str]
    needs: list[str] = field(default_factory=list)  # names of jobs that must pass first


def jobs(logs: Path, foreign: list[str]) -> list[Job]:
    use = {part: str(logs / f"use-{part}.txt") for part in PARTS}
    native = [Job(f"pytest {' '.join(args)}", args, {"COPAPY_TEST_TARGET_USE": use[part]})
              for part, args in PARTS.items()]
    once = Job("installs, figures (tests/once)", ["tests/once"], {"COPAPY_TEST_ONCE": "1"})
    emulated = [Job(f"pytest {' '.join(args)} on {target} (emulated)", args,
                    {"COPAPY_TEST_TARGET": target, "COPAPY_TEST_TARGET_USE": use[part]},
                    needs=[native[i].name])
                for target in foreign for i, (part, args) in enumerate(PARTS.items())]
    # the emulated parts of tests/targets are short: they fill the end
    emulated.sort(key=lambda job: job.args == PARTS["targets"])
    return [*native, once, *emulated]


def main() -> int:
    logs, foreign = Path(sys.argv[1]), sys.argv[2:]
    todo = jobs(logs, foreign)
    slots = os.cpu_count() or 1
    running: dict[int, tuple[Job, subprocess.Popen[bytes], Path, float]] = {}
    passed: set[str] = set()
    while todo or running:
        ready = [job for job in todo if all(n in passed for n in job.needs)]
        while ready and len(running) < slots:
            job = ready.pop(0)
            todo.remove(job)
            log = logs / (job.name.replace(" ", "_").replace("/", "_") + ".log")
            with log.open("wb") as out:
                proc = subprocess.Popen([*PYTEST, *job.args], stdout=out, stderr=subprocess.STDOUT,
                                        env={**os.environ, **job.env})
            running[proc.pid] = (job, proc, log, time.monotonic())
        pid, status, usage = os.wait4(-1, 0)
        if pid not in running:
            continue
        job, proc, log, start = running.pop(pid)
        proc.returncode = os.waitstatus_to_exitcode(status)
        last = log.read_text(encoding="utf-8", errors="replace").rstrip().splitlines()[-1:]
        print(f"== {job.name}, {time.monotonic() - start:.0f} s, "
              f"{usage.ru_utime + usage.ru_stime:.0f} s CPU: {''.join(last)}", flush=True)
        if proc.returncode != 0:
            print(log.read_text(encoding="utf-8", errors="replace"), flush=True)
            for _, other, _, _ in running.values():
                other.terminate()
            for _, other, _, _ in running.values():
                other.wait()
            return 1
        passed.add(job.name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
