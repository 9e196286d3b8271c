"""``acp-codegen polyfill``: an ACP proxy on stdio that gives an agent without it the
session-archive RFD (protocol 1 and 2). See docs/polyfill.md."""
