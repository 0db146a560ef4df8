"""The phone pages' Flask application: ``create_app(config, service)``.

Routes (all answers carry the security headers of :func:`_secure_headers`):

* ``GET /`` table page (public), ``GET /me`` a player's own page, ``GET /host`` the host page;
  static HTML/JS/CSS from ``companion/web/static`` (no CDN, no build step).
* ``GET /join/<token>`` sets the player's or the host's HttpOnly, SameSite=Strict cookie and
  redirects to ``/me`` or ``/host``.
* ``GET /api/state?as=public|player|host`` the snapshot, ETag = version (304 on a match).
* ``GET /events?as=…`` Server-Sent Events: the full snapshot on (re)connect and on every change,
  ``id:`` = version, a comment line as heartbeat every ``SSE_HEARTBEAT_S`` seconds.
* ``POST /api/command?as=player|host`` a JSON command (CSRF double-submit token required),
  parsed and checked by :mod:`companion.web.validate` before the service sees it; every JSON
  answer is strict (no ``NaN`` / ``Infinity``).
* ``GET /api/layout?length=N&special=9:fountain,18:web`` board positions of the spaces.
* ``GET /api/setup-choices`` what the host's new-game form offers.
* ``GET /api/qr`` (host) QR codes as inline SVG for the table page and every join link.
* ``GET /camera.jpg`` (host) current camera frame with the detected overlay.
* ``GET /healthz`` heartbeats of camera, detector, tracker, hardware and web (503 when stale).
"""

from __future__ import annotations

import hmac
import secrets
import threading
import time
from collections.abc import Iterator, Mapping
from urllib.parse import urlsplit

from flask import (
    Blueprint,
    Flask,
    Response,
    current_app,
    jsonify,
    render_template,
    request,
)
from flask.json.provider import DefaultJSONProvider

from companion.web.layout import LayoutError, board_layout, parse_special
from companion.web.service import (
    HOST_COMMANDS,
    PLAYER_COMMANDS,
    Audience,
    CommandError,
    Snapshot,
    TableService,
)
from companion.web.streams import (
    StreamRegistry,
    StreamsFull,
    client_gone,
    stream_capacity,
    waitress_probe,
)
from companion.web.validate import (
    MAX_BODY_BYTES,
    MAX_DEPTH,
    check_command,
    command_name,
    dumps_strict,
    parse_json_body,
)

PLAYER_COOKIE = "wt_player"
HOST_COOKIE = "wt_host"
CSRF_COOKIE = "wt_csrf"
CSRF_HEADER = "X-CSRF-Token"
COOKIE_MAX_AGE_S = 12 * 3600
"""Join cookies last one long game evening (seconds)."""

REVOKED = (
    "{who} page: the host issued new join links and this one no longer works: "
    "ask the host for the current QR code"
)
"""The 401 answer to a join cookie the host revoked."""

DEFAULTS: Mapping[str, object] = {
    "SSE_HEARTBEAT_S": 5.0,
    "SSE_MAX_S": 0.0,  # 0 = an event stream stays open until the client leaves
    "SSE_MAX_STREAMS": 0,  # open streams at most; 0 = the waitress threads less REQUEST_THREADS
    "SSE_CHECK_S": 1.0,  # a stream looks for a closed or stalled client this often
    "SSE_WRITE_TIMEOUT_S": 10.0,  # bytes unsent this long: the client is gone or stalled
    "SSE_MIN_AGE_S": 10.0,  # a stream this young keeps its slot when all are taken
    "SSE_EVICTED_RETRY_S": 20.0,  # an evicted page polls this long before streaming again
    "MAX_CONTENT_LENGTH": MAX_BODY_BYTES,
    "MAX_JSON_DEPTH": MAX_DEPTH,
    "PUBLIC_URL": "",
    "COOKIE_SECURE": False,
}
"""Config keys the app reads (and their defaults); any other Flask key may be given too."""

CSP = (
    "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
    "frame-ancestors 'none'"
)

bp = Blueprint("web", __name__)


# ------------------------------------------------------------------------------------------
# helpers


