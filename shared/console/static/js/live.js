// Live build events: a small Socket.IO v4 client (Engine.IO 4 over the browser's WebSocket, the
// only transport kiln asks for) of this server's /socket.io/. It connects with the console's
// token, joins builds and hands their build:log and build:status events to the page, in order.
// A dropped socket connects again and joins each build again from the last line it delivered
// (fromSeq), so no line is lost or repeated. When the socket cannot connect at all, or drops and
// cannot connect again, onDown tells the page, which polls the API instead.
//
// The protocol: docs/api.md ("Live build events"); Engine.IO 4 and Socket.IO 5 packets are text:
// '0' open, '2' ping, '3' pong, '4' + a Socket.IO packet ('0' connect, '1' disconnect, '2' event,
// '3' ack, '4' connect error).
import {token} from './api.js';

const RETRIES = 4;     // connects tried in a row after a drop before giving up
const FIRST_WAIT = 500; // ms before the first of them; doubled each time

// liveSocket opens a socket. onDown(reason) is called once, when the socket is given up for good.
export function liveSocket({onDown} = {}) {
  const rooms = new Map(); // buildId → {from, status, on}
  let ws = null, connected = false, everConnected = false, closed = false, down = false;
  let failures = 0, watchdog = null, retry = null, nextAck = 0;
  const acks = new Map();

  function url() {
    return (location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + '/socket.io/?EIO=4&transport=websocket';
  }

  function connect() {
    connected = false;
    try { ws = new WebSocket(url()); } catch (e) { return dropped(e.message); }
    ws.onmessage = (ev) => receive(String(ev.data));
    ws.onclose = () => dropped('the socket closed');
  }

  function receive(msg) {
    const type = msg[0], rest = msg.slice(1);
    if (type === '0') { // Engine.IO open: the ping timing, then Socket.IO's CONNECT with the token
      const hs = parse(rest) || {};
      alive((hs.pingInterval + hs.pingTimeout) || 45000);
      ws.send('40' + JSON.stringify({token: token.get() || ''}));
      return;
    }
    if (type === '2') { alive(); ws.send('3' + rest); return; }
    if (type !== '4') return;
    alive();
    const kind = rest[0];
    let data = rest.slice(1);
    if (kind === '0') { // connected: join every build again from where it was
      connected = everConnected = true;
      failures = 0;
      for (const [id, room] of rooms) send(id, room);
    } else if (kind === '4') { // connect_error: the token no longer connects; polling says why
      const e = parse(data);
      giveUp((e && e.message) || 'connect refused');
    } else if (kind === '1') {
      giveUp('the server disconnected the socket');
    } else if (kind === '3') {
      const m = /^(\d+)(.*)$/.exec(data);
      if (!m) return;
      const answer = acks.get(Number(m[1]));
      acks.delete(Number(m[1]));
      if (answer) answer((parse(m[2]) || [])[0] || {});
    } else if (kind === '2') {
      data = data.replace(/^\d+/, '');
      const ev = parse(data);
      if (Array.isArray(ev)) event(ev[0], ev[1] || {});
    }
  }

  function event(name, d) {
    const room = rooms.get(d.buildId);
    if (!room) return;
    if (name === 'build:log') {
      if (!room.on.log) return; // a room joined for its status alone (joined again without fromSeq)
      if (room.from !== null && d.seq <= room.from) return; // a replay overlapping what came before
      room.from = d.seq;
      room.on.log && room.on.log(d);
    } else if (name === 'build:status') {
      if (d.status === room.status) return;
      room.status = d.status;
      room.on.status && room.on.status(d);
    } else if (name === 'build:error') {
      rooms.delete(d.buildId);
      room.on.refused && room.on.refused(d);
    }
  }

  // send joins a build with an acknowledgement; a refusal goes to the room's refused.
  function send(id, room) {
    const req = {buildId: id};
    if (room.from !== null) req.fromSeq = room.from;
    const n = nextAck++;
    acks.set(n, (answer) => {
      if (answer.ok || rooms.get(id) !== room) return;
      rooms.delete(id);
      room.on.refused && room.on.refused({buildId: id, error: answer.error, message: answer.message});
    });
    ws.send('42' + n + JSON.stringify(['join:build', req]));
  }

  // alive notes the server was heard: a socket silent for longer than the ping interval and
  // timeout is taken for dead and closed (and connected again).
  let silence = 45000;
  function alive(ms) {
    if (ms) silence = ms;
    clearTimeout(watchdog);
    watchdog = setTimeout(() => ws && ws.close(), silence);
  }

  function dropped(reason) {
    clearTimeout(watchdog);
    acks.clear();
    if (ws) { ws.onclose = null; ws.onmessage = null; }
    ws = null;
    connected = false;
    if (closed || down) return;
    // Never connected (no socket there, or a proxy that does not pass it): poll at once.
    if (!everConnected || failures >= RETRIES) return giveUp(reason);
    retry = setTimeout(connect, FIRST_WAIT * 2 ** failures);
    failures++;
  }

  function giveUp(reason) {
    if (down) return;
    down = true;
    close();
    onDown && onDown(reason);
  }

  function close() {
    closed = true;
    clearTimeout(watchdog);
    clearTimeout(retry);
    if (ws) {
      const s = ws;
      ws.onclose = null;
      if (s.readyState === WebSocket.OPEN) s.send('41');
      s.close();
    }
    ws = null;
    rooms.clear();
  }

  connect();
  return {
    // join watches a build: its lines after fromSeq (null: only those written from now), then
    // its status, then every line and change. on: {log(line), status(s), refused(err)}.
    join(buildId, fromSeq, on) {
      const room = {from: fromSeq, status: null, on};
      rooms.set(buildId, room);
      if (connected) send(buildId, room);
    },
    leave(buildId) {
      if (!rooms.delete(buildId) || !connected) return;
      ws.send('42' + JSON.stringify(['leave:build', {buildId}]));
    },
    has: (buildId) => rooms.has(buildId),
    joined: () => rooms.keys(),
    get down() { return down; },
    close,
  };
}

function parse(s) {
  try { return JSON.parse(s); } catch { return null; }
}

// Whether an ended build's log is whole, as the API's log pages judge it (GET /builds/:id/logs
// with nextCursor null): it completed, or its last line says why it ended, or it ended more than
// SETTLE_MS ago (its runner's last lines may come just after the status).
export const SETTLE_MS = 30000;
export function logWhole(status, lastMessage, finishedAt) {
  if (status === 'complete') return true;
  if (/^kiln: build (failed|superseded): /.test(lastMessage || '')) return true;
  return !!finishedAt && Date.now() - Date.parse(finishedAt) > SETTLE_MS;
}
