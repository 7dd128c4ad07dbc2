"""
Ctrl-C and SIGTERM in the offline commands: exceptions, or held back where they must not land.

Held back: the imports, starting and stopping Ray, cleaning up after an interrupt.

No heavy import here: ``__main__`` uses ``deferred`` around the package's imports, so a Ctrl-C in
the first second ends the command with one line instead of an import traceback or Open3D's
warnings.
"""

import contextlib
import ctypes
import signal


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised like Ctrl-C so that the same cleanup runs (exit 143 instead of 130)."""


def _raise_terminated(signum, frame):
    raise Terminated()


def raise_on_sigterm():
    """Make SIGTERM raise Terminated in the main thread; returns the previous handler."""
    return signal.signal(signal.SIGTERM, _raise_terminated)


def exit_code(exc):
    """Return the exit code of an interrupt: 143 for SIGTERM, 130 for Ctrl-C."""
    return 128 + (signal.SIGTERM if isinstance(exc, Terminated) else signal.SIGINT)


@contextlib.contextmanager
def deferred(*signums):
    """
    Hold back signums within the context; the first one received is raised when it ends.

    Python handlers only run between bytecodes, so code that must not be cut (C extensions
    registering types, Ray starting its processes) runs whole; the signal then acts through the
    handler that was in force before (KeyboardInterrupt, Terminated).
    """
    signums = signums or (signal.SIGINT, signal.SIGTERM)
    received = []
    before = {s: signal.signal(s, lambda n, f: received.append(n)) for s in signums}
    try:
        yield received
    finally:
        for s, handler in before.items():
            signal.signal(s, handler)
        if received:
            signal.raise_signal(received[0])


@contextlib.contextmanager
def blocked_for_children(*signums):
    """
    Block signums (default SIGINT) in this thread within the context.

    A blocked signal stays blocked across fork and exec, so the processes started meanwhile
    (Ray's gcs_server, raylet, and the workers the raylet starts later) never take the
    terminal's Ctrl-C, which reaches the whole process group: the run's driver alone acts on
    it and stops them in order (a worker killed by SIGINT mid-task could crash the driver's
    Ray core, exit 1 with a C++ stack). A signal sent meanwhile is delivered here when the
    context ends.
    """
    signums = signums or (signal.SIGINT,)
    before = signal.pthread_sigmask(signal.SIG_BLOCK, signums)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)


@contextlib.contextmanager
def restored_handlers(*signums):
    """Put back, when the context ends, the handlers of signums (default SIGINT, SIGTERM)."""
    signums = signums or (signal.SIGINT, signal.SIGTERM)
    before = {s: signal.getsignal(s) for s in signums}
    try:
        yield
    finally:
        for s, handler in before.items():
            signal.signal(s, handler)


def _interrupt(exc):
    """Return the KeyboardInterrupt (or Terminated) exc is or was caused by, else None."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, KeyboardInterrupt):
            return exc
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return None


def interrupted(exc):
    """
    Return True when exc is Ctrl-C or SIGTERM: a KeyboardInterrupt, or an error it caused.

    A SIGINT that lands while C code calls back into Python (a numba kernel loading a cached
    object, say) surfaces as a SystemError whose cause is the KeyboardInterrupt.
    """
    return _interrupt(exc) is not None


def forget_caught_interrupt():
    """
    Clear CPython's note of a Ctrl-C that C code saw, once the command has handled it.

    A Ctrl-C that lands while an extension runs Python source through the C API's PyRun_*
    functions (as pybind11's py::exec does) sets the interpreter's "unhandled
    KeyboardInterrupt" flag, even when the exception is caught further up; at the end of
    ``python -m``, CPython then kills its own process with SIGINT (status -2) instead of
    exiting with the command's 130 (Modules/main.c, exit_sigint). Each PyRun_* call resets the
    flag first, so running an empty string through one clears it.
    """
    ctypes.pythonapi.PyRun_SimpleString(b'')
