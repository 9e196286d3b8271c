// A session-archive agent on the official ACP TypeScript SDK, written from the RFD
// (session-archive.md) for the conformance kit's tests; not part of the tool.
//
//   node agent.mjs --store FILE [--page-size N] [--break RULE]
//
// It speaks ACP v1 and the v2 draft on stdio through the SDK's protocol router, with the
// SDK's own agent apps (`agent()` of each version's unstable entrypoint, where the archive
// methods are routed). `--break RULE` breaks exactly one rule of the RFD (see BREAKS).
// A turn echoes the prompt; a prompt "Count from 1 to N" takes N milliseconds, counting
// aloud 100 numbers at a time, so there is work in flight to cancel.
import { Readable, Writable } from "node:stream";
import { parseArgs } from "node:util";
import * as v1 from "@agentclientprotocol/sdk/unstable";
import * as v2 from "@agentclientprotocol/sdk/experimental/v2/unstable";
import { Store } from "./store.mjs";

const BREAKS = {
  "capability-without-list": "v1: advertise sessionCapabilities.archive without list",
  "archive-not-idempotent": "archiving an archived session fails",
  "unknown-id-succeeds": "archive and unarchive of an id that never existed succeed",
  "archive-of-deleted-succeeds": "archiving a deleted session succeeds",
  "null-filter-includes": "archived: null lists archived sessions too",
  "invalid-filter-excludes": "an unsupported archived value lists like exclude",
  "offset-cursor": "cursors count positions in the filtered list, which shift as sessions are archived",
  "cursor-keeps-filters": "a cursor continues with the filters it was issued for",
  "unarchive-resumes": "unarchive opens the session again",
  "archive-drops-history": "archiving forgets the conversation",
  "archive-keeps-turn": "archiving an active session lets its turn run on",
  "no-archived-update": "no session_info_update archived: true when an open session is archived",
  "load-unarchives": "session/load and session/resume unarchive an archived session",
  "delete-keeps-archived": "deleting an archived session leaves it listed as archived",
  "archive-not-saved": "the archive state is not written to the store, so a restart forgets it",
};

const { values: args } = parseArgs({
  options: { store: { type: "string" }, "page-size": { type: "string", default: "10" }, break: { type: "string" } },
});
if (args.break !== undefined && !(args.break in BREAKS)) {
  process.stderr.write(`unknown --break ${args.break}; one of: ${Object.keys(BREAKS).join(", ")}\n`);
  process.exit(2);
}
const broken = (rule) => args.break === rule;
const pageSize = Number(args["page-size"]);
const store = new Store(args.store, { keepArchived: !broken("archive-not-saved") });
const open = new Map(); // session id -> {turn: {controller, done} | null}, for this connection

const NOT_FOUND = -32002;
const notFound = (sdk, sessionId) => new sdk.RequestError(NOT_FOUND, "Resource not found", { sessionId });
const sleep = (ms, signal) =>
  new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => (clearTimeout(timer), resolve()), { once: true });
  });

function known(sdk, sessionId) {
  const session = store.sessions.get(sessionId);
  if (session === undefined) throw notFound(sdk, sessionId);
  return session;
}

// -- listing: filters first, then pages in creation order ------------------------------

function filterOf(sdk, value) {
  if (value === undefined || value === null) return broken("null-filter-includes") && value === null ? "include" : "exclude";
  if (value === "exclude" || value === "include" || value === "only") return value;
  if (broken("invalid-filter-excludes")) return "exclude";
  throw sdk.RequestError.invalidParams({ archived: value }, "archived must be exclude, include or only");
}

