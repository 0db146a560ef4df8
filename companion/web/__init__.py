"""The phone pages: table view, each player's own view, the host page (Flask, served by waitress).

``create_app(config, service)`` builds the application on any
:class:`~companion.web.service.TableService`; :class:`~companion.sim.faketable.FakeTableService`
stands in for the running companion in tests and development.
"""

from companion.web.app import create_app
from companion.web.server import BackgroundServer, print_join_codes, serve
from companion.web.service import Audience, CommandError, TableService

__all__ = [
    "Audience",
    "BackgroundServer",
    "CommandError",
    "TableService",
    "create_app",
    "print_join_codes",
    "serve",
]
