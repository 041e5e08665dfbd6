"""The ``toolstream`` command: demo, gateway, replay, record, fuzz, emulate.

The top layer: it may use the core, `toolstream_core.vendors` and the test kit's
public API (`toolstream_core.testing`); nothing below imports it
(``tests/test_layers.py`` checks). Entry point: `toolstream_core.app.cli.main`.
"""
