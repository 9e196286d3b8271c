// A protocol 2 client on the official ACP TypeScript SDK's experimental v2 API that drives an
// agent through a whole session's life, as the one-version-bridge issue lists it, and checks
// each answer; for the tests, an agent on the official Python SDK behind the polyfill, or
// adopted with base-v2.
//
//   node v2_client.mjs --cwd DIR --transcript FILE -- AGENT COMMAND...
//
// The agent is tests/agents/sdk_turn_agent.py's: "/turn" does a whole turn (thoughts,
// messages, a plan, an edit with a diff and a permission, a mode change), "/delay N" waits
// N seconds or until cancelled. Every message on the wire, both ways and in order, is
// appended to FILE as {"dir": "in"|"out", "message": ...}: the test checks each received one
// against the 2026-11 v2 schema. Whatever the SDK itself rejects or drops (a result its
// schemas refuse, a notification its handlers cannot parse: it says so on console.error)
// fails the run. Prints what it saw as one JSON object; exits non-zero at the first failed
// check.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { appendFileSync } from "node:fs";
import { Readable, Writable } from "node:stream";
import { parseArgs } from "node:util";
import * as acp from "@agentclientprotocol/sdk/experimental/v2/unstable";

const { values: args, positionals: command } = parseArgs({
  options: { cwd: { type: "string" }, transcript: { type: "string" } },
  allowPositionals: true,
});
const cwd = args.cwd;
const WAIT = 30000;

// The SDK reports what it rejects or drops on console.error: each is a failure.
const complaints = [];
const report = console.error.bind(console);
console.error = (...parts) => {
  complaints.push(parts.map((p) => (typeof p === "string" ? p : JSON.stringify(p))).join(" "));
  report(...parts);
};

// The wire, recorded between the SDK and the agent's stdio.
const wire = [];
function record(dir, message) {
  wire.push({ dir, message });
  appendFileSync(args.transcript, JSON.stringify({ dir, message }) + "\n");
}
const child = spawn(command[0], command.slice(1), { stdio: ["pipe", "pipe", "inherit"] });
const raw = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
const writer = raw.writable.getWriter();
const stream = {
  readable: raw.readable.pipeThrough(
    new TransformStream({
      transform(message, out) {
        record("in", message);
        out.enqueue(message);
      },
    }),
  ),
  writable: new WritableStream({
    write(message) {
      record("out", message);
      return writer.write(message);
    },
    close: () => writer.close(),
  }),
};

const seen = { permissions: 0, passed: [], failed: {} };
const app = acp.client({ name: "acp-codegen-ts-v2-client" }).onRequest("session/request_permission", ({ params }) => {
  seen.permissions += 1;
  assert.ok(params.title, "a permission request has a title");
  assert.equal(params.subject?.type, "tool_call", "a permission request's subject is its tool call");
  const once = params.options.find((o) => o.kind === "allow_once");
  return { outcome: { outcome: "selected", optionId: once.optionId } };
});

// The session's updates up to the next idle state: [updates, stop reason].
async function untilIdle(session) {
  const updates = [];
  for (;;) {
    const next = await session.nextUpdate(AbortSignal.timeout(WAIT));
    if (next.kind === "stop") return [updates, next.stopReason];
    updates.push(next.update);
  }
}

const isUpdate = (entry, sid, kind) =>
  entry.dir === "in" &&
  entry.message.method === "session/update" &&
  entry.message.params.sessionId === sid &&
  (kind === undefined || entry.message.params.update.sessionUpdate === kind);

// A request's response and what came in on the wire for the session before it: the order
// the schema's MUSTs speak of (the SDK itself gives updates no order relative to responses).
async function inOrder(ctx, sid, method, params) {
  const from = wire.length;
  const result = await ctx.request(method, params);
  const at = wire.findIndex((e, i) => i >= from && e.dir === "in" && "id" in e.message && !("method" in e.message));
  const before = wire.slice(from, at).filter((e) => isUpdate(e, sid)).map((e) => e.message.params.update);
  return [result, before];
}

// One scenario: its failure is recorded and the next goes on (in the same connection).
async function step(name, scenario) {
  try {
    await scenario();
    seen.passed.push(name);
  } catch (error) {
    seen.failed[name] = String(error?.stack ?? error).slice(0, 3000);
  }
}

