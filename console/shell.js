// The terminal page of enableWebAccess: a replica's shell over a WebSocket to the
// daemon's `{job}:shell` (api/shell_bridge.h), drawn by xterm.js. The first message
// carries the tab's token (a browser puts no Authorization header on a WebSocket);
// then keystrokes go out as binary messages, the terminal's bytes come back as binary
// messages, and text messages are the daemon's: an error, the end, or (ours) a resize.
'use strict';

const TOKEN_KEY = 'trainyard.token';  // The console's: one token per tab.
// What the hash may name: a job's shell on this daemon, nothing else.
const SHELL_PATH = /^\/v1\/projects\/[^/?#]+\/(?:locations\/[^/?#]+\/customJobs|jobs)\/[^/?#:]+:shell\?replica=[A-Za-z0-9_-]+$/;
const FONT_SIZE = 14;
const FONT = 'ui-monospace, Menlo, Consolas, monospace';

function setState(text, isError) {
  const state = document.getElementById('shell-state');
  state.textContent = text;
  state.className = isError ? 'error' : '';
}

// One character cell of the terminal's font, measured.
function cellSize() {
  const probe = document.createElement('span');
  probe.style.font = `${FONT_SIZE}px ${FONT}`;
  probe.style.position = 'absolute';
  probe.style.visibility = 'hidden';
  probe.textContent = 'W'.repeat(100);
  document.body.append(probe);
  const size = { width: probe.getBoundingClientRect().width / 100, height: probe.getBoundingClientRect().height };
  probe.remove();
  return size;
}

function fit(term) {
  const box = document.getElementById('terminal').getBoundingClientRect();
  const cell = cellSize();
  const cols = Math.max(20, Math.min(1000, Math.floor((box.width - 8) / cell.width)));
  const rows = Math.max(5, Math.min(500, Math.floor((box.height - 8) / (cell.height * 1.05))));
  if (cols !== term.cols || rows !== term.rows) term.resize(cols, rows);
}

function askForToken(why) {
  const form = document.getElementById('token-form');
  form.hidden = false;
  setState(why, true);
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    sessionStorage.setItem(TOKEN_KEY, document.getElementById('token').value.trim());
    location.reload();
  }, { once: true });
}

function connect(path) {
  const term = new Terminal({ cursorBlink: true, fontSize: FONT_SIZE, fontFamily: FONT, scrollback: 5000 });
  window.shellTerminal = term;  // For the browser tests: what the terminal shows.
  term.open(document.getElementById('terminal'));
  fit(term);
  const ws = new WebSocket((location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + path);
  ws.binaryType = 'arraybuffer';
  const encoder = new TextEncoder();
  const sendSize = () => {
    if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify({ resize: { rows: term.rows, cols: term.cols } }));
  };
  let attached = false;
  ws.onopen = () => {
    ws.send(JSON.stringify({ token: sessionStorage.getItem(TOKEN_KEY) || '' }));
    setState('opening the shell…');
  };
  ws.onmessage = (ev) => {
    if (typeof ev.data === 'string') {
      const said = JSON.parse(ev.data);
      if (said.error) {
        if (said.error.code === 401) askForToken(said.error.message);
        else setState(said.error.message, true);
      } else if (said.closed) {
        setState(said.closed);
      }
      return;
    }
    if (!attached) {
      attached = true;
      setState('connected');
      sendSize();
      term.focus();
    }
    term.write(new Uint8Array(ev.data));
  };
  ws.onclose = () => {
    const state = document.getElementById('shell-state');
    if (state.className !== 'error' && attached) setState(state.textContent === 'connected' ? 'closed' : state.textContent);
    else if (!attached && state.className !== 'error') setState('closed before the shell opened', true);
    document.body.dataset.closed = 'true';
  };
  term.onData((data) => { if (ws.readyState === WebSocket.OPEN) ws.send(encoder.encode(data)); });
  term.onResize(sendSize);
  window.addEventListener('resize', () => fit(term));
}

function start() {
  const path = location.hash.replace(/^#/, '');
  if (!SHELL_PATH.test(path)) {
    setState('This page opens a job replica\'s shell: follow a link from the job\'s page.', true);
    return;
  }
  document.getElementById('where').textContent = path.replace(/^\/v1\//, '').replace(':shell?replica=', ' · ');
  connect(path);
}

start();
