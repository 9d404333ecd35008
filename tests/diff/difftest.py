#!/usr/bin/env python3
"""The differential test of cujit's array layer against NumPy (README.md beside it).

    difftest.py --mode gpu --runner build/bin/difftest_runner --count 10000
    difftest.py --mode gpu --sanitize ...       (every runner under compute-sanitizer memcheck)
    difftest.py --mode cpu --runner ... --fake build/lib/<the checking fake driver>.so
    difftest.py --mode self [--as-cpu | --drift] (the harness against a simulated cujit)
    difftest.py --faults                        (... passed, and each of its faults caught)
    difftest.py --show SEED [--mode cpu]        (one program, as text, C and NumPy)

Programs are made from seeds (--seed, then one seed per program), run in several runner
processes at once (--jobs), many programs per process, and checked against the reference
(model.py). A program that differs is shrunk and printed with its seed, as a short program,
as C and as NumPy, with what was expected and what came. The run fails when any program
differs, when a runner dies, and when it compared fewer programs, or no values, than
asked: a run that compared nothing never passes.

CPU mode's programs come in batches of gen.BATCH that share a palette of types and
operations (gen.Palette), so that their kernels repeat; the batches are dealt to --jobs
runner processes (cpu_shares), which share one disk cache (CUJIT_CACHE_DIR, as the
environment gives it), so a kernel two batches need is compiled once."""

import argparse
import multiprocessing
import os
import subprocess
import sys
import time
import traceback
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

import check  # noqa: E402
import dtypes  # noqa: E402
import emit  # noqa: E402
import gen  # noqa: E402
import model as M  # noqa: E402
import shrink  # noqa: E402
import simulate  # noqa: E402
from program import parse_results, program_text  # noqa: E402

NO_DEVICE = (8, 9)  # CUJIT_ERROR_NO_DRIVER, CUJIT_ERROR_NO_DEVICE


def seed_of(base, i):
    return base * 1000003 + i


def harness_error(what, e):
    """A failure's text for an exception of the harness itself, its last frames with it."""
    tb = traceback.format_exception(type(e), e, e.__traceback__)
    return "the harness failed %s (a harness error, not cujit's): %s: %s\n%s" % (
        what, type(e).__name__, e, "".join(tb[-3:]).rstrip())


def programs_for(base, start, count, large, cpu=False):
    """The programs (name, statements) and, for each the harness could not make, a failure
    (name, [], text)."""
    out, failed = [], []
    for i in range(start, start + count):
        s = seed_of(base, i)
        try:
            out.append(("s%d" % s, gen.generate(s, large, cpu)))
        except Exception as e:  # noqa: BLE001 - reported as the program's failure
            failed.append(("s%d" % s, [], harness_error("making this program", e)))
    return out, failed


class Runner:
    """Runs programs through the C runner (or the simulated one)."""

    def __init__(self, cfg):
        self.cfg = cfg

    def command(self):
        cmd = [self.cfg["runner"]]
        if self.cfg["cpu"]:  # what a kernel would read on the fake is not there: not read
            cmd.append("--contiguous-values")
        if self.cfg["sanitize"]:
            cmd = ["compute-sanitizer", "--tool", "memcheck", "--error-exitcode", "99",
                   "--print-limit", "20"] + cmd
        return cmd

    def env(self):
        env = dict(os.environ)
        if self.cfg.get("fake"):
            env["CUJIT_LIBCUDA"] = self.cfg["fake"]
        return env

    def run(self, programs):
        """The results of programs (name -> Result) and what went wrong with the process
        (None, or a text)."""
        if self.cfg["mode"] == "self":
            return simulate.results(programs, self.cfg.get("fault"), cpu=self.cfg["cpu"],
                                    drift=self.cfg.get("drift")), None
        text = "".join(program_text(n, s) for n, s in programs)
        try:
            p = subprocess.run(self.command(), input=text, capture_output=True, text=True,
                               env=self.env(), timeout=self.cfg["timeout"])
        except subprocess.TimeoutExpired as e:
            out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
            return parse_results(out.splitlines()), "timed out after %ds" % self.cfg["timeout"]
        res = parse_results(p.stdout.splitlines())
        trouble = None
        if p.returncode != 0:
            tail = "\n".join((p.stderr or "").splitlines()[-30:])
            san = [ln for ln in p.stdout.splitlines() if ln.startswith("=========")][:40]
            trouble = "the runner exited with %d\n%s\n%s" % (p.returncode, "\n".join(san), tail)
        return res, trouble


