"""wsbench: an honest benchmark harness for WebSocket runtimes."""

__version__ = "0.1.0"
