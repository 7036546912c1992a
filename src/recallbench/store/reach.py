"""Reach a Redis server before any work (``store.reach_store``): a mistyped URL is told from a
server that may come back, in one line that ends in the command to retry.

Separate from ``redis_store`` because it touches no file and keeps no connection: it answers
one question and closes.
"""

from __future__ import annotations

from recallbench.errors import ConfigError, StoreUnreachable


def reach(url: str, retry: str, timeout_s: float = 5.0) -> None:
    """Check that the server ``url`` answers, touching no file: a URL that cannot name a server
    (a bad port, an unknown host, a wrong password) is a ``ConfigError`` (exit 2), a server that
    does not answer (refused, timed out, loading, a name server that may answer later) is
    ``StoreUnreachable`` (exit 75). Both are one line ending in the command to ``retry``."""
    import socket

    import redis

    try:
        conn = redis.Redis.from_url(url, socket_timeout=timeout_s, socket_connect_timeout=timeout_s)
    except ValueError as exc:
        raise ConfigError(
            f"store={url}: {exc} (expected redis://host:port/db); fix store= and retry: {retry}"
        ) from None
    try:
        conn.ping()
    except redis.AuthenticationError as exc:
        raise ConfigError(
            f"store={url}: the server refused the login ({exc}); fix the "
            f"password in the URL and retry: {retry}"
        ) from None
    except (redis.ConnectionError, redis.TimeoutError, redis.BusyLoadingError) as exc:
        cause = exc.__cause__ or exc.__context__
        if isinstance(cause, socket.gaierror) and cause.errno != socket.EAI_AGAIN:
            raise ConfigError(
                f"store={url}: no such host ({exc}); fix store= and retry: {retry}"
            ) from None
        raise StoreUnreachable(
            f"store {url} unreachable ({exc}); once it answers, retry: {retry}"
        ) from None
    except redis.ResponseError as exc:  # NOAUTH, WRONGPASS, a bad db number
        raise ConfigError(
            f"store={url}: the server refused ({exc}); fix store= and retry: {retry}"
        ) from None
    except redis.RedisError as exc:  # something else listens there (an HTTP proxy, ...)
        raise ConfigError(
            f"store={url}: not a Redis server ({exc}); fix store= and retry: {retry}"
        ) from None
    finally:
        conn.close()