function list(sdk, params) {
  let cwd = params.cwd ?? null;
  let archived = filterOf(sdk, params.archived);
  let after = 0;
  if (params.cursor != null) {
    let cursor;
    try {
      cursor = JSON.parse(Buffer.from(params.cursor, "base64url").toString());
    } catch {
      throw sdk.RequestError.invalidParams({ cursor: params.cursor }, "not a cursor of this agent");
    }
    if (broken("cursor-keeps-filters")) ({ cwd, archived } = cursor);
    else if (cursor.cwd !== cwd || cursor.archived !== archived)
      throw sdk.RequestError.invalidParams({ cursor: params.cursor }, "the cursor belongs to other filters");
    after = cursor.after;
  }
  const matching = [...store.sessions.values()]
    .filter((s) => (cwd === null || s.cwd === cwd) && (archived === "include" || s.archived === (archived === "only")))
    .sort((a, b) => a.order - b.order);
  // A cursor names the last session listed (by creation order), so archiving between pages
  // shifts nothing; the offset-cursor break counts positions instead.
  const start = broken("offset-cursor") ? after : matching.findIndex((s) => s.order > after);
  const rest = start < 0 ? [] : matching.slice(start);
  const page = rest.slice(0, pageSize);
  const result = {
    sessions: page.map((s) => ({ sessionId: s.id, cwd: s.cwd, title: s.title, updatedAt: s.updatedAt, archived: s.archived })),
  };
  if (rest.length > pageSize) {
    const next = broken("offset-cursor") ? after + pageSize : page.at(-1).order;
    result.nextCursor = Buffer.from(JSON.stringify({ cwd, archived, after: next })).toString("base64url");
  }
  return result;
}

// -- open sessions and turns --------------------------------------------------------------

async function closeSession(sessionId) {
  const entry = open.get(sessionId);
  open.delete(sessionId);
  if (entry?.turn) {
    entry.turn.controller.abort();
    await entry.turn.done;
  }
}

function update(client, sessionId, update) {
  return client.notify("session/update", { sessionId, update });
}

// Runs one turn; resolves to its stop reason. `chunk` shapes an agent message chunk.
async function turn(client, session, entry, text, chunk) {
  const controller = new AbortController();
  let finish;
  entry.turn = { controller, done: new Promise((resolve) => (finish = resolve)) };
  session.history.push({ role: "user", text });
  store.save();
  const count = /count from 1 to (\d+)/i.exec(text);
  const last = count ? Math.min(Number(count[1]), 100000) : 0;
  let stopReason = "end_turn";
  for (let n = 1; n <= last; n += 100) {
    if (controller.signal.aborted) break;
    const numbers = Array.from({ length: Math.min(100, last - n + 1) }, (_, i) => n + i);
    await update(client, session.id, chunk(numbers.join("\n") + "\n"));
    await sleep(100, controller.signal);
  }
  if (controller.signal.aborted) stopReason = "cancelled";
  else {
    const reply = count ? "done" : `echo: ${text}`;
    session.history.push({ role: "agent", text: reply });
    session.updatedAt = new Date().toISOString();
    store.save();
    await update(client, session.id, chunk(reply));
  }
  entry.turn = null;
  finish();
  return stopReason;
}

// -- the handlers both versions share -------------------------------------------------------

function common(sdk, app) {
  return app
    .onRequest("session/new", ({ params }) => {
      const session = store.create(params.cwd);
      open.set(session.id, { turn: null });
      return { sessionId: session.id };
    })
    .onRequest("session/list", ({ params }) => list(sdk, params))
    .onRequest("session/archive", async ({ params, client }) => {
      const session = store.sessions.get(params.sessionId);
      if (session === undefined) {
        if (broken("unknown-id-succeeds") && !store.deleted.has(params.sessionId)) return {};
        if (broken("archive-of-deleted-succeeds") && store.deleted.has(params.sessionId)) return {};
        throw notFound(sdk, params.sessionId);
      }
      if (session.archived && broken("archive-not-idempotent"))
        throw sdk.RequestError.invalidParams({ sessionId: session.id }, "already archived");
      const entry = open.get(session.id);
      if (entry !== undefined) {
        // Tell the client while it has the session open, then close it as session/close would.
        if (!broken("no-archived-update")) await update(client, session.id, { sessionUpdate: "session_info_update", archived: true });
        if (broken("archive-keeps-turn")) open.delete(session.id);
        else await closeSession(session.id);
      }
      session.archived = true;
      if (broken("archive-drops-history")) session.history = [];
      store.save();
      return {};
    })
    .onRequest("session/unarchive", ({ params }) => {
      const session = store.sessions.get(params.sessionId);
      if (session === undefined) {
        if (broken("unknown-id-succeeds") && !store.deleted.has(params.sessionId)) return {};
        throw notFound(sdk, params.sessionId);
      }
      session.archived = false;
      store.save();
      if (broken("unarchive-resumes") && !open.has(session.id)) open.set(session.id, { turn: null });
      return {};
    })
    .onRequest("session/delete", async ({ params }) => {
      const session = store.sessions.get(params.sessionId);
      if (session === undefined) return {}; // already not listed
      if (session.archived && broken("delete-keeps-archived")) return {};
      await closeSession(session.id);
      store.sessions.delete(session.id);
      store.deleted.add(session.id);
      store.save();
      return {};
    })
    .onRequest("session/resume", ({ params }) => {
      reopen(sdk, params.sessionId);
      return {};
    })
    .onRequest("session/close", async ({ params }) => {
      known(sdk, params.sessionId);
      await closeSession(params.sessionId);
      return {};
    })
    .onNotification("session/cancel", ({ params }) => open.get(params.sessionId)?.turn?.controller.abort());
}

