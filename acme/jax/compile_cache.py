"""jax's persistent compilation cache: compiled programs kept on disk, so a second run of the same experiment skips
most of XLA's compilation.

A run keeps them in ``default_directory()`` (``$ACME_COMPILE_CACHE``, else ``$XDG_CACHE_HOME/acme/jax-compile``,
else ``~/.cache/acme/jax-compile``) unless told otherwise: ``"off"`` turns the cache off, any other value is the
folder to use. jax loads and runs what it finds there, so the folder must belong to this user and be writable by no
one else; anything else is refused. Deleting the folder clears the cache.
"""

from __future__ import annotations

import os
import stat

import jax

OFF = "off"
ENVIRONMENT_VARIABLE = "ACME_COMPILE_CACHE"
MIN_COMPILE_SECONDS = 0.1  # programs that compile faster are not worth a file


def default_directory() -> str:
    """The folder a run uses when not told otherwise (or ``"off"``, where ``$ACME_COMPILE_CACHE`` says so)."""
    configured = os.environ.get(ENVIRONMENT_VARIABLE)
    if configured:
        return configured
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "acme", "jax-compile")


def check_private(directory: str) -> None:
    """Refuses a folder that another user owns or may write: jax would run the programs someone put there."""
    info = os.stat(directory)
    if not stat.S_ISDIR(info.st_mode):
        raise ValueError(f"The compile cache {directory!r} is not a folder: name a folder, or 'off'.")
    if info.st_uid != os.getuid() or info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise ValueError(
            f"The compile cache {directory!r} is owned or writable by another user (mode "
            f"{stat.filemode(info.st_mode)}): jax runs the compiled programs it finds there. Use a folder only you "
            "can write (chmod go-w), another folder, or 'off'."
        )


def enable(setting: str | None = None) -> str | None:
    """Turns the cache on in ``setting``'s folder (``None``: ``default_directory()``) and returns the folder, or
    turns it off and returns None for ``"off"``. Takes effect for the programs compiled from then on."""
    from jax.experimental.compilation_cache import compilation_cache

    directory = default_directory() if setting is None else setting
    if directory == OFF:
        if jax.config.jax_compilation_cache_dir is not None:
            jax.config.update("jax_compilation_cache_dir", None)
            compilation_cache.reset_cache()
        return None
    directory = os.path.abspath(os.path.expanduser(directory))
    os.makedirs(directory, mode=0o700, exist_ok=True)
    check_private(directory)
    if jax.config.jax_compilation_cache_dir != directory:
        jax.config.update("jax_compilation_cache_dir", directory)
        jax.config.update("jax_persistent_cache_min_compile_time_secs", MIN_COMPILE_SECONDS)
        compilation_cache.reset_cache()  # a cache already set up in this process would keep its old folder
    return directory


def size_bytes(directory: str) -> int:
    """Bytes the cache's files take."""
    total = 0
    for root, _, files in os.walk(directory):
        for name in files:
            try:
                total += os.path.getsize(os.path.join(root, name))
            except OSError:  # removed meanwhile (jax evicts, another run clears)
                pass
    return total
