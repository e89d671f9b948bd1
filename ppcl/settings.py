"""The ``PPCL_*`` environment settings, parsed in this one module into frozen values.

The edges of ppcl (building a program, creating a device, the command line) call
:func:`read_settings` and pass the parts a stage needs down as arguments; nothing in the
middle of the compiler or the runtime reads the environment itself.

| variable | field | meaning |
|---|---|---|
| ``PPCL_DEBUG`` | ``debug`` | ``1`` or ``all``: every topic below; else a comma list of topics |
| ``PPCL_VERIFY`` | ``debug.verify`` | ``1``: run the IR verifier after every pass (tests set it) |
| ``PPCL_THREADS`` | ``threads`` | threads of the CPU device (default: the usable cores) |
| ``PPCL_DEVICES`` | ``devices`` | which devices the platform lists, e.g. ``cpu``, ``cpu,serial`` or ``cuda`` |
| ``PPCL_VENDORS`` | ``vendors`` | ``1``: list the OpenCL platforms pyopencl finds, through ppcl |
| ``PPCL_CHECK`` | ``check`` | the checking device's reports: ``raise`` (default) at the launch, or ``collect`` all and raise at ``finish`` |
| ``PPCL_CACHE_DIR`` | ``cache_dir`` | the kernel cache root |
| ``PPCL_COMPILER_OUTPUT`` | ``compiler_output`` | ``1``: warn with non-empty build logs |
| ``PPCL_CTX`` | ``ctx`` | device choice of ``create_some_context`` (``PYOPENCL_CTX`` too) |
| ``PPCL_TEST`` | ``test`` | devices of ``ppcl.tools`` test helpers (``PYOPENCL_TEST`` too) |
| ``PPCL_OVERLAY`` | ``overlay`` | ``1``: every in-order queue delays, optimizes and replays its commands |
| ``PPCL_SPLIT`` | ``split`` | ``0``: no input space splitting in any build (as the build option ``-ppcl-no-split``); default on |
| ``PPCL_HOSTFUSION`` | ``hostfusion`` | ``1``: every queue's launches may be coarsened, re-laid-out or vectorized, each rewrite kept only when it measures faster; ``force``: the model's choice without measuring (tests) |

Debug topics: ``passes`` (the IR after each compiler pass), ``time`` (the time of each pass),
``c`` (the generated C), ``cc`` (the C compiler's invocation and vectorizer report),
``plans`` (each scheduling decision and its reason), ``overlay`` (each fusion, elimination and
specialization of the command overlay, with its reason), ``hostfusion`` (the device model, each
candidate rewrite of a launch with its reason, the timings of the guard and the choice),
``array`` (each ``ppcl.array`` reduction's route, patterns or reduction kernel, with its
reason, and the derivation chosen and whether it was explored, read from the cache or the
default). Any topic also turns the verifier on.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

DEBUG_TOPICS = ("passes", "time", "c", "cc", "plans", "overlay", "hostfusion", "array")
DEFAULT_DEVICES = ("cpu",)
CHECK_MODES = ("raise", "collect")


class SettingsError(ValueError):
    """An environment variable whose value ppcl cannot use; the message says which and why."""


@dataclass(frozen=True)
class Debug:
    """What ``PPCL_DEBUG`` asks the compiler to show, and whether passes are verified."""

    topics: frozenset[str] = frozenset()
    verify: bool = False

    def shows(self, topic: str) -> bool:
        return topic in self.topics

    @property
    def any(self) -> bool:
        return bool(self.topics)


NO_DEBUG = Debug()


@dataclass(frozen=True)
class Settings:
    """Every ``PPCL_*`` setting in effect (see the module docstring)."""

    debug: Debug = NO_DEBUG
    threads: int | None = None
    devices: tuple[str, ...] = DEFAULT_DEVICES
    cache_dir: str = ""
    compiler_output: bool = False
    vendors: bool = False
    ctx: str | None = None
    test: str | None = None
    check: str = "raise"
    overlay: bool = False
    hostfusion: str = "off"
    split: bool = True


def parse_debug(text: str, verify: str = "") -> Debug:
    """``PPCL_DEBUG`` (and the ``PPCL_VERIFY`` switch) as a :class:`Debug`."""
    text = text.strip().lower()
    topics: frozenset[str]
    if text in ("", "0"):
        topics = frozenset()
    elif text in ("1", "all", "yes", "true"):
        topics = frozenset(DEBUG_TOPICS)
    else:
        words = {word.strip() for word in text.split(",") if word.strip()}
        unknown = sorted(words - set(DEBUG_TOPICS))
        if unknown:
            raise SettingsError(f"PPCL_DEBUG={text!r}: unknown topic {', '.join(unknown)}; "
                                f"use 1, all, or a comma list of {', '.join(DEBUG_TOPICS)}")
        topics = frozenset(words)
    return Debug(topics, bool(topics) or parse_switch("PPCL_VERIFY", verify))


def parse_threads(text: str) -> int | None:
    """``PPCL_THREADS``: a positive number of threads, or None (unset) for the usable cores."""
    text = text.strip()
    if not text:
        return None
    try:
        value = int(text)
    except ValueError:
        raise SettingsError(f"PPCL_THREADS={text!r} is not a number: set a positive "
                            "number of threads, or unset it to use every core") from None
    if value < 1:
        raise SettingsError(f"PPCL_THREADS={text!r}: the CPU device needs at least 1 thread")
    return value


def parse_devices(text: str) -> tuple[str, ...]:
    names = tuple(word.strip().lower() for word in text.split(",") if word.strip())
    return names or DEFAULT_DEVICES


def parse_check(text: str) -> str:
    """``PPCL_CHECK``: ``raise`` (the default) or ``collect``."""
    mode = text.strip().lower() or "raise"
    if mode not in CHECK_MODES:
        raise SettingsError(f"PPCL_CHECK={text!r}: use raise (report at the launch) or "
                            "collect (keep running, report every finding at finish)")
    return mode


def cache_root(environ: Mapping[str, str] | None = None) -> str:
    """The kernel cache root: ``$PPCL_CACHE_DIR``, else ``$XDG_CACHE_HOME/ppcl``, else
    ``~/.cache/ppcl``."""
    env = os.environ if environ is None else environ
    explicit = env.get("PPCL_CACHE_DIR")
    if explicit:
        return explicit
    xdg = env.get("XDG_CACHE_HOME")
    if xdg:
        return os.path.join(xdg, "ppcl")
    return os.path.join(os.path.expanduser("~"), ".cache", "ppcl")


def read_settings(environ: Mapping[str, str] | None = None) -> Settings:
    """The settings of ``environ`` (default: this process's environment, read now)."""
    env = os.environ if environ is None else environ
    return Settings(
        debug=parse_debug(env.get("PPCL_DEBUG", ""), env.get("PPCL_VERIFY", "")),
        threads=parse_threads(env.get("PPCL_THREADS", "")),
        devices=parse_devices(env.get("PPCL_DEVICES", "")),
        cache_dir=cache_root(env),
        compiler_output=_compiler_output(env),
        vendors=parse_switch("PPCL_VENDORS", env.get("PPCL_VENDORS", "")),
        ctx=env.get("PPCL_CTX") or env.get("PYOPENCL_CTX") or None,
        test=env.get("PPCL_TEST") or env.get("PYOPENCL_TEST") or None,
        check=parse_check(env.get("PPCL_CHECK", "")),
        overlay=parse_switch("PPCL_OVERLAY", env.get("PPCL_OVERLAY", "")),
        hostfusion=parse_hostfusion(env.get("PPCL_HOSTFUSION", "")),
        split=parse_switch("PPCL_SPLIT", env.get("PPCL_SPLIT", "1") or "1"),
    )


def _compiler_output(env: Mapping[str, str]) -> bool:
    """``PPCL_COMPILER_OUTPUT``, else PyOpenCL's ``PYOPENCL_COMPILER_OUTPUT``."""
    if env.get("PPCL_COMPILER_OUTPUT", "").strip():
        return parse_switch("PPCL_COMPILER_OUTPUT", env["PPCL_COMPILER_OUTPUT"])
    return parse_switch("PYOPENCL_COMPILER_OUTPUT", env.get("PYOPENCL_COMPILER_OUTPUT", ""))


def overlay_switch(environ: Mapping[str, str] | None = None) -> bool:
    """``PPCL_OVERLAY`` alone, for when another variable is bad (reported where it is used);
    off when ``PPCL_OVERLAY`` itself is bad, which is reported there too."""
    env = os.environ if environ is None else environ
    try:
        return parse_switch("PPCL_OVERLAY", env.get("PPCL_OVERLAY", ""))
    except SettingsError:
        return False


def hostfusion_switch(environ: Mapping[str, str] | None = None) -> str:
    """``PPCL_HOSTFUSION`` alone, as :func:`overlay_switch`: off when it is bad."""
    env = os.environ if environ is None else environ
    try:
        return parse_hostfusion(env.get("PPCL_HOSTFUSION", ""))
    except SettingsError:
        return "off"


def parse_hostfusion(text: str) -> str:
    """``PPCL_HOSTFUSION``: off (the default), on (measured), or force (unmeasured)."""
    word = text.strip().lower()
    if word == "force":
        return "force"
    try:
        return "on" if parse_switch("PPCL_HOSTFUSION", word) else "off"
    except SettingsError:
        raise SettingsError(f"PPCL_HOSTFUSION={text.strip()!r}: use 1 (rewrites kept when "
                            "they measure faster), force (the model's choice, untimed) or "
                            "0 (off)") from None


def parse_switch(name: str, text: str) -> bool:
    """A ``0``/``1`` switch (empty is off)."""
    text = text.strip().lower()
    if text in ("", "0", "no", "false", "off"):
        return False
    if text in ("1", "yes", "true", "on"):
        return True
    raise SettingsError(f"{name}={text!r}: use 1 to turn it on or 0 for off")
