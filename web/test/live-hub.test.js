// The live hub (src/live/hub.ts) against a fake EventSource and a fake
// clock: one stream for the union of the pages' topics, reopened after
// the last event when the union changes or the stream drops, each write
// told once to the pages that follow it, and a stop when the stream is
// refused. Bundled and run by internal/web/bundle's TestLiveHub (node
// --test); node runs no TypeScript itself.
import { afterEach, beforeEach, mock, test } from "node:test";
import assert from "node:assert/strict";
import { Hub, validTopic } from "../src/live/hub";

let opened = [];

class FakeSource extends EventTarget {
  static CONNECTING = 0;
  static OPEN = 1;
  static CLOSED = 2;
  constructor(topics, after) {
    super();
    this.topics = topics;
    this.after = after;
    this.readyState = FakeSource.CONNECTING;
    opened.push(this);
  }
  close() {
    this.readyState = FakeSource.CLOSED;
  }
  get open() {
    return this.readyState !== FakeSource.CLOSED;
  }
  send(type, data, id = "") {
    this.readyState = FakeSource.OPEN;
    this.dispatchEvent(new MessageEvent(type, { data: JSON.stringify(data), lastEventId: id }));
  }
  ready(cursor = "") {
    this.send("ready", { cursor, topics: this.topics });
  }
  write(topic, cursor, version = 1) {
    this.send("write", { topic, note_id: topic.slice(5), cursor, kind: "tab_edited", version, changed: ["markdown"], actor: { kind: "token", id: "tok_1", name: "Claude" } }, cursor);
  }
  // fail is the connection lost (the browser would reconnect) or, refused,
  // an answer that is not the stream.
  fail(refused) {
    this.readyState = refused ? FakeSource.CLOSED : FakeSource.CONNECTING;
    this.dispatchEvent(new Event("error"));
  }
}

function page() {
  const got = [];
  return { got, post: (m) => got.push(m), of: (t) => got.filter((m) => m.t === t) };
}

let hub;
beforeEach(() => {
  opened = [];
  globalThis.EventSource = FakeSource;
  mock.timers.enable({ apis: ["setTimeout", "setInterval", "Date"] });
  hub = new Hub((topics, after) => new FakeSource(topics, after), () => Date.now());
});
afterEach(() => {
  hub.close();
  mock.timers.reset();
});

const open = () => opened.filter((s) => s.open);
const last = () => opened[opened.length - 1];

test("one stream for the union of the pages' topics, reopened after the last event when it grows", () => {
  const a = page(), b = page();
  hub.hello("a", a, ["note:n1", "proposals"]);
  hub.hello("b", b, ["note:n1", "note:n2"]);
  assert.equal(opened.length, 0, "the stream waits for a burst of hellos");
  mock.timers.tick(50);
  assert.equal(opened.length, 1);
  assert.deepEqual(last().topics, ["note:n1", "note:n2", "proposals"]);
  assert.equal(last().after, "");
  last().ready("e:10");
  assert.deepEqual(a.of("state").at(-1), { t: "state", state: "live", reason: "" });
  last().write("note:n2", "e:11");
  assert.equal(a.of("write").length, 0, "a page hears only its topics");
  assert.equal(b.of("write").length, 1);
  assert.equal(b.of("write")[0].cursor, "e:11");

  hub.hello("a", a, ["note:n1", "note:n3", "proposals"]);
  mock.timers.tick(50);
  assert.equal(open().length, 1, "the old stream is closed before the new opens");
  assert.deepEqual(last().topics, ["note:n1", "note:n2", "note:n3", "proposals"]);
  assert.equal(last().after, "e:11", "the new stream goes on after the last event heard");
  // The new stream sends e:11 again: the page hears it once.
  last().ready("e:11");
  last().write("note:n2", "e:11");
  last().write("note:n2", "e:12");
  assert.deepEqual(b.of("write").map((m) => m.cursor), ["e:11", "e:12"]);
});

test("a stream started from now resumes from its ready cursor", () => {
  hub.hello("a", page(), ["note:n1"]);
  mock.timers.tick(50);
  last().ready("e:7");
  hub.hello("b", page(), ["note:n2"]);
  mock.timers.tick(50);
  assert.equal(last().after, "e:7");
});

