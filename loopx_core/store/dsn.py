"""PostgreSQL connection strings: recognised, checked for credentials, and shown redacted.

A DSN is a libpq URL (`postgresql://host/db?sslmode=require`) or a keyword string
(`host=db.internal dbname=loopx service=team`); every libpq option passes through to the
connection unchanged. LoopX never writes a password into a file nor prints one: a DSN that
carries a password is refused where it would be recorded, and every DSN is shown as
`postgresql://host[:port]/db` (no user, no password, no options; a local socket shows no
host, so no local path either). psycopg parses DSNs, imported only when one is used.
"""

from __future__ import annotations

from loopx_core.errors import UsageError

URL_PREFIXES = ("postgresql://", "postgres://")
CREDENTIAL_KEYS = ("password",)
"""libpq keys LoopX refuses to record (PGPASSWORD, PGPASSFILE or a service file carry them)."""


def is_dsn(text: str) -> bool:
    """True when `text` names a PostgreSQL store (a libpq URL or a keyword string)."""
    text = text.strip()
    return text.startswith(URL_PREFIXES) or ("=" in text and "://" not in text)


POSTGRES_EXTRA = "'psycopg[binary]>=3.2,<4' 'psycopg-pool>=3.2,<4'"
"""The packages of LoopX's `postgres` extra (pyproject.toml), as a shell would take them."""


def install_hint() -> str:
    """The command that adds the PostgreSQL extra to the environment LoopX runs in."""
    import sys

    parts = sys.prefix.replace("\\", "/").split("/")
    if "pipx" in parts and "venvs" in parts:
        return f"pipx inject loopx-kit {POSTGRES_EXTRA}"
    if "uv" in parts and "tools" in parts:
        return "uv tool install --reinstall --with 'psycopg[binary]' --with psycopg-pool <where you installed LoopX from>"
    return f"python -m pip install {POSTGRES_EXTRA} with LoopX's Python (in a clone: pip install -e '.[postgres]')"


def parse(dsn: str) -> dict[str, str]:
    """The DSN's libpq parameters; a malformed one is a `UsageError` that never echoes it."""
    try:
        from psycopg.conninfo import conninfo_to_dict
    except ImportError:  # the PostgreSQL extra is not installed
        raise UsageError(f"the PostgreSQL store needs psycopg: {install_hint()}") from None
    if "\x00" in dsn:  # libpq reads C strings: the rest would be silently dropped
        raise UsageError("the store is not a valid libpq connection string or postgresql:// URL (a NUL byte)")
    try:
        params = conninfo_to_dict(dsn.strip())
    except Exception:  # psycopg's message quotes the DSN, which may hold a password
        raise UsageError("the store is not a valid libpq connection string or postgresql:// URL") from None
    return {key: str(value) for key, value in params.items() if value is not None}


def credentials_in(dsn: str) -> list[str]:
    """The credential keys the DSN carries (empty: safe to record)."""
    params = parse(dsn)
    return [key for key in CREDENTIAL_KEYS if key in params]


def refuse_credentials(dsn: str) -> None:
    """A `UsageError` when the DSN carries a password (it would be written to a file)."""
    if credentials_in(dsn):
        raise UsageError(
            "the store DSN carries a password: LoopX never writes credentials to a file; drop it "
            "and use PGPASSWORD, a password file (PGPASSFILE, ~/.pgpass) or a service (PGSERVICE)"
        )


def shown(dsn: str) -> str:
    """The DSN as LoopX prints it: `postgresql://host[:port]/db`, credentials and options dropped."""
    params = parse(dsn)
    hosts = params.get("host") or params.get("hostaddr") or ""
    shown_hosts = ",".join(h for h in hosts.split(",") if h and not h.startswith(("/", "@")))
    port = params.get("port", "")
    if port and shown_hosts and "," not in port:
        shown_hosts += f":{port}"
    database = params.get("dbname", "")
    if not database and "service" in params:
        return f"postgresql://{shown_hosts}?service={params['service']}"
    return f"postgresql://{shown_hosts}/{database}"
