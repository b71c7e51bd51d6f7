// lbp dev: the web view of one session. Plain JS, no build step, no dependencies.
"use strict";

const $ = (id) => document.getElementById(id);
const chat = $("chat"), timeline = $("timeline"), logs = $("logs");
let bubble = null;       // the bot message being streamed
let shownRun = null;     // the run that bubble belongs to
const MAX_ROWS = 2000;

function el(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined) node.textContent = text;
  return node;
}

function scrollDown(box) { box.scrollTop = box.scrollHeight; }

function trim(list) { while (list.children.length > MAX_ROWS) list.removeChild(list.firstChild); }

function say(cls, text) {
  const node = el("div", "msg " + cls, text);
  chat.appendChild(node);
  scrollDown(chat);
  return node;
}

// A failure in the chat: its line, and where the plugin's own code raised.
function sayFailure(text, trace) {
  const node = say("error", text);
  if (trace) node.appendChild(el("pre", "trace", trace));
  return node;
}

function pretty(value) {
  return typeof value === "string" ? value : JSON.stringify(value, null, 2);
}

function row(kind, cls, summary, detail, runId) {
  const item = el("li", "ev " + (cls || ""));
  item.dataset.kind = kind;
  if (runId) item.dataset.run = runId;
  item.appendChild(el("span", "kind", kind));
  if (detail !== undefined) {
    const details = el("details");
    details.appendChild(el("summary", "", summary));
    details.appendChild(el("pre", "", pretty(detail)));
    item.appendChild(details);
  } else {
    item.appendChild(document.createTextNode(summary));
  }
  timeline.appendChild(item);
  trim(timeline);
  scrollDown(timeline);
}

function usageText(usage) {
  if (!usage) return "";
  return Object.entries(usage).filter(([, v]) => v !== null && v !== undefined)
    .map(([k, v]) => k.replace(/_tokens$/, "") + " " + v).join(", ");
}

function setPages(pages) {
  const list = $("pages");
  list.textContent = "";
  for (const page of pages || []) {
    const link = el("a", "", (page.label && (page.label.en_US || Object.values(page.label)[0])) || page.id);
    link.href = "/pages/" + encodeURIComponent(page.id) + "/";
    link.target = "_blank";
    link.dataset.page = page.id;
    list.appendChild(link);
  }
  list.hidden = !list.children.length;
}

function setSession(info) {
  if (info.pages) setPages(info.pages);
  $("identity").textContent = info.identity || "";
  $("runner").textContent = info.runner || "none";
  $("model").textContent = info.model || "-";
  $("conversation").textContent = info.conversation_id || "-";
}

function setStatus(text, cls) {
  const node = $("status");
  node.textContent = text;
  node.className = "status " + (cls || "");
}

function streamTo(runId, text) {
  if (!bubble || shownRun !== runId) {
    bubble = say("bot streaming", "");
    shownRun = runId;
  }
  bubble.textContent = text;
  scrollDown(chat);
}