test("a page that goes: its topics leave the stream later, the last page's at once", () => {
  const a = page(), b = page();
  hub.hello("a", a, ["note:n1"]);
  hub.hello("b", b, ["note:n2"]);
  mock.timers.tick(50);
  last().ready("e:1");
  hub.bye("b");
  mock.timers.tick(1999);
  assert.deepEqual(open()[0].topics, ["note:n1", "note:n2"], "a topic nobody follows stays a while");
  mock.timers.tick(1);
  assert.deepEqual(open()[0].topics, ["note:n1"]);
  hub.bye("a");
  mock.timers.tick(0);
  assert.equal(open().length, 0, "no page: no stream");
  assert.deepEqual(hub.counts(), { pages: 0, streams: 0, topics: 0 });
});

test("the next page of a tab within the wait reopens the stream once", () => {
  hub.hello("a", page(), ["note:n1", "proposals"]);
  mock.timers.tick(50);
  last().ready("e:1");
  hub.hello("b", page(), ["proposals"]);
  hub.bye("a");
  mock.timers.tick(100);
  hub.hello("c", page(), ["note:n2", "proposals"]);
  mock.timers.tick(50);
  assert.equal(opened.length, 2);
  assert.deepEqual(last().topics, ["note:n2", "proposals"]);
});

test("the pending count: told when it changes, and at once to a page that comes later", () => {
  const a = page();
  hub.hello("a", a, ["proposals"]);
  mock.timers.tick(50);
  last().ready("");
  last().send("proposals", { pending: 2 });
  last().send("proposals", { pending: 2 });
  last().send("proposals", { pending: 3 });
  assert.deepEqual(a.of("proposals").map((m) => m.pending), [2, 3]);
  const b = page();
  hub.hello("b", b, ["proposals"]);
  assert.deepEqual(b.of("proposals"), [{ t: "proposals", pending: 3 }]);
  assert.equal(opened.length, 1, "a topic the stream has already opens nothing");
});

test("a gone topic is told, left out of the stream, and told to a page that follows it later", () => {
  const a = page();
  hub.hello("a", a, ["note:n1", "note:n2"]);
  mock.timers.tick(50);
  last().ready("e:1");
  last().send("gone", { topic: "note:n2", reason: "Note n2 was deleted", deleted: true });
  assert.deepEqual(a.of("gone"), [{ t: "gone", topic: "note:n2", reason: "Note n2 was deleted", deleted: true }]);
  mock.timers.tick(2000);
  assert.deepEqual(last().topics, ["note:n1"]);
  const b = page();
  hub.hello("b", b, ["note:n2"]);
  assert.equal(b.of("gone").length, 1);
});

test("resync is told to the topic's pages", () => {
  const a = page(), b = page();
  hub.hello("a", a, ["note:n1"]);
  hub.hello("b", b, ["note:n2"]);
  mock.timers.tick(50);
  last().send("resync", { topic: "note:n1", reason: "fell behind" });
  assert.deepEqual(a.of("resync"), [{ t: "resync", topic: "note:n1", reason: "fell behind" }]);
  assert.equal(b.of("resync").length, 0);
});

test("a dropped stream is opened again after a second, after the last event", () => {
  const a = page();
  hub.hello("a", a, ["note:n1"]);
  mock.timers.tick(50);
  last().ready("e:1");
  last().write("note:n1", "e:2");
  last().fail(false);
  assert.equal(open().length, 0, "the hub reconnects, not the browser");
  assert.equal(a.of("state").at(-1).state, "connecting");
  mock.timers.tick(999);
  assert.equal(opened.length, 1);
  mock.timers.tick(1);
  assert.equal(opened.length, 2);
  assert.equal(last().after, "e:2");
  last().ready("e:2");
  assert.equal(a.of("state").at(-1).state, "live");
});

test("an end is followed by a stream opened at once; refused, the hub stops with the end's reason", () => {
  const a = page();
  hub.hello("a", a, ["note:n1"]);
  mock.timers.tick(50);
  last().ready("e:1");
  last().write("note:n1", "e:5");
  last().send("end", { reason: "the stream's lifetime is over: reconnect" });
  assert.equal(opened.length, 2);
  assert.equal(last().after, "e:5");
  last().ready("e:5");
  last().send("end", { reason: "signed out: sign in again to follow live changes" });
  last().fail(true);
  assert.deepEqual(a.of("state").at(-1), { t: "state", state: "stopped", reason: "signed out: sign in again to follow live changes" });
  mock.timers.tick(60_000);
  assert.equal(opened.length, 3, "stopped, the hub opens nothing by itself");
  // A page that comes tries again.
  hub.hello("b", page(), ["note:n1"]);
  assert.equal(a.of("state").at(-1).state, "connecting");
  mock.timers.tick(50);
  assert.equal(opened.length, 4);
  assert.equal(last().after, "e:5");
});

