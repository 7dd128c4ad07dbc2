"""
A fleet in one process per robot: ``run --robots N`` runs robot 1, each other robot a child.

Robots 2..N run in a ``run --robot K`` child each.

One process holds one GIL: with three robots' nine sensors in it, the Python work of the
callbacks (pose lookups, message building, executor wake-ups) needs more than the one core a
GIL lets it use, so the fleet fell short of its rates on 2 cores while a core stayed idle.
Each robot's nodes in a process of their own talk over DDS as the nodes of a launch file do;
the children die with the runner (PR_SET_PDEATHSIG) and stop on its SIGINT like a node does.
"""

import signal
import subprocess
import sys
import time

from ubot_lidar_sim.core.processes import die_with_parent


def in_processes(args):
    """Return True when args run a fleet in a process per robot (this one is robot 1)."""
    return args.robot is None and args.robots > 1 and not args.one_process


def child_argv(args, k):
    """Return the argv that runs robot k of args' fleet alone (no view, no snapshots)."""
    argv = [sys.executable, '-m', 'ubot_lidar_sim', 'run', '--robots', str(args.robots),
            '--robot', str(k), '--seconds', repr(float(args.seconds))]
    for option, value in (('--params', args.params), ('--preset', args.preset)):
        if value:
            argv += [option, str(value)]
    for item in args.set:
        argv += ['--set', item]
    return argv + (['--verbose'] if args.verbose else [])


def start(args):
    """Start robots 2..N of args' fleet, each in a child process; return the Popen objects."""
    # A session of their own: the terminal's Ctrl-C reaches the runner alone, which passes one
    # SIGINT on (stop); a second one while a child shuts down would be a KeyboardInterrupt.
    return [subprocess.Popen(child_argv(args, k), stdout=subprocess.DEVNULL,
                             start_new_session=True, preexec_fn=die_with_parent)
            for k in range(2, args.robots + 1)]


def stop(children, grace_s=10.0):
    """
    Stop the children: SIGINT (a node's clean stop), SIGKILL after grace_s.

    Returns [(robot, exit code)] of the children that failed: any code but 0, whether they
    ended before they were asked to or after it (a child stopped by SIGINT exits 0).
    """
    for c in children:
        if c.poll() is None:
            c.send_signal(signal.SIGINT)
    end = time.monotonic() + grace_s
    for c in children:
        try:
            c.wait(max(0.0, end - time.monotonic()))
        except subprocess.TimeoutExpired:
            c.kill()
            c.wait()
    return [(k, c.returncode) for k, c in enumerate(children, start=2) if c.returncode != 0]
