"""The SDK wiring that runs during ``generate``: an SDK's own modules gain the enabled
features' methods from an SDK template set (``wire``), by libcst edits (``edits``), from the
method table in the SDK's idiom (``methods``). Adopt discovers the files and writes the
table that asks for it (``adopt.discover``)."""