test("refused three times in a row without an end, the hub stops", () => {
  const a = page();
  hub.hello("a", a, ["proposals"]);
  mock.timers.tick(50);
  last().fail(true);
  mock.timers.tick(1000);
  last().fail(true);
  mock.timers.tick(3000);
  assert.equal(opened.length, 3);
  last().fail(true);
  assert.deepEqual(a.of("state").at(-1), { t: "state", state: "stopped", reason: "" });
});

test("a topic the server would refuse is not sent: the page is told it is gone", () => {
  assert.ok(validTopic("note:note_abc") && validTopic("proposals") && validTopic("note:with space"));
  for (const bad of ["note:", "nope", "note:a\u0000b", "note:a\u202eb", "note:\ud800", "note:" + "x".repeat(201), "Proposals"]) assert.ok(!validTopic(bad), bad);
  const a = page();
  hub.hello("a", a, ["note:ok", "note:bad\u0007", "room:r1"]);
  mock.timers.tick(50);
  assert.deepEqual(last().topics, ["note:ok"]);
  assert.deepEqual(a.of("gone").map((m) => m.topic), ["note:bad\u0007"]);
});

test("more than 50 topics: a second stream, each resuming after its own last event", () => {
  const topics = Array.from({ length: 60 }, (_, i) => `note:n${String(i).padStart(2, "0")}`);
  hub.hello("a", page(), topics);
  mock.timers.tick(50);
  assert.equal(open().length, 2);
  assert.deepEqual([open()[0].topics.length, open()[1].topics.length], [50, 10]);
  const [s1, s2] = open();
  s1.ready("e:1");
  s2.ready("e:1");
  s1.write("note:n00", "e:2");
  s2.write("note:n55", "e:3");
  hub.hello("a", page(), [...topics, "note:n99"]);
  mock.timers.tick(50);
  assert.deepEqual(open().map((s) => s.after), ["e:2", "e:3"]);
});

test("a page not heard from is dropped; its next ping is asked who it is", () => {
  const a = page(), b = page();
  hub.hello("a", a, ["note:n1"]);
  hub.hello("b", b, ["note:n2"]);
  mock.timers.tick(50);
  for (let t = 0; t < 160_000; t += 20_000) {
    hub.ping("a", a);
    mock.timers.tick(20_000);
  }
  mock.timers.tick(2000);
  assert.deepEqual(open()[0].topics, ["note:n1"], "the silent page's topic left the stream");
  hub.ping("b", b);
  assert.deepEqual(b.got.at(-1), { t: "who" });
});

test("messages from a port are checked", () => {
  const a = page();
  assert.equal(hub.receive(null, a), "");
  assert.equal(hub.receive({ t: "hello", client: "", topics: [] }, a), "");
  assert.equal(hub.receive({ t: "hello", client: "x".repeat(65), topics: [] }, a), "");
  assert.equal(hub.receive({ t: "hello", client: "a", topics: ["note:n1", 7, null] }, a), "a");
  mock.timers.tick(50);
  assert.deepEqual(last().topics, ["note:n1"]);
  assert.equal(hub.receive({ t: "bye", client: "a" }, a), "a");
  mock.timers.tick(0);
  assert.equal(open().length, 0);
});

test("idle closes the streams at once; the next hello opens them after the last event", () => {
  hub.hello("a", page(), ["note:n1"]);
  mock.timers.tick(50);
  last().ready("e:4");
  hub.bye("a");
  hub.idle();
  assert.equal(open().length, 0);
  hub.hello("a", page(), ["note:n1"]);
  mock.timers.tick(50);
  assert.equal(last().after, "e:4");
});

test("presence is told to the pages that follow its Note, each time, and the newest to a page that follows it later", () => {
  const a = page(), b = page();
  hub.hello("a", a, ["note:n1"]);
  hub.hello("b", b, ["note:n2"]);
  mock.timers.tick(50);
  last().ready("e:1");
  const peers = (name) => ({ topic: "note:n1", note_id: "n1", peers: [{ client_id: "p-1", person: { id: "u1", name }, color: "#aa3300", tab_id: "markdown", rev: 3 }] });
  last().send("presence", peers("Ana"));
  last().send("presence", peers("Bea"));
  assert.deepEqual(a.of("presence").map((m) => JSON.parse(m.data).peers[0].person.name), ["Ana", "Bea"], "every presence, though it has no cursor");
  assert.equal(b.of("presence").length, 0, "only to the pages that follow the Note");
  hub.hello("b", b, ["note:n1", "note:n2"]);
  assert.deepEqual(b.of("presence").map((m) => JSON.parse(m.data).peers[0].person.name), ["Bea"], "a page that follows it later hears the newest at once");
});