function reopen(sdk, sessionId) {
  const session = known(sdk, sessionId);
  if (broken("load-unarchives") && session.archived) {
    session.archived = false;
    store.save();
  }
  if (!open.has(sessionId)) open.set(sessionId, { turn: null });
  return session;
}

function usable(sdk, sessionId) {
  const entry = open.get(sessionId);
  if (entry === undefined) {
    known(sdk, sessionId);
    throw sdk.RequestError.invalidParams({ sessionId }, "the session is not open: resume it first");
  }
  if (entry.turn) throw sdk.RequestError.invalidParams({ sessionId }, "a turn is already running");
  return [store.sessions.get(sessionId), entry];
}

const text = (prompt) => prompt.filter((b) => b.type === "text").map((b) => b.text).join("");
const info = { name: "acp-archive-test-agent", version: "0.0.0" };

const agentV1 = common(v1, v1.agent({ name: info.name }))
  .onRequest("initialize", () => {
    const sessionCapabilities = { list: {}, delete: {}, archive: {}, resume: {}, close: {} };
    if (broken("capability-without-list")) delete sessionCapabilities.list;
    return { protocolVersion: 1, agentInfo: info, agentCapabilities: { loadSession: true, sessionCapabilities } };
  })
  .onRequest("session/load", async ({ params, client }) => {
    const session = reopen(v1, params.sessionId);
    for (const message of session.history) {
      const kind = message.role === "user" ? "user_message_chunk" : "agent_message_chunk";
      await update(client, session.id, { sessionUpdate: kind, content: { type: "text", text: message.text } });
    }
    return {};
  })
  .onRequest("session/prompt", async ({ params, client }) => {
    const [session, entry] = usable(v1, params.sessionId);
    const chunk = (t) => ({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: t } });
    return { stopReason: await turn(client, session, entry, text(params.prompt), chunk) };
  });

// v2: the prompt's response only acknowledges it; the turn runs on and ends with an idle
// state_update carrying the stop reason.
let messages = 0;
const agentV2 = common(v2, v2.agent({ name: info.name }))
  .onRequest("initialize", () => ({
    protocolVersion: 2,
    info,
    capabilities: { session: { archive: {}, delete: {} } },
  }))
  .onRequest("session/prompt", ({ params, client }) => {
    const [session, entry] = usable(v2, params.sessionId);
    const messageId = `msg_${++messages}`;
    const chunk = (t) => ({ sessionUpdate: "agent_message_chunk", messageId, content: { type: "text", text: t } });
    setImmediate(async () => {
      await update(client, session.id, { sessionUpdate: "state_update", state: "running" });
      const stopReason = await turn(client, session, entry, text(params.prompt), chunk);
      await update(client, session.id, { sessionUpdate: "state_update", state: "idle", stopReason });
    });
    return { messageId };
  });

const stream = v1.ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin));
const connection = v2.agentProtocolRouter().withV1(agentV1).withV2(agentV2).connect(stream);
await connection.closed;
process.exit(0);
