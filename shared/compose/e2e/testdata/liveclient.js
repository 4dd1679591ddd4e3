// liveclient.js drives the stock socket.io-client for kiln's Go tests: it reads commands, one
// JSON object per line, on stdin, and writes what its sockets hear, one JSON object per line, on
// stdout. Usage: node liveclient.js <path of the socket.io-client package>
//
// Commands ({op, name, ...}; name picks the socket, "" by default):
//   connect {url, token, reconnection, rejoin}: io(url, {transports: ["websocket"], auth: {token}})
//     rejoin: on every reconnect, join again the builds it joined, from the last seq it got
//     (what a client that must miss nothing does).
//   join {buildId, fromSeq, ack}   leave {buildId, ack}   emit {event, args, ack}
//   drop: close the transport under the socket (it reconnects by itself)
//   close: socket.disconnect()      exit
//   counts: how many build:log events each socket heard ({ev: "counts", data: {name: n}});
//     a socket connected with quiet: true counts its build:log events without writing them.
// Output ({name, ev, ...}): connect {id}, connect_error {message, data}, disconnect {reason},
// ack {op, buildId, res}, and every server event as {ev, data}.
"use strict";
const path = require("path");
const readline = require("readline");
const { io } = require(path.dirname(process.argv[2]));

const sockets = new Map();
const counts = {};
const out = (o) => process.stdout.write(JSON.stringify(o) + "\n");

function connect(c) {
  const name = c.name || "";
  const state = { rooms: new Map() }; // buildId -> last seq seen
  const socket = io(c.url, {
    transports: ["websocket"],
    auth: c.token === undefined ? undefined : { token: c.token },
    reconnection: !!c.reconnection,
    reconnectionDelay: 100,
    reconnectionDelayMax: 500,
    forceNew: true,
  });
  sockets.set(name, { socket, state });
  socket.on("connect", () => {
    out({ name, ev: "connect", id: socket.id, recovered: socket.recovered });
    if (c.rejoin) {
      for (const [buildId, seq] of state.rooms) {
        socket.emit("join:build", { buildId, fromSeq: seq });
      }
    }
  });
  socket.on("connect_error", (err) => out({ name, ev: "connect_error", message: err.message, data: err.data }));
  socket.on("disconnect", (reason) => out({ name, ev: "disconnect", reason }));
  counts[name] = 0;
  socket.onAny((ev, data) => {
    if (ev === "build:log" && state.rooms.has(data.buildId)) {
      state.rooms.set(data.buildId, Math.max(state.rooms.get(data.buildId), data.seq));
    }
    if (ev === "build:log") counts[name]++;
    if (c.quiet && ev === "build:log") return;
    out({ name, ev, data, at: Date.now() });
  });
}

function run(c) {
  const name = c.name || "";
  if (c.op === "connect") return connect(c);
  if (c.op === "counts") return out({ ev: "counts", data: counts });
  if (c.op === "exit") {
    for (const { socket } of sockets.values()) socket.disconnect();
    process.exit(0);
  }
  const s = sockets.get(name);
  if (!s) return out({ name, ev: "driver_error", message: "no socket " + name });
  const { socket, state } = s;
  const withAck = (op, buildId, event, arg) => {
    if (c.ack) socket.emit(event, arg, (res) => out({ name, ev: "ack", op, buildId, res }));
    else socket.emit(event, arg);
  };
  switch (c.op) {
    case "join": {
      const arg = { buildId: c.buildId };
      if (c.fromSeq !== undefined && c.fromSeq !== null) arg.fromSeq = c.fromSeq;
      state.rooms.set(c.buildId, c.fromSeq || 0);
      return withAck("join", c.buildId, "join:build", arg);
    }
    case "leave":
      state.rooms.delete(c.buildId);
      return withAck("leave", c.buildId, "leave:build", { buildId: c.buildId });
    case "emit":
      return withAck("emit", "", c.event, c.args);
    case "drop":
      return socket.io.engine.close();
    case "close":
      return socket.disconnect();
  }
  out({ name, ev: "driver_error", message: "unknown op " + c.op });
}

readline.createInterface({ input: process.stdin }).on("line", (line) => {
  if (!line.trim()) return;
  try {
    run(JSON.parse(line));
  } catch (e) {
    out({ ev: "driver_error", message: String(e) });
  }
});
process.stdin.on("end", () => process.exit(0));