class ApiError(Exception):
    """A request the web layer refuses before the service sees it (JSON answer ``status``)."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.message = message
        self.status = status


def _same(a: str, b: str) -> bool:
    """Constant-time comparison of two secrets (any characters)."""
    return hmac.compare_digest(a.encode("utf-8", "replace"), b.encode("utf-8", "replace"))


def _service() -> TableService:
    svc: TableService = current_app.extensions["companion.service"]
    return svc


def _audience(want: str | None) -> Audience:
    """The audience a request may speak as: ``want`` checked against its cookies.

    :raises ApiError: 401 when the matching join cookie is absent or no longer valid.
    """
    svc = _service()
    role = want or "public"
    if role == "public":
        return Audience.public()
    if role == "host":
        token = request.cookies.get(HOST_COOKIE, "")
        if token and _same(token, svc.host_token):
            return Audience.host()
        if token and svc.token_revoked(token):
            raise ApiError(REVOKED.format(who="host"), 401)
        raise ApiError("host page: open the host's join link first (token missing or wrong)", 401)
    if role == "player":
        token = request.cookies.get(PLAYER_COOKIE, "")
        colour = svc.player_for_token(token) if token else None
        if colour is None and token and svc.token_revoked(token):
            raise ApiError(REVOKED.format(who="player"), 401)
        if colour is None:
            raise ApiError("player page: scan your join QR code first (no valid token)", 401)
        return Audience.player(colour)
    raise ApiError(f"as: {role[:20]!r} is not public, player or host", 400)


def _json_error(message: str, status: int) -> Response:
    resp = jsonify({"ok": False, "error": message})
    resp.status_code = status
    return resp


PAGE_TITLES = {"table": "table", "me": "my wizards", "host": "host"}


def _page(name: str) -> Response:
    """The ``templates/<name>.html`` page (``table``, ``me`` or ``host``) in the common head."""
    html = render_template(f"{name}.html", page=name, title=PAGE_TITLES[name])
    resp = Response(html, mimetype="text/html")
    resp.headers["Cache-Control"] = "no-cache"
    return resp


def _ensure_csrf_cookie(resp: Response) -> Response:
    if not request.cookies.get(CSRF_COOKIE):
        resp.set_cookie(
            CSRF_COOKIE,
            secrets.token_urlsafe(16),
            samesite="Strict",
            httponly=False,  # the page's script sends it back in the X-CSRF-Token header
            secure=bool(current_app.config["COOKIE_SECURE"]),
            path="/",
        )
    return resp


def _check_csrf() -> None:
    """Double-submit token plus the browser's own origin signals.

    :raises ApiError: 403 naming what is missing or wrong.
    """
    site = request.headers.get("Sec-Fetch-Site")
    if site is not None and site not in ("same-origin", "none"):
        raise ApiError(f"cross-site request refused (Sec-Fetch-Site: {site})", 403)
    origin = request.headers.get("Origin")
    if origin is not None:
        parts = urlsplit(origin)
        if parts.netloc != request.host or parts.scheme not in ("http", "https"):
            raise ApiError(f"request from another origin refused ({origin})", 403)
    cookie = request.cookies.get(CSRF_COOKIE, "")
    header = request.headers.get(CSRF_HEADER, "")
    if not cookie or not header:
        raise ApiError("CSRF token missing: reload the page", 403)
    if not _same(cookie, header):
        raise ApiError("CSRF token does not match: reload the page", 403)


def _base_url() -> str:
    configured = str(current_app.config.get("PUBLIC_URL") or "")
    return (configured or request.host_url).rstrip("/")


def _etag(version: int, audience: Audience) -> str:
    return f"v{version}-{audience.role}-{audience.colour or ''}"


# ------------------------------------------------------------------------------------------
# pages


@bp.get("/")
def table_page() -> Response:
    return _ensure_csrf_cookie(_page("table"))


@bp.get("/me")
def player_page() -> Response:
    return _ensure_csrf_cookie(_page("me"))


@bp.get("/host")
def host_page() -> Response:
    return _ensure_csrf_cookie(_page("host"))


@bp.get("/join/<token>")
def join(token: str) -> Response:
    """A join link: remember the player's or the host's token in an HttpOnly cookie."""
    svc = _service()
    secure = bool(current_app.config["COOKIE_SECURE"])
    if len(token) > 64:
        return _json_error("join link: token too long", 404)
    if _same(token, svc.host_token):
        resp = Response(status=303, headers={"Location": "/host"})
        cookie = HOST_COOKIE
    elif svc.player_for_token(token) is not None:
        resp = Response(status=303, headers={"Location": "/me"})
        cookie = PLAYER_COOKIE
    else:
        resp = Response(
            "This join link is not valid (any more). Ask the host for the current QR code.\n",
            status=404,
            mimetype="text/plain",
        )
        return resp
    resp.set_cookie(
        cookie,
        token,
        max_age=COOKIE_MAX_AGE_S,
        httponly=True,
        samesite="Strict",
        secure=secure,
        path="/",
    )
    resp.headers["Cache-Control"] = "no-store"
    return _ensure_csrf_cookie(resp)


# ------------------------------------------------------------------------------------------
# JSON API


def _snapshot_json(
    audience: Audience,
    svc: TableService | None = None,
    cache: dict[Audience, tuple[int, str]] | None = None,
) -> tuple[int, str]:
    """``(version, JSON text)`` of the audience's snapshot, serialised once per version and
    audience (every phone of the table asks for the same few). Outside a request (an event
    stream's generator) pass ``svc`` and ``cache``."""
    svc = svc if svc is not None else _service()
    if cache is None:
        cache = current_app.extensions["companion.json_cache"]
    version = svc.version
    hit = cache.get(audience)
    if hit is not None and hit[0] == version:
        return hit
    return _cached_json(audience, svc.snapshot(audience), cache)


def _cached_json(
    audience: Audience, snap: Snapshot, cache: dict[Audience, tuple[int, str]]
) -> tuple[int, str]:
    """``(version, JSON text)`` of ``snap``, the audience's current snapshot, from ``cache``
    when it holds that version (else serialised and kept there)."""
    version = int(snap["version"])
    hit = cache.get(audience)
    if hit is not None and hit[0] == version:
        return hit
    entry = (version, _dumps_snapshot(snap))
    cache[audience] = entry
    return entry


def _dumps_snapshot(snap: Snapshot) -> str:
    """A snapshot as strict JSON text.

    :raises ApiError: 500 for a number JSON cannot carry (NaN, infinity).
    """
    try:
        return dumps_strict(snap)
    except ValueError:
        # a page that cannot parse its snapshot stops updating without a word: say so instead
        raise ApiError(
            "snapshot holds a number JSON cannot carry (not finite): not sent", 500
        ) from None


@bp.get("/api/state")
def api_state() -> Response:
    audience = _audience(request.args.get("as"))
    current = _etag(_service().version, audience)
    if request.if_none_match.contains_weak(current):
        resp = Response(status=304)
        resp.set_etag(current)
    else:
        version, body = _snapshot_json(audience)
        resp = Response(body, mimetype="application/json")
        resp.set_etag(_etag(version, audience))
    resp.headers["Cache-Control"] = "private, no-cache"
    resp.headers["Vary"] = "Cookie"
    return resp


@bp.post("/api/command")
def api_command() -> Response:
    _check_csrf()
    want = request.args.get("as")
    if want not in ("player", "host"):
        raise ApiError("commands come from a player's page (as=player) or the host (as=host)", 403)
    audience = _audience(want)
    if not request.is_json:
        raise ApiError("expected a JSON body (Content-Type: application/json)", 415)
    raw = request.get_data(cache=False)
    body = parse_json_body(
        raw,
        int(current_app.config["MAX_CONTENT_LENGTH"]),
        int(current_app.config["MAX_JSON_DEPTH"]),
    )
    name = command_name(body)
    allowed = HOST_COMMANDS if audience.role == "host" else PLAYER_COMMANDS
    if name not in allowed:
        raise ApiError(f"command {name!r} is for the host only", 403)
    checked = check_command(body)
    result = _service().submit(checked, audience)
    return jsonify(result)


@bp.get("/api/layout")
def api_layout() -> Response:
    try:
        length = int(request.args.get("length", "16"))
        special = parse_special(request.args.get("special", ""))
        layout = board_layout(length, special)
    except ValueError as exc:
        raise ApiError(f"layout: {exc}", 400) from None
    resp = jsonify(layout)
    resp.headers["Cache-Control"] = "max-age=3600"
    return resp


@bp.get("/api/setup-choices")
def api_setup_choices() -> Response:
    """What the host's new-game form offers (players, R-COMP-2 colours, variants, modules,
    spells, memory-aid modes, OPEN options with their defaults; ``games``: the game packs'
    setup steps); the same for every game."""
    from companion.web.gamesetup import setup_choices
    from companion.web.packs import game_choices

    resp = jsonify({**setup_choices(), "games": game_choices()})
    resp.headers["Cache-Control"] = "max-age=3600"
    return resp


@bp.get("/api/qr")
def api_qr() -> Response:
    """QR codes (segno, inline SVG) for the table page and each join link; host only."""
    from companion.web.qr import qr_svg

    _audience("host")
    svc = _service()
    base = _base_url()

    def code(label: str, url: str) -> dict[str, str]:
        return {"label": label, "url": url, "svg": qr_svg(url)}

    players = [code(c, f"{base}/join/{t}") for c, t in svc.player_tokens().items()]
    resp = jsonify(
        {
            "table": code("table", f"{base}/"),
            "players": players,
            "host": code("host", f"{base}/join/{svc.host_token}"),
        }
    )
    resp.headers["Cache-Control"] = "no-store"
    return resp


@bp.get("/camera.jpg")
def camera() -> Response:
    _audience("host")
    jpeg = _service().camera_jpeg()
    if jpeg is None:
        raise ApiError("no camera frame yet", 404)
    resp = Response(jpeg, mimetype="image/jpeg")
    resp.headers["Cache-Control"] = "no-store"
    return resp


@bp.get("/healthz")
def healthz() -> Response:
    report = _service().health()
    resp = jsonify(report)
    resp.status_code = 200 if report.get("ok") else 503
    resp.headers["Cache-Control"] = "no-store"
    return resp


# ------------------------------------------------------------------------------------------
# Server-Sent Events


def sse_message(version: int, data: str) -> str:
    """One SSE message carrying a whole snapshot (JSON text on one line): ``id: <version>``,
    ``event: snapshot``."""
    return f"id: {version}\nevent: snapshot\ndata: {data}\n\n"


TAB_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")


def _stream_key(audience: Audience) -> tuple[tuple[str, str, str], str]:
    """``((device, audience, tab), device)`` of an event stream request: the device is the
    browser's CSRF cookie ("" without one: no per-device limit), the tab the page's own id (a
    stream without one replaces no other).

    :raises ApiError: 400 for a ``tab`` that is not 1-32 letters, digits, ``_`` or ``-``.
    """
    tab = request.args.get("tab", "")
    if len(tab) > 32 or not set(tab) <= TAB_CHARS:
        raise ApiError("tab: 1-32 letters, digits, '_' or '-'", 400)
    cookie = request.cookies.get(CSRF_COOKIE, "")[:64]
    owner = f"c:{cookie}" if cookie else f"a:{request.remote_addr or ''}"
    page = tab or f"~{secrets.token_hex(6)}"
    return (owner, f"{audience.role}:{audience.colour or ''}", page), cookie


@bp.get("/events")
def events() -> Response:
    audience = _audience(request.args.get("as"))
    key, device = _stream_key(audience)
    svc = _service()
    cfg = current_app.config
    heartbeat = float(cfg["SSE_HEARTBEAT_S"])
    max_s = float(cfg["SSE_MAX_S"])
    write_timeout = float(cfg["SSE_WRITE_TIMEOUT_S"])
    check_s = min(heartbeat, float(cfg["SSE_CHECK_S"]))
    evicted_retry_s = float(cfg["SSE_EVICTED_RETRY_S"])

    stopping: threading.Event = current_app.extensions["companion.stopping"]
    streams: StreamRegistry = current_app.extensions["companion.streams"]
    gone = client_gone(request.environ)
    try:
        slot = streams.open(key, device, waitress_probe(request.environ))
    except StreamsFull:
        # every stream holds a waitress thread: refuse rather than starve the other requests
        raise ApiError("too many open pages: this one polls and tries again", 503) from None

    cache: dict[Audience, tuple[int, str]] = current_app.extensions["companion.json_cache"]

    def stream() -> Iterator[str]:
        started = last_beat = time.monotonic()
        try:
            # a (re)connect always gets the full current snapshot, whatever Last-Event-ID says
            seen, data = _snapshot_json(audience, svc, cache)
            yield "retry: 1000\n" + sse_message(seen, data)
            while not max_s or time.monotonic() - started < max_s:
                waited = time.monotonic()
                now = svc.wait_for_change(seen, check_s)
                if stopping.is_set() or slot.ended.is_set():
                    if slot.reason == "evicted":
                        yield f'event: evicted\ndata: {{"retry_s": {evicted_retry_s}}}\n\n'
                    return
                t = time.monotonic()
                if gone() or slot.stalled(t, write_timeout):
                    return  # the phone left, or stopped reading: give its slot back now
                if now == seen:
                    if t - last_beat >= heartbeat * 0.9:
                        last_beat = t
                        yield ": heartbeat\n\n"
                    elif t - waited < check_s * 0.5:
                        stopping.wait(0.2)  # woken without a change (service closing): no busy loop
                    continue
                # every version since the last one sent, in order: a stream that woke late
                # (a busy machine) skips none the service still keeps
                *older, current = svc.snapshots_since(seen, audience)
                for snap in older:
                    yield sse_message(int(snap["version"]), _dumps_snapshot(snap))
                seen, data = _cached_json(audience, current, cache)
                last_beat = time.monotonic()
                yield sse_message(seen, data)
        finally:
            streams.close(slot)

    resp = Response(stream(), mimetype="text/event-stream")
    resp.call_on_close(lambda: streams.close(slot))
    resp.headers["Cache-Control"] = "no-store"
    resp.headers["X-Accel-Buffering"] = "no"
    return resp


# ------------------------------------------------------------------------------------------
# app factory


class StrictJSONProvider(DefaultJSONProvider):
    """Flask's JSON with ``NaN`` / ``Infinity`` refused both ways: browsers cannot parse them,
    and a page that cannot parse its snapshot silently stops updating."""

    def dumps(self, obj: object, **kwargs: object) -> str:
        kwargs.setdefault("allow_nan", False)
        return super().dumps(obj, **kwargs)

    def loads(self, s: str | bytes, **kwargs: object) -> object:
        return parse_json_body(s.encode("utf-8") if isinstance(s, str) else s)


def _secure_headers(resp: Response) -> Response:
    resp.headers["Content-Security-Policy"] = CSP
    resp.headers["Referrer-Policy"] = "no-referrer"
    resp.headers["X-Content-Type-Options"] = "nosniff"
    resp.headers["X-Frame-Options"] = "DENY"
    resp.headers.setdefault("Cache-Control", "no-cache")
    return resp


def create_app(config: Mapping[str, object] | None, service: TableService) -> Flask:
    """Build the phone pages' application.

    :param config: Flask config mapping; the keys of :data:`DEFAULTS` are read (``SSE_HEARTBEAT_S``
        seconds between heartbeat comments, ``SSE_MAX_S`` seconds before an event stream is
        closed (0 = never), ``SSE_MAX_STREAMS`` open streams at most (more get a 503 and the
        page polls; keep it below the waitress threads), ``MAX_CONTENT_LENGTH`` bytes of a request
        body (more: a JSON 413), ``MAX_JSON_DEPTH`` nesting of a JSON body (deeper: a JSON 400),
        ``PUBLIC_URL`` base of the QR-code links, ``COOKIE_SECURE``), plus any Flask key
        such as ``TESTING``.
    :param service: the :class:`~companion.web.service.TableService` whose snapshots are shown.
    :raises TypeError: when ``service`` does not implement the protocol.
    """
    if not isinstance(service, TableService):
        raise TypeError("service: expected a TableService (companion.web.service)")
    app = Flask(__name__, static_folder="static", static_url_path="/static")
    app.json = StrictJSONProvider(app)
    app.config.from_mapping(DEFAULTS)
    if config:
        app.config.from_mapping(config)
    app.extensions["companion.service"] = service
    app.extensions["companion.stopping"] = threading.Event()  # set: event streams end
    app.extensions["companion.json_cache"] = {}
    max_streams = int(app.config["SSE_MAX_STREAMS"])
    app.extensions["companion.streams"] = StreamRegistry(
        max_streams or stream_capacity(16), min_age_s=float(app.config["SSE_MIN_AGE_S"])
    )
    app.register_blueprint(bp)
    app.after_request(_secure_headers)

    @app.errorhandler(ApiError)
    def _api_error(exc: ApiError) -> Response:
        return _json_error(exc.message, exc.status)

    @app.errorhandler(CommandError)
    def _command_error(exc: CommandError) -> Response:
        return _json_error(exc.message, exc.status)

    @app.errorhandler(LayoutError)
    def _layout_error(exc: LayoutError) -> Response:
        return _json_error(str(exc), 400)

    @app.errorhandler(404)
    def _not_found(exc: Exception) -> Response:
        return _json_error(f"no such page: {request.path}", 404)

    @app.errorhandler(405)
    def _bad_method(exc: Exception) -> Response:
        return _json_error(f"{request.method} is not allowed on {request.path}", 405)

    @app.errorhandler(413)
    def _too_large(exc: Exception) -> Response:
        limit = app.config["MAX_CONTENT_LENGTH"]
        return _json_error(f"request body larger than {limit} bytes", 413)

    @app.errorhandler(400)
    def _bad_request(exc: Exception) -> Response:
        return _json_error("malformed request", 400)

    @app.errorhandler(500)
    def _server_error(exc: Exception) -> Response:
        # never an HTML page: the phone pages read every answer as JSON
        return _json_error("internal error: the companion logged it", 500)

    return app
