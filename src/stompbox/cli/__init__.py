"""The ``stompbox`` command line tool. Each subcommand lives in its own module with a ``register``
function."""