const handlers = {
  "session": (d) => setSession(d),
  "user.input": (d) => { if (d.line !== "/reset") say("user", d.line); },
  "page.call": (d) => row("page.call", d.answer && d.answer.error ? "bad" : "", d.page + ": " + d.method + " " + d.endpoint + " → " + JSON.stringify(d.answer && d.answer.error ? d.answer.error : (d.answer || {}).data), d.answer),
  "plugin.ready": (d) => { setSession(d); setStatus("running", "online"); row("plugin.ready", "", d.identity); },
  "plugin.reloaded": (d) => { setSession(d); setStatus("reloaded", "online"); row("plugin.reloaded", "", d.identity); say("note", "↻ reloaded " + d.identity); },
  "plugin.broken": (d) => { setStatus("broken save", "broken"); row("plugin.broken", "bad", d.text.split("\n")[0], d.text); say("error", d.text); },
  "plugin.exited": (d) => { setStatus("plugin ended", "broken"); say("error", "the plugin's process ended (exit status " + d.code + "); see its log"); row("plugin.exited", "bad", "exit status " + d.code); },
  "conversation.reset": (d) => { $("conversation").textContent = d.conversation_id; say("note", "new conversation " + d.conversation_id); row("conversation.reset", "", d.conversation_id); },
  "run.started": (d, e) => { bubble = null; row("run.started", "", d.runner + ": " + d.text, undefined, e.run_id); },
  "message.delta": (d, e) => { streamTo(e.run_id, d.text || ""); row("message.delta", "", "#" + d.sequence + " " + (d.text || "").length + " chars", d.data, e.run_id); },
  "message.completed": (d, e) => { streamTo(e.run_id, d.text || ""); bubble.classList.remove("streaming"); row("message.completed", "", d.text || "", d.data, e.run_id); },
  "run.completed": (d, e) => {
    if (d.text !== null && d.text !== undefined) streamTo(e.run_id, d.text);
    if (bubble) bubble.classList.remove("streaming");
    row("run.completed", "", (d.data && d.data.finish_reason) || "", d.data, e.run_id);
  },
  "run.failed": (d, e) => { row("run.failed", "bad", (d.data.code || "") + ": " + (d.data.error || ""), d.data, e.run_id); },
  "run.ended": (d, e) => {
    if (bubble) bubble.classList.remove("streaming");
    if (d.status !== "completed") {
      const err = d.error || {};
      sayFailure("run " + d.status + ": " + (err.code || "") + ": " + (err.error || ""), (err.details || {}).traceback);
    }
    const usage = usageText(d.usage);
    row("run.ended", d.status === "completed" ? "usage" : "bad", d.status + (usage ? " · usage: " + usage : ""), undefined, e.run_id);
    bubble = null;
  },
  "tool.call.started": (d, e) => row("tool.call.started", "tool", d.data.tool_name + "(" + JSON.stringify(d.data.parameters || {}) + ")", d.data, e.run_id),
  "tool.call.completed": (d, e) => row("tool.call.completed", d.data.error ? "bad" : "tool", d.data.tool_name + " → " + JSON.stringify(d.data.error || d.data.result), d.data, e.run_id),
  "tool.call": (d, e) => row("tool.call", "tool", "host tool " + d.name + "(" + JSON.stringify(d.arguments || {}) + ")", d.arguments, e.run_id),
  "tool.result": (d, e) => row("tool.result", "error" in d ? "bad" : "tool", d.name + " → " + JSON.stringify("error" in d ? d.error : d.result), "error" in d ? d.error : d.result, e.run_id),
  "state.updated": (d, e) => row("state.updated", "state", d.data.scope + "." + d.data.key + " = " + JSON.stringify(d.data.value), d.data, e.run_id),
  "host.call": (d, e) => row("host.call", "usage", d.action + (d.key ? " " + d.key : "") + (d.model ? " " + d.model + " (" + d.messages + " messages)" : ""), undefined, e.run_id),
  "command.reply": (d) => { say("bot", d.text); row("command.reply", "", "!" + d.command + " → " + d.text); },
  "tool.reply": (d) => { say("bot", pretty(d.result)); row("tool.reply", "tool", d.name + " → " + JSON.stringify(d.result), d.result); },
  "event.reply": (d) => {
    say("note", "event " + d.name + ((d.failed || []).length ? " failed in a listener" : " delivered"));
    for (const text of d.replies || []) say("bot", text);
    row("event.reply", (d.failed || []).length ? "bad" : "", d.name + ((d.replies || []).length ? " → " + d.replies.join(" / ") : ""), d.result);
  },
  "call.failed": (d) => {
    sayFailure(d.kind + " " + d.name + " raised" + (d.where ? " at " + d.where : "") + ": " + d.error, d.traceback);
    row("call.failed", "bad", d.kind + " " + d.name + (d.where ? " at " + d.where : "") + ": " + d.error, d.traceback);
  },
  "log": (d) => {
    const item = el("li", "log " + d.level, "[" + d.source + "] " + (d.level === "OUTPUT" ? "" : d.level.toLowerCase() + " ") + d.text);
    logs.appendChild(item);
    trim(logs);
    scrollDown(logs);
  },
};

function onEvent(event) {
  const handler = handlers[event.kind];
  if (handler) handler(event.data || {}, event);
  else row(event.kind, "", JSON.stringify(event.data || {}), undefined, event.run_id);
}

function connect() {
  const ws = new WebSocket("ws://" + location.host + "/api/events");
  ws.onopen = () => {
    // The server sends its recent events again: start from a clean page (a reload or a
    // reconnect shows the conversation once, the user's own messages included).
    chat.textContent = ""; timeline.textContent = ""; logs.textContent = "";
    bubble = null; shownRun = null;
    setStatus("connected", "online");
  };
  ws.onmessage = (message) => onEvent(JSON.parse(message.data));
  ws.onclose = () => { setStatus("offline", "broken"); setTimeout(connect, 1000); };
}

async function submit(line) {
  $("hint").textContent = "";
  const response = await fetch("/api/input", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ line }),
  });
  const answer = await response.json();
  if (answer.help) say("note", "text · !command args · /tool NAME {json} · /event NAME {json} · /reset");
  if (!answer.ok && answer.error && !answer.shown) $("hint").textContent = answer.error;
}

$("composer").addEventListener("submit", (event) => {
  event.preventDefault();
  const line = $("input").value.trim();
  if (!line) return;
  $("input").value = "";
  submit(line);  // the bubble comes back as a user.input event, as for the terminal's lines
});
$("reset").addEventListener("click", () => submit("/reset"));
$("clear-timeline").addEventListener("click", () => { timeline.textContent = ""; });
connect();
