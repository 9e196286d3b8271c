// A client on the official ACP TypeScript SDK that drives an archive agent through the RFD's
// surface, checking each answer; for the tests, against examples/archive_agent.
//
//   node client.mjs --protocol 1|2 --cwd DIR -- AGENT COMMAND...
//
// The agent must list 2 sessions a page (so that every filter is followed across pages)
// and run a turn for N seconds when a prompt starts with "/delay N". Prints what it saw as
// one JSON object; exits non-zero at the first answer that breaks the RFD.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import { parseArgs } from "node:util";

const { values: args, positionals: command } = parseArgs({
  options: { protocol: { type: "string" }, cwd: { type: "string" } },
  allowPositionals: true,
});
const version = Number(args.protocol);
const sdk = await import(
  version === 1 ? "@agentclientprotocol/sdk/unstable" : "@agentclientprotocol/sdk/experimental/v2/unstable"
);
const cwd = args.cwd;

const child = spawn(command[0], command.slice(1), { stdio: ["pipe", "pipe", "inherit"] });
const stream = sdk.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));

// Everything in arrival order: notifications from the handler, answers as they resolve.
// SDK 2.4.0's SessionInfoUpdate has no `archived` (its schemas predate that part of the
// RFD), and a typed `session/update` handler gets the update parsed with it dropped; the
// raw fallback handler sees the notification as the agent sent it.
const events = [];
const seen = { initialize: null, filters: {}, errors: {}, events };
const app = sdk.client({ name: "acp-codegen-ts-client" }).onNotification("*", ({ method, params }) => {
  if (method === "session/update") events.push({ update: params });
});

async function listAll(ctx, archived) {
  const params = { cwd };
  if (archived !== undefined) params.archived = archived;
  const ids = {};
  let pages = 0;
  for (;;) {
    const page = await ctx.request("session/list", params);
    pages += 1;
    for (const info of page.sessions) {
      assert.equal(ids[info.sessionId], undefined, `${info.sessionId} listed twice`);
      assert.equal(typeof info.archived, "boolean", "every listed session carries archived");
      ids[info.sessionId] = info.archived;
    }
    if (page.nextCursor == null) return { ids, pages };
    params.cursor = page.nextCursor;
  }
}

async function errorCode(promise) {
  try {
    await promise;
  } catch (error) {
    return error.code;
  }
  return null;
}

async function waitFor(found, ms = 10000) {
  for (const end = Date.now() + ms; Date.now() < end; await new Promise((resolve) => setTimeout(resolve, 10))) {
    const value = found();
    if (value) return value;
  }
  assert.fail(`waited ${ms / 1000}s in vain`);
}

const updatesAbout = (sessionId, kind) =>
  events.filter((e) => e.update?.sessionId === sessionId && e.update.update.sessionUpdate === kind);

await app.connectWith(stream, async (ctx) => {
  // initialize, with this version's request shape; the archive capability where it belongs.
  const init = await ctx.request(
    "initialize",
    version === 1
      ? { protocolVersion: 1, clientCapabilities: {}, clientInfo: { name: "ts-client", version: "0" } }
      : { protocolVersion: 2, capabilities: {}, info: { name: "ts-client", version: "0" } },
  );
  assert.equal(init.protocolVersion, version);
  if (version === 1) {
    assert.deepEqual(init.agentCapabilities.sessionCapabilities.archive, {});
    assert.deepEqual(init.agentCapabilities.sessionCapabilities.list, {});
  } else assert.deepEqual(init.capabilities.session.archive, {});
  seen.initialize = init;

  // session/new, three times: more than one page of two.
  const ids = [];
  for (let i = 0; i < 3; i++) ids.push((await ctx.request("session/new", { cwd, mcpServers: [] })).sessionId);
  seen.sessions = ids;

  // Archive one while a turn runs: an archived: true update, and the turn ends cancelled.
  // (Which of the update and the archive result came first is the kit's check, on the wire:
  // the v2 SDK gives session updates no order relative to responses.)
  const [busy, other, third] = ids;
  const turn = ctx.request("session/prompt", { sessionId: busy, prompt: [{ type: "text", text: "/delay 30 busy" }] });
  if (version === 2) assert.equal(typeof (await turn).messageId, "string"); // v2 acknowledges at once
  await ctx.request("session/archive", { sessionId: busy });
  if (version === 1) assert.equal((await turn).stopReason, "cancelled");
  else {
    const idle = await waitFor(() => updatesAbout(busy, "state_update").find((e) => e.update.update.state === "idle"));
    assert.equal(idle.update.update.stopReason, "cancelled");
  }
  const archivedUpdates = updatesAbout(busy, "session_info_update").filter((e) => e.update.update.archived === true);
  assert.equal(archivedUpdates.length, 1, "one session_info_update archived: true");

  // Archive a session without a turn too, and again (idempotent).
  await ctx.request("session/archive", { sessionId: other });
  await ctx.request("session/archive", { sessionId: other });

  // session/list with each filter, following nextCursor.
  const expect = {
    omitted: { [third]: false },
    null: { [third]: false },
    exclude: { [third]: false },
    include: { [busy]: true, [other]: true, [third]: false },
    only: { [busy]: true, [other]: true },
  };
  for (const [name, value] of [["omitted", undefined], ["null", null], ["exclude", "exclude"], ["include", "include"], ["only", "only"]]) {
    const { ids: listed, pages } = await listAll(ctx, value);
    assert.deepEqual(listed, expect[name], `archived=${name}`);
    seen.filters[name] = { listed: Object.keys(listed).length, pages };
  }
  seen.errors.invalidFilter = await errorCode(ctx.request("session/list", { cwd, archived: "all" }));
  assert.equal(seen.errors.invalidFilter, -32602);

  // Unarchive: listed again, and it did not reopen the session (a prompt is refused).
  await ctx.request("session/unarchive", { sessionId: busy });
  await ctx.request("session/unarchive", { sessionId: busy });
  assert.deepEqual((await listAll(ctx, "exclude")).ids, { [busy]: false, [third]: false });
  assert.notEqual(await errorCode(ctx.request("session/prompt", { sessionId: busy, prompt: [{ type: "text", text: "hi" }] })), null);

  // Unknown ids.
  seen.errors.archiveUnknown = await errorCode(ctx.request("session/archive", { sessionId: "sess_nope" }));
  seen.errors.unarchiveUnknown = await errorCode(ctx.request("session/unarchive", { sessionId: "sess_nope" }));
  assert.equal(seen.errors.archiveUnknown, -32002);
  assert.equal(seen.errors.unarchiveUnknown, -32002);
});
child.stdin.end();
process.stdout.write(JSON.stringify(seen) + "\n");
