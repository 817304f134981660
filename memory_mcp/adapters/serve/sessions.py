"""Who writes through the server (`written_by`, truth/stamp.py): the client a request comes from and
the session id the server minted for its connection."""

import weakref

from mcp.server.mcpserver import Context

from memory_mcp.truth.roots import working_folder
from memory_mcp.truth.stamp import Writer, new_session

# The session id minted for each connection, by the object that carries its messages back: the SDK
# keeps no state across requests of a 2026-07-28 connection (each request builds its own), but every
# request of one stdio pipe or one HTTP session shares that channel. Stateless HTTP shares one channel
# for all, so its requests share the process's session.
_SESSIONS: weakref.WeakKeyDictionary[object, str] = weakref.WeakKeyDictionary()
_PROCESS = new_session()  # the session of requests with no channel of their own


def writer(ctx: Context) -> Writer:
    """Who writes through this request's connection: the client's name (`clientInfo`) and a session
    id minted for the connection on its first write, in the project the server serves."""
    session = ctx.session
    channel = getattr(getattr(session, "_connection", None), "outbound", None)
    try:
        minted = _SESSIONS.setdefault(channel, new_session()) if channel is not None else _PROCESS
    except TypeError:  # a channel that cannot be weakly referenced
        minted = _PROCESS
    params = session.client_params
    client = params.client_info.name if params is not None and params.client_info is not None else ""
    return Writer(client or "unknown", minted, working_folder())