def cpu_shares(seed, first, count, jobs):
    """CPU mode's programs dealt to `jobs` runner processes: batches of one palette each
    (from one multiple of gen.BATCH to the next), the batches whose palettes hold a complex
    type all in one process, the others one at a time to the process with the least work
    so far (a complex palette's batch counting about twice a batch's work). A runner
    compiles every kernel of its batches, and NVRTC keeps its precompiled headers within
    a process: one that compiles the kernels of both complex palettes parses
    cuda::std::complex's headers for one of them only (a third less time for the two).
    Returns a list of shares, each a list of (first, count)."""
    batches, s, end = [], first, first + count
    while s < end:
        stop = min(end, (s // gen.BATCH + 1) * gen.BATCH)
        batches.append((s, stop - s))
        s = stop

    def has(batch, kinds):
        return any(t in kinds for t in gen.Palette(seed + batch[0] // gen.BATCH).types)

    cx = [b for b in batches if has(b, dtypes.COMPLEX)]
    # units of work, the heaviest first; 16-bit palettes next to each other
    units = [(2.0 * len(cx), cx)] if cx else []
    units += [(1.0, [b]) for b in batches if b not in cx and has(b, ("f16", "bf16"))]
    units += [(1.0, [b]) for b in batches if b not in cx and not has(b, ("f16", "bf16"))]
    units.sort(key=lambda u: -u[0])
    shares = [[0.0, []] for _ in range(max(1, min(jobs, len(batches))))]
    for work, bs in units:
        least = min(shares, key=lambda sh: sh[0])
        least[0] += work
        least[1] += bs
    return [sorted(sh[1]) for sh in shares if sh[1]]


def run_chunk(args):
    """One worker's share: generate, run (a runner that dies is started again after the
    program it died in), check. Returns (Counts, failures, troubles). An error of the
    harness itself fails the program it came in (or the share), and the run goes on."""
    cfg, ranges = args
    try:
        return _run_chunk(cfg, ranges)
    except Exception as e:  # noqa: BLE001 - the share's programs fail, the others run
        name = "s%d..s%d" % (seed_of(cfg["seed"], ranges[0][0]),
                             seed_of(cfg["seed"], ranges[-1][0] + ranges[-1][1] - 1))
        return check.Counts(), [(name, [], harness_error("running these programs", e))], []


def _run_chunk(cfg, ranges):
    """ranges: the share's programs, as (first, count) runs of numbers."""
    warnings.simplefilter("ignore")
    np.seterr(all="ignore")
    programs, failures = [], []
    for start, count in ranges:
        p, f = programs_for(cfg["seed"], start, count, cfg["large"], cfg["cpu"])
        programs += p
        failures += f
    runner = Runner(cfg)
    counts = check.Counts()
    troubles = []
    todo = programs
    while todo:
        res, trouble = runner.run(todo)
        done = 0
        for name, stmts in todo:
            r = res.get(name)
            if r is None or not r.complete:
                break
            done += 1
            try:
                f, n = check.check_program(stmts, r, cfg["cpu"])
            except Exception as e:  # noqa: BLE001 - the program fails, the others go on
                failures.append((name, stmts, harness_error("checking this program", e)))
                continue
            counts.add(n)
            if f is not None:
                failures.append((name, stmts, str(f)))
        if trouble:
            troubles.append(trouble)
        if done < len(todo):
            name, stmts = todo[done]
            failures.append((name, stmts, "the runner died in this program: %s"
                             % (trouble or "no output")))
            done += 1
        elif trouble and cfg["sanitize"]:
            # the sanitizer saw something in this batch: halve it until one program is left
            found = bisect(runner, todo)
            if found:
                failures.append((found[0], found[1], "compute-sanitizer: " + found[2]))
        todo = todo[done:]
    return counts, failures, troubles


def bisect(runner, programs):
    """The program of `programs` whose run the sanitizer complains of: (name, stmts, its
    report), or None when no half alone shows it."""
    while len(programs) > 1:
        half = programs[:len(programs) // 2]
        _, t = runner.run(half)
        if t is None:
            half = programs[len(programs) // 2:]
            _, t = runner.run(half)
            if t is None:
                return None
        programs = half
    _, t = runner.run(programs)
    return (programs[0][0], programs[0][1], t) if t else None


def has_ub(stmts):
    m = M.Model()
    for st in stmts:
        if m.step(st).ub:
            return True
    return False


def shrink_failure(cfg, name, stmts):
    runner = Runner(cfg)

    def fails_many(cands):
        out = []
        progs = [("c%d" % i, c) for i, c in enumerate(cands)]
        ok = [not has_ub(c) for c in cands]
        res, trouble = runner.run([p for p, k in zip(progs, ok) if k])
        for (n, c), k in zip(progs, ok):
            if not k:
                out.append(None)
                continue
            r = res.get(n)
            if r is None or not r.complete:
                out.append(check.Failure(-1, "the runner died in this program: %s" % trouble))
                continue
            f, _ = check.check_program(c, r, cfg["cpu"])
            if f is None and trouble and cfg["sanitize"] and len(cands) == 1:
                f = check.Failure(-1, "compute-sanitizer: " + trouble)
            out.append(f)
        return out

    return shrink.shrink(stmts, fails_many)


def report(cfg, name, stmts, what):
    print("=" * 78)
    print("DIFFERS: program %s (seed %s, mode %s)" % (name, name[1:], cfg["mode"]))
    print(what)
    if not stmts:  # the harness failed before the program existed
        return
    small, f = (stmts, None)
    if cfg["shrink"]:
        try:
            small, f = shrink_failure(cfg, name, stmts)
        except Exception as e:  # noqa: BLE001 - the unshrunk program is shown instead
            print("-- not shrunk: %s" % harness_error("shrinking it", e))
            small, f = stmts, None
    if f is not None:
        print("-- shrunk to %d statement(s) (from %d); it fails so:" % (len(small), len(stmts)))
        print(str(f))
    failing = f.index if f is not None and f.index >= 0 else None
    print("-- the program (runner.c's text; difftest.py --show %s prints the whole one):"
          % name[1:])
    print(program_text(name, small), end="")
    texts = {}
    for what_, fn in (("C", lambda: emit.to_c(small, failing)),
                      ("NumPy", lambda: emit.to_numpy(small))):
        try:
            texts[what_] = fn()
        except Exception as e:  # noqa: BLE001 - the program's text above still stands
            texts[what_] = "(%s)" % harness_error("writing it as " + what_, e)
        print("-- as %s:" % what_)
        print(texts[what_])
    if cfg.get("out"):
        os.makedirs(cfg["out"], exist_ok=True)
        with open(os.path.join(cfg["out"], "%s.txt" % name), "w") as fh:
            fh.write(program_text(name, small))
        with open(os.path.join(cfg["out"], "%s.c" % name), "w") as fh:
            fh.write(texts["C"] + "\n")


def self_test(a):
    """The harness against the simulated cujit (simulate.py), its programs made once for
    each way of checking (as GPU mode checks, then as CPU mode does): the correct cujit
    must pass every program (in GPU mode's checks with its floats drifting within the
    allowance), and each fault must fail one (its first failure ends that fault's
    search). Returns 0 when all of that holds, else 1."""
    bad = 0
    # an overlap is a kernel's wrong value: the fake driver holds none of those
    for cpu, faults in ((False, simulate.FAULTS),
                        (True, [f for f in simulate.FAULTS if f != "overlap"])):
        how = "CPU mode's checks" if cpu else "GPU mode's checks"
        programs, failed = programs_for(a.seed, a.first, a.count, False, cpu)
        bad_programs = [n for n, stmts in programs if _fails(stmts, n, None, cpu)] + \
            [f[0] for f in failed]
        if not cpu:  # what a failure prints as NumPy is Python that parses
            bad |= _unparsable(programs)
        if bad_programs:
            print("FAIL: %s fail the correct simulated cujit: %s"
                  % (how, " ".join(bad_programs[:10])))
            bad = 1
        for fault in faults:
            if any(_fails(stmts, n, fault, cpu) for n, stmts in programs):
                print("the fault '%s' was caught by %s" % (fault, how))
            else:
                print("FAIL: %s passed a simulated cujit with the fault '%s'" % (how, fault))
                bad = 1
    print("difftest: %s" % ("FAIL" if bad else "PASS"))
    return bad


def _unparsable(programs):
    """1 (saying which) when a program's NumPy text is not Python, else 0."""
    for name, stmts in programs:
        try:
            compile(emit.to_numpy(stmts), name, "exec")
        except SyntaxError as e:
            print("FAIL: the NumPy text of %s does not parse: line %s: %s"
                  % (name, e.lineno, (e.text or "").strip()))
            return 1
    return 0


def _fails(stmts, name, fault, cpu):
    """Whether the harness fails the simulated cujit's run of one program."""
    r = simulate.results([(name, stmts)], fault, cpu=cpu, drift=fault is None).get(name)
    if r is None or not r.complete:
        return True
    return check.check_program(stmts, r, cpu)[0] is not None


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mode", choices=["gpu", "cpu", "self"], default="gpu")
    ap.add_argument("--runner", help="the runner program (difftest_runner)")
    ap.add_argument("--fake", help="CPU mode: the fake CUDA driver library (CUJIT_LIBCUDA)")
    ap.add_argument("--count", type=int, default=200, help="programs to run")
    ap.add_argument("--seed", type=int, default=1, help="the run's seed")
    ap.add_argument("--first", type=int, default=0, help="the first program's number")
    ap.add_argument("--jobs", type=int, default=max(1, (os.cpu_count() or 2)))
    ap.add_argument("--per-process", type=int, default=0,
                    help="programs per runner process (default: --count over --jobs)")
    ap.add_argument("--sanitize", action="store_true", help="runners under compute-sanitizer")
    ap.add_argument("--timeout", type=int, default=900, help="seconds per runner process")
    ap.add_argument("--no-shrink", action="store_true")
    ap.add_argument("--max-reports", type=int, default=3)
    ap.add_argument("--out", help="where shrunk failing programs are written")
    ap.add_argument("--fault", choices=simulate.FAULTS, help="self mode: the simulated fault")
    ap.add_argument("--faults", action="store_true",
                    help="self mode's own test: the simulated cujit passes, as GPU and as CPU "
                         "mode check it, and each of its faults is caught")
    ap.add_argument("--drift", action="store_true",
                    help="self mode: the simulated cujit's float results differ from the "
                         "reference's within the allowance, and it computes on from them")
    ap.add_argument("--as-cpu", action="store_true",
                    help="self mode: CPU mode's programs and checks, the simulated cujit on "
                         "the fake driver (no kernel writes anything)")
    ap.add_argument("--show", type=int, metavar="SEED", help="print one program and exit")
    ap.add_argument("--small", action="store_true", help="no arrays of 20,000 or more")
    a = ap.parse_args()
    warnings.simplefilter("ignore")
    np.seterr(all="ignore")
    if a.show is not None:
        cpu = a.mode == "cpu" or a.as_cpu
        stmts = gen.generate(a.show, not a.small and not cpu, cpu)
        if cpu:
            print("#", gen.palette_of(a.show))
        print(program_text("s%d" % a.show, stmts), end="")
        print(emit.to_c(stmts))
        print(emit.to_numpy(stmts))
        return 0
    if a.faults:
        return self_test(a)
    if a.mode != "self" and not a.runner:
        ap.error("--runner is needed in %s mode" % a.mode)
    if dtypes.BF16 is None:
        print("difftest: ml_dtypes is not installed: bf16 is left out of every program")
    cpu = a.mode == "cpu" or (a.mode == "self" and a.as_cpu)
    cfg = {"mode": a.mode, "runner": a.runner, "fake": a.fake, "cpu": cpu,
           "sanitize": a.sanitize, "timeout": a.timeout, "seed": a.seed,
           "large": not a.small and not cpu, "shrink": not a.no_shrink,
           "out": a.out, "fault": a.fault, "drift": a.drift}
    if a.mode == "cpu" and not a.fake:
        print("difftest: CPU mode needs --fake (the checking fake CUDA driver)")
        return 2
    t0 = time.time()
    per = a.per_process or max(25, min(1000, -(-a.count // max(a.jobs, 1))))
    chunks = []
    if cpu and not a.per_process:
        chunks = [(cfg, share) for share in cpu_shares(a.seed, a.first, a.count, a.jobs)]
    else:
        for s in range(a.first, a.first + a.count, per):
            chunks.append((cfg, [(s, min(per, a.first + a.count - s))]))
    counts, failures, troubles = check.Counts(), [], []
    if a.jobs > 1 and len(chunks) > 1:
        with multiprocessing.Pool(a.jobs) as pool:
            for c, f, t in pool.imap_unordered(run_chunk, chunks):
                counts.add(c)
                failures += f
                troubles += t
    else:
        for ch in chunks:
            c, f, t = run_chunk(ch)
            counts.add(c)
            failures += f
            troubles += t
    return summarize(cfg, a, counts, failures, troubles, time.time() - t0)


def _number(name):
    """A program's number, for listing them in order ("s1000241" or "s5..s9")."""
    digits = name[1:].split(".")[0]
    return int(digits) if digits.isdigit() else -1


def summarize(cfg, a, counts, failures, troubles, seconds):
    no_device = [f for f in failures if any("returned %d" % s in f[2] for s in NO_DEVICE)]
    if no_device and a.mode == "gpu":
        print("difftest: FAIL: cujit found no driver or device; GPU mode compares nothing "
              "without one (%s)" % no_device[0][2].splitlines()[0])
        return 1
    failures = sorted(failures, key=lambda f: _number(f[0]))
    for name, stmts, what in failures[:a.max_reports]:
        try:
            report(cfg, name, stmts, what)
        except Exception as e:  # noqa: BLE001 - the listing below still names it
            print(harness_error("reporting %s" % name, e))
    for name, stmts, what in failures[a.max_reports:]:
        # the others, a line each: the first difference, unshrunk
        print("differs too: %s: %s" % (name, " | ".join(what.strip().splitlines()[:2])))
    for t in troubles[:3]:
        if not failures:
            print("runner trouble:", t)
    print("difftest (%s mode%s, seed %d): %d programs compared of %d, %d statements "
          "(%d refusals), %d values%s, %d differ; %.0f s"
          % (a.mode, ", compute-sanitizer memcheck" if a.sanitize else "", a.seed,
             counts.programs, a.count, counts.statements, counts.refusals, counts.values,
             " (those the fake driver holds; statuses the device decides left out: %d)"
             % counts.not_compared if cfg["cpu"] else "", len(failures), seconds))
    if cfg["cpu"] and a.count:
        print("difftest: palettes %d to %d (gen.Palette)"
              % (a.seed + a.first // gen.BATCH, a.seed + (a.first + a.count - 1) // gen.BATCH))
    bad = bool(failures) or counts.programs < a.count
    if counts.values == 0:
        print("difftest: FAIL: no value was compared")
        bad = True
    if counts.programs < a.count and not failures:
        print("difftest: FAIL: fewer programs compared than asked")
    if troubles and a.sanitize:
        bad = True
    print("difftest: %s" % ("FAIL" if bad else "PASS"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