await app.connectWith(stream, async (ctx) => {
  let session, sid, mode, userId; // (what later scenarios take from earlier ones)
  await step("initialize", async () => {
    // initialize: protocol 2, the agent's info and a session capability.
    const init = await ctx.request("initialize", {
      protocolVersion: 2,
      capabilities: {},
      info: { name: "ts-v2-client", version: "0" },
    });
    assert.equal(init.protocolVersion, 2);
    assert.ok(init.info?.name, "initialize names the agent");
    assert.ok(init.capabilities?.session, "the agent has sessions");
    seen.initialize = init;
  });

  await step("new session", async () => {
    // session/new: the modes as a config option; the agent's commands follow.
    session = await ctx.buildSession(cwd).start();
    sid = session.sessionId;
    mode = session.configOptions?.find((o) => o.category === "mode");
    assert.equal(mode?.currentValue, "ask", "the mode is a config option");
  });

  await step("turn", async () => {
    // A whole turn.
    ({ messageId: userId } = await session.prompt("/turn"));
    assert.equal(typeof userId, "string", "the prompt is acknowledged with the user message's id");
    const [turn, stop] = await untilIdle(session);
    assert.equal(stop, "end_turn");
    const kinds = turn.map((u) => u.sessionUpdate);
    for (const kind of [
      "user_message",
      "agent_thought_chunk",
      "agent_message_chunk",
      "plan_update",
      "tool_call_update",
      "config_option_update",
      "available_commands_update",
      "state_update",
    ]) {
      assert.ok(kinds.includes(kind), `the turn has ${kind}: ${kinds}`);
    }
    const users = turn.filter((u) => u.sessionUpdate.startsWith("user_message"));
    assert.deepEqual(
      users.map((u) => u.messageId),
      [userId],
      "the user's message once, under the prompt's id",
    );
    for (const chunk of turn.filter((u) => u.sessionUpdate.endsWith("_chunk"))) {
      assert.equal(typeof chunk.messageId, "string", `every chunk has a messageId: ${JSON.stringify(chunk)}`);
    }
    const states = turn.filter((u) => u.sessionUpdate === "state_update").map((u) => u.state);
    assert.equal(states[0], "running");
    assert.ok(states.includes("requires_action"), `requires_action while the permission waits: ${states}`);
    const [created] = turn.filter((u) => u.sessionUpdate === "tool_call_update");
    const [diff] = created.content;
    assert.equal(diff.type, "diff");
    assert.equal(diff.patch?.format, "git_patch");
    assert.equal(seen.permissions, 1);
    assert.equal(session.configOptions.find((o) => o.category === "mode").currentValue, "code");
    const commands = turn.find((u) => u.sessionUpdate === "available_commands_update").availableCommands;
    assert.deepEqual(commands.map((c) => c.name).sort(), ["delay", "turn"]);
    seen.turn = kinds;
  });

  await step("cancel", async () => {
    // Cancel a long turn.
    await session.prompt("/delay 30 a long turn");
    for (;;) {
      const next = await session.nextUpdate(AbortSignal.timeout(WAIT));
      assert.notEqual(next.kind, "stop", "the long turn ended before the cancel");
      if (next.update.sessionUpdate === "agent_message_chunk") break;
    }
    await ctx.notify("session/cancel", { sessionId: sid });
    const [, cancelled] = await untilIdle(session);
    assert.equal(cancelled, "cancelled");
  });

  await step("set config option", async () => {
    // Set the mode back.
    const set = await session.setConfigOption({ configId: mode.configId, type: "id", value: "ask" });
    assert.equal(set.configOptions.find((o) => o.category === "mode").currentValue, "ask");
  });

  await step("list", async () => {
    // List.
    const listed = await ctx.request("session/list", { cwd });
    assert.deepEqual(
      listed.sessions.map((s) => [s.sessionId, s.archived]),
      [[sid, false]],
    );
  });

  await step("close", async () => {
    // Close, then resume without and with replay: the state snapshot comes after any replay
    // and before the result, also without replay (ResumeSessionResponse's MUST).
    assert.deepEqual(await ctx.request("session/close", { sessionId: sid }), {});
    session.dispose();
  });

  await step("resume", async () => {
    const [resumed, before] = await inOrder(ctx, sid, "session/resume", { sessionId: sid, cwd });
    assert.equal(resumed.configOptions?.find((o) => o.category === "mode")?.currentValue, "ask");
    assert.deepEqual(
      before.map((u) => u.sessionUpdate),
      ["state_update"],
      "resume without replay: one state_update before its result",
    );
  });

  await step("resume with replay", async () => {
    const [, replay] = await inOrder(ctx, sid, "session/resume", { sessionId: sid, cwd, replayFrom: { type: "start" } });
    const replayed = replay.filter((u) => u.sessionUpdate.endsWith("_chunk"));
    assert.equal(replayed[0]?.sessionUpdate, "user_message_chunk", "the replay starts with the user's prompt");
    assert.equal(replayed[0].messageId, userId, "a replayed message keeps its id");
    assert.equal(replay.at(-1)?.sessionUpdate, "state_update", "resume with replay: the state_update after the replay");
    seen.replay = replay.map((u) => u.sessionUpdate);
  });

  await step("archive and unarchive", async () => {
    // Archive and unarchive.
    assert.deepEqual(await ctx.request("session/archive", { sessionId: sid }), {});
    const only = await ctx.request("session/list", { cwd, archived: "only" });
    assert.deepEqual(
      only.sessions.map((s) => [s.sessionId, s.archived]),
      [[sid, true]],
    );
    assert.deepEqual(await ctx.request("session/unarchive", { sessionId: sid }), {});
    const back = await ctx.request("session/list", { cwd });
    assert.deepEqual(
      back.sessions.map((s) => s.sessionId),
      [sid],
    );
  });

  await step("unknown method", async () => {
    // A method protocol 2 does not have.
    const code = await ctx.request("foo/bar", {}).then(
      () => null,
      (error) => error.code,
    );
    assert.equal(code, -32601);
  });
});
writer.releaseLock();
child.stdin.end();
await new Promise((resolve) => child.once("exit", resolve));
seen.complaints = complaints; // (what the SDK rejected or dropped)
seen.exit = child.exitCode;
process.stdout.write(JSON.stringify(seen) + "\n");
process.exitCode = Object.keys(seen.failed).length || complaints.length ? 1 : 0;
