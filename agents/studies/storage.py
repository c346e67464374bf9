"""Optuna studies as agents.tune keeps them: a journal file in the study's folder (one machine) or
a PostgreSQL database (several), opened the same way by every tool that reads a study."""

from __future__ import annotations

import re
import warnings
from pathlib import Path
from typing import Any

from agents.common.errors import UsageError

#: A study's name is a folder's name under --log-dir: letters, digits, '.', '_', '-', not starting with '.'.
STUDY_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")
#: Database schemes a study may live in (PostgreSQL through psycopg 3, the tune extra's driver).
SCHEMES = ("postgresql", "postgres", "postgresql+psycopg", "postgresql+psycopg2", "mysql", "mysql+pymysql")
#: Seconds to wait for a database server before giving up on it.
CONNECT_TIMEOUT_S = 10


def check_study_name(name: str, flag: str = "--study-name") -> str:
    """A study name that is safe as a folder name (no path, no '..', not empty, at most 100 characters)."""
    if not STUDY_NAME.fullmatch(name):  # match() would let "abc\n" through: $ matches before a final newline
        raise UsageError(f"{flag} {name!r}: a study name is 1 to 100 letters, digits, '.', '_' or '-', not starting with '.'")
    return name


def open_storage(url: str | None, folder: Path, heartbeat: int) -> Any:
    """Optuna's journal file in ``folder`` (one machine), or the database at ``url`` (several; the
    heartbeat fails a trial whose worker died). A journal that is not one, a scheme that is not a
    database's, a server that does not answer within :data:`CONNECT_TIMEOUT_S`: one line each."""
    import optuna
    from optuna.storages.journal import JournalFileBackend

    if url is None or url.endswith(".log"):
        path = Path(url) if url else folder / "journal.log"
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            return optuna.storages.JournalStorage(JournalFileBackend(str(path)))
        except OSError as error:
            raise UsageError(f"--storage: cannot open the journal {str(path)!r}: {error.strerror}") from None
        except Exception as error:  # Optuna raises several kinds for a file that is not its journal
            raise UsageError(f"journal {str(path)!r} is not an Optuna journal ({type(error).__name__})") from None
    scheme = url.partition("://")[0] if "://" in url else ""
    if url.startswith("sqlite"):
        raise UsageError(
            "--storage: SQLite does not take several writers at once; use a journal file (no --storage) or PostgreSQL"
        )
    if scheme not in SCHEMES:
        raise UsageError(
            f"--storage {url!r}: not a study storage; give a journal file (*.log) or a database URL "
            f"({', '.join(f'{s}://' for s in SCHEMES)})"
        )
    engine = {"connect_args": {"connect_timeout": CONNECT_TIMEOUT_S}} if scheme.startswith("postgres") else {}
    try:
        with warnings.catch_warnings():
            # The heartbeat is the documented way to fail a dead worker's trial; Optuna still tags it experimental.
            warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
            return optuna.storages.RDBStorage(
                _with_driver(url), engine_kwargs=engine, heartbeat_interval=heartbeat, grace_period=2 * heartbeat
            )
    except Exception as error:  # SQLAlchemy and the driver raise many kinds for a bad URL or an unreachable server
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise UsageError(f"--storage {url!r}: cannot open the study's database ({first})") from None


def load_existing_study(name: str, url: str | None, folder: Path, heartbeat: int = 30, flag: str = "") -> Any:
    """A study that must exist already (``--report``, ``--from-trial``, compare's ``--from-study``):
    refused, one line after ``flag``, with nothing written when it does not (opening a journal
    file that is not there would create it and its folder)."""
    import optuna

    where = url or str(folder / "journal.log")
    try:
        if (url is None or url.endswith(".log")) and not Path(where).is_file():
            raise KeyError(name)
        return optuna.load_study(study_name=name, storage=open_storage(url, folder, heartbeat))
    except KeyError:
        raise UsageError(f"{flag}no study {name!r} in {where}") from None


def _with_driver(url: str) -> str:
    """A plain postgresql:// URL with the driver the tune extra installs (psycopg 3): SQLAlchemy's
    default driver for that scheme is psycopg2 before 2.1 and psycopg from 2.1."""
    import importlib.util

    scheme, sep, rest = url.partition("://")
    if sep and scheme in ("postgresql", "postgres") and importlib.util.find_spec("psycopg") is not None:
        return f"postgresql+psycopg://{rest}"
    return url
