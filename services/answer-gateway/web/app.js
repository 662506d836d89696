/* global window, document, localStorage, location, history, fetch, AbortController, TextDecoder, setTimeout */
// The Hopline web page: asks over POST /v1/ask as Server-Sent Events, renders each event as
// it arrives (the hops, the evidence chain as a graph, the cited answer), and resumes the same
// question with Last-Event-ID when the connection drops. A past question opens by id from its
// stored reasoning trace, replayed through the same rendering.
const KEY_STORAGE = 'hopline.apiKey';
const RESUME_ATTEMPTS = 5;
const RESUME_DELAY_MS = 1000;
// The address of a question the page shows: `#question=<id>` opens it from its stored trace.
const QUESTION_HASH = /^#question=(.+)$/;

const $ = (id) => document.getElementById(id);
const el = (tag, className, text) => {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
};

let current = null;

function setStatus(text, isError = false) {
  $('status').textContent = text;
  $('status').classList.toggle('error', isError);
}

/** Parses an SSE byte stream (WHATWG rules) and calls onEvent for each event. */
async function readSse(body, onEvent) {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let event = { data: [] };
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += decoder.decode(value, { stream: true });
    let newline;
    while ((newline = buffer.search(/\r\n|\n|\r/)) >= 0) {
      const line = buffer.slice(0, newline);
      buffer = buffer.slice(newline + (buffer.startsWith('\r\n', newline) ? 2 : 1));
      if (line === '') {
        if (event.data.length > 0)
          onEvent({ id: event.id, name: event.name ?? 'message', data: JSON.parse(event.data.join('\n')) });
        event = { data: [] };
      } else if (!line.startsWith(':')) {
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        const text = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === 'data') event.data.push(text);
        else if (field === 'event') event.name = text;
        else if (field === 'id') event.id = text;
      }
    }
  }
}

async function problemText(response) {
  try {
    const problem = await response.json();
    return `${problem.title ?? response.statusText}${problem.detail ? `: ${problem.detail}` : ''}`;
  } catch {
    return `${response.status} ${response.statusText}`;
  }
}

function authHeaders() {
  return { Authorization: `Bearer ${$('api-key').value.trim()}` };
}

/**
 * The key is kept for the next visit only once the server has accepted it; a key it does not
 * know is forgotten, so a typo or a revoked key does not come back.
 */
function rememberKey(response, apiKey) {
  if (response.ok) localStorage.setItem(KEY_STORAGE, apiKey);
  else if (response.status === 401 && localStorage.getItem(KEY_STORAGE) === apiKey)
    localStorage.removeItem(KEY_STORAGE);
}

function resetView() {
  $('hops').replaceChildren();
  $('chain').hidden = true;
  $('route').hidden = true;
  $('answer-section').hidden = true;
  $('answer').replaceChildren();
  $('citations').replaceChildren();
  $('summary').textContent = '';
  $('citation-detail').hidden = true;
}

async function ask(event) {
  event.preventDefault();
  const apiKey = $('api-key').value.trim();
  if (!apiKey) {
    setStatus('Enter an API key first.', true);
    return;
  }
  resetView();
  const body = { question: $('question').value };
  const kbIds = $('kb-ids')
    .value.split(',')
    .map((kb) => kb.trim())
    .filter(Boolean);
  if (kbIds.length > 0) body.kbIds = kbIds;
  if ($('max-hops').value) body.maxHops = Number($('max-hops').value);

  const run = newRun(body.question);
  current = run;
  setBusy(true);
  setStatus('Asking…');
  try {
    const response = await fetch('/v1/ask', {
      method: 'POST',
      headers: { ...authHeaders(), 'Content-Type': 'application/json', Accept: 'text/event-stream' },
      body: JSON.stringify(body),
      signal: run.abort.signal,
    });
    rememberKey(response, apiKey);
    if (!response.ok) {
      setStatus(await problemText(response), true);
      return;
    }
    run.questionId = response.headers.get('Hopline-Question-Id');
    showQuestionId(run.questionId);
    await followToEnd(run, response);
  } catch (error) {
    if (!run.abort.signal.aborted) setStatus(`Request failed: ${error.message}`, true);
  } finally {
    if (current === run) setBusy(false);
  }
}

/** A question's events after `lastEventId`, as a stream. */
function questionEvents(run, lastEventId) {
  return fetch(`/v1/questions/${encodeURIComponent(run.questionId)}/events`, {
    headers: { ...authHeaders(), Accept: 'text/event-stream', 'Last-Event-ID': String(lastEventId) },
    signal: run.abort.signal,
  });
}

/** Follows a question's stream to its end, resuming after the last event whenever the connection drops. */
async function followToEnd(run, response) {
  await follow(run, response);
  for (let attempt = 1; !run.finished && attempt <= RESUME_ATTEMPTS && !run.abort.signal.aborted; attempt++) {
    setStatus(`Connection lost; resuming after event ${run.lastEventId} (attempt ${attempt})…`);
    await new Promise((resolve) => setTimeout(resolve, RESUME_DELAY_MS));
    const resumed = await questionEvents(run, run.lastEventId).catch(() => null);
    if (resumed?.ok) await follow(run, resumed);
    else if (resumed) {
      setStatus(await problemText(resumed), true);
      return;
    }
  }
  if (!run.finished && !run.abort.signal.aborted) setStatus('The connection was lost and could not be resumed.', true);
}

function newRun(question) {
  return {
    questionId: null,
    lastEventId: 0,
    finished: false,
    abort: new AbortController(),
    citations: [],
    answerText: '',
    chain: newChain(question),
  };
}

/** While a question streams, Ask and Open wait: leaving its stream would cancel it. */
function setBusy(busy) {
  $('ask').disabled = busy;
  $('open').disabled = busy;
  $('stop').disabled = !busy;
}

/** The question's id, and a link that opens it again from its trace. */
function showQuestionId(questionId) {
  const link = $('question-link');
  link.textContent = questionId;
  link.href = `#question=${encodeURIComponent(questionId)}`;
  $('question-id').hidden = false;
  // The address names the question shown, without re-opening it (replaceState fires no hashchange).
  history.replaceState(null, '', link.href);
}

/** Reads one connection's events; a broken connection returns so that the caller can resume. */
async function follow(run, response) {
  try {
    await readSse(response.body, (event) => {
      run.lastEventId = Number(event.id ?? run.lastEventId);
      render(run, event.name, event.data);
    });
  } catch (error) {
    if (run.abort.signal.aborted) throw error;
  }
}

function hopItem(hop) {
  let item = document.getElementById(`hop-${hop}`);
  if (!item) {
    item = el('li', 'hop');
    item.id = `hop-${hop}`;
    item.append(el('div', 'hop-title', `hop ${hop}`), el('div', 'hop-retrieval'), el('div', 'hop-answer'));
    $('hops').append(item);
  }
  return item;
}

function render(run, name, data) {
  switch (name) {
    case 'route': {
      run.chain.parallel = data.route === 'PARALLEL';
      drawChain(run.chain);
      $('route').hidden = false;
      const subs = (data.subQuestions ?? []).map((sub) => sub.text).filter(Boolean);
      $('route').textContent =
        `Route ${data.route} · complexity ${data.complexity} · decided by ${String(data.decidedBy).toLowerCase()}${subs.length ? ` · sub-questions: ${subs.join(' | ')}` : ''}`;
      setStatus('Reasoning…');
      break;
    }
    case 'hop_started': {
      const item = hopItem(data.hop);
      item.querySelector('.hop-title').textContent =
        `hop ${data.hop}${data.maxHops ? `/${data.maxHops}` : ''} — ${data.subQuestion}`;
      chainHop(run.chain, data.hop).subQuestion = data.subQuestion;
      drawChain(run.chain);
      setStatus(`Hop ${data.hop} of at most ${data.maxHops}…`);
      break;
    }
    case 'retrieval': {
      const line = hopItem(data.hop).querySelector('.hop-retrieval');
      line.textContent = `retrieved ${data.hits} chunks · graded ${String(data.grade).toLowerCase()}${data.rerankFallback ? ' · lexical rerank fallback' : ''}`;
      const reasons = data.degradedReasons ?? [];
      if (data.degraded)
        line.append(el('span', 'degraded', ` · degraded${reasons.length ? `: ${reasons.join(', ')}` : ''}`));
      chainHop(run.chain, data.hop).hits = data.hits;
      drawChain(run.chain);
      break;
    }
    case 'hop_answer': {
      const line = hopItem(data.hop).querySelector('.hop-answer');
      line.classList.toggle('unknown', Boolean(data.unknown));
      line.textContent = data.unknown ? 'answer: unknown — not in the evidence' : `answer: ${data.answer}`;
      line.append(el('span', 'confidence', `confidence ${Number(data.confidence ?? 0).toFixed(2)}`));
      chainHop(run.chain, data.hop).finding = data;
      drawChain(run.chain);
      break;
    }
    case 'token':
      $('answer-section').hidden = false;
      run.answerText += data.text;
      $('answer').textContent = run.answerText;
      setStatus('Writing the answer…');
      if (!run.chain.writing) {
        run.chain.writing = true;
        drawChain(run.chain);
      }
      break;
    case 'citations':
      run.citations = data.citations ?? [];
      run.chain.citations = run.citations;
      drawChain(run.chain);
      break;
    case 'done':
      run.finished = true;
      renderDone(data);
      run.chain.citations = data.citations ?? [];
      run.chain.answer = data.answer ?? '';
      run.chain.abstained = Boolean(data.abstained);
      drawChain(run.chain);
      setStatus(data.cached ? 'Answered from the cache.' : 'Answered.');
      break;
    case 'restarted':
      // Another hop-reasoner answers again from the start: what the earlier one streamed is superseded.
      resetView();
      run.citations = [];
      run.answerText = '';
      run.chain = newChain(run.chain.question);
      setStatus(`Restarted (attempt ${data.attempt}): ${data.reason}`);
      break;
    case 'error':
      run.finished = true;
      setStatus(`Error (${data.code}): ${data.message}`, true);
      break;
    default:
      break;
  }
}

function citationLink(citation) {
  const link = el('a', 'cite', `[${citation.index}]`);
  link.href = `#citation-${citation.index}`;
  link.dataset.index = String(citation.index);
  link.addEventListener('click', (event) => {
    event.preventDefault();
    showCitation(citation);
  });
  return link;
}

/** The answer text with each [n] (or [n, m]) turned into links to the cited chunks. */
function renderAnswer(text, citations) {
  const byIndex = new Map(citations.map((citation) => [citation.index, citation]));
  const nodes = [];
  let last = 0;
  for (const match of text.matchAll(/\[(\d+(?:\s*,\s*\d+)*)\]/g)) {
    nodes.push(document.createTextNode(text.slice(last, match.index)));
    for (const index of match[1].split(',').map((n) => Number(n.trim()))) {
      const citation = byIndex.get(index);
      nodes.push(citation ? citationLink(citation) : document.createTextNode(`[${index}]`));
    }
    last = match.index + match[0].length;
  }
  nodes.push(document.createTextNode(text.slice(last)));
  $('answer').replaceChildren(...nodes);
}

function renderDone(done) {
  $('answer-section').hidden = false;
  const citations = done.citations ?? [];
  renderAnswer(done.answer ?? '', citations);
  $('citations').replaceChildren(
    ...citations.map((citation) => {
      const item = el('li');
      item.id = `citation-${citation.index}`;
      item.append(
        citationLink(citation),
        document.createTextNode(
          ` ${citation.title || citation.docId} — ${citation.docId} (hop ${citation.hop}${citation.bridgeEntity ? `, via ${citation.bridgeEntity}` : ''})`,
        ),
      );
      return item;
    }),
  );
  const timings = done.timings ?? {};
  const ms = (value) => `${Math.round(value ?? 0)} ms`;
  const parts = [
    `stop: ${String(done.stopReason).toLowerCase().replaceAll('_', ' ')}`,
    `hops: ${done.hops}`,
    `total ${ms(timings.totalMs)} (analyze ${ms(timings.analyzeMs)}, retrieve ${ms(timings.retrieveMs)}, rerank ${ms(timings.rerankMs)}, reason ${ms(timings.reasonMs)}, synthesize ${ms(timings.synthesizeMs)})`,
  ];
  if (done.abstained) parts.push('abstained: the evidence chain is incomplete');
  if (done.degraded) parts.push(`degraded: ${(done.degradedReasons ?? []).join(', ')}`);
  if (done.cached) parts.push('cached');
  $('summary').textContent = parts.join(' · ');
}

function showCitation(citation) {
  $('detail-title').textContent = `[${citation.index}] ${citation.title || citation.docId}`;
  const span = citation.span ? ` · characters ${citation.span.start}–${citation.span.end}` : '';
  $('detail-meta').textContent =
    `document ${citation.docId} · kb ${citation.kbId} · chunk ${citation.chunkId}${span} · found in hop ${citation.hop}${citation.bridgeEntity ? ` via “${citation.bridgeEntity}”` : ''}`;
  $('detail-snippet').textContent = citation.snippet || '(no text)';
  $('citation-detail').hidden = false;
}

/**
 * Opens a past question from its stored reasoning trace: the same view its asker had, and the
 * hops behind it. A question without a trace yet (still running, as after a reload while it
 * streams) is followed from its first event instead, while the gateway still holds them.
 */
async function openQuestion(questionId) {
  const apiKey = $('api-key').value.trim();
  if (!apiKey) {
    setStatus('Enter an API key first.', true);
    return;
  }
  if (!questionId || $('open').disabled) return;
  resetView();
  $('question-id').hidden = true;
  const run = newRun(`question ${questionId}`);
  run.questionId = questionId;
  current = run;
  setStatus(`Opening question ${questionId}…`);
  try {
    const response = await fetch(`/v1/questions/${encodeURIComponent(questionId)}/trace`, { headers: authHeaders() });
    rememberKey(response, apiKey);
    if (response.status === 404) {
      const events = await questionEvents(run, 0);
      if (events.ok) {
        showQuestionId(questionId);
        setBusy(true);
        setStatus('Following the question…');
        await followToEnd(run, events);
        return;
      }
    }
    if (!response.ok) {
      setStatus(`${await problemText(response)} (question ${questionId})`, true);
      return;
    }
    const trace = await response.json();
    run.chain.question = trace.question;
    run.questionId = trace.questionId;
    $('question').value = trace.question;
    showQuestionId(trace.questionId);
    for (const [name, data] of traceEvents(trace)) render(run, name, data);
    setStatus(`Opened from its stored trace: asked ${new Date(trace.createdUnixMs).toLocaleString()}.`);
  } catch (error) {
    if (!run.abort.signal.aborted) setStatus(`Request failed: ${error.message}`, true);
  } finally {
    if (current === run) setBusy(false);
  }
}

/** A stored reasoning trace as the events its question streamed, so that it renders as they did. */
function traceEvents(trace) {
  const events = [];
  if (trace.analysis) events.push(['route', trace.analysis]);
  for (const record of trace.hops) {
    events.push(['hop_started', { hop: record.hop, subQuestion: record.query }]);
    events.push([
      'retrieval',
      { hop: record.hop, hits: record.evidenceChunkIds.length, grade: record.answer?.grade, degraded: record.degraded },
    ]);
    if (record.answer) events.push(['hop_answer', { ...record.answer, hop: record.hop }]);
  }
  events.push([
    'done',
    {
      answer: trace.answer,
      citations: trace.citations,
      stopReason: trace.stopReason,
      hops: trace.hops.length,
      timings: trace.timings,
      abstained: trace.abstained,
      degraded: trace.degradedReasons.length > 0,
      degradedReasons: trace.degradedReasons,
    },
  ]);
  return events;
}

const questionInAddress = () => {
  const match = QUESTION_HASH.exec(location.hash);
  return match ? decodeURIComponent(match[1]) : '';
};

async function stop() {
  const run = current;
  if (!run) return;
  $('stop').disabled = true;
  if (!run.questionId) {
    run.abort.abort();
    setStatus('Stopped.');
    return;
  }
  // The stream itself reports the end: the gateway sends the question's terminal error event.
  const response = await fetch(`/v1/questions/${encodeURIComponent(run.questionId)}`, {
    method: 'DELETE',
    headers: authHeaders(),
  });
  if (!response.ok) setStatus(await problemText(response), true);
}

document.addEventListener('DOMContentLoaded', () => {
  $('api-key').value = localStorage.getItem(KEY_STORAGE) ?? '';
  $('ask-form').addEventListener('submit', (event) => void ask(event));
  $('open-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const address = `#question=${encodeURIComponent($('open-id').value.trim())}`;
    if (location.hash === address) void openQuestion(questionInAddress());
    else location.hash = address;
  });
  // Opening goes through the address, so a question's view can be bookmarked, shared and reloaded.
  window.addEventListener('hashchange', () => void openQuestion(questionInAddress()));
  if (questionInAddress()) void openQuestion(questionInAddress());
  $('stop').addEventListener('click', () => void stop());
  $('close-detail').addEventListener('click', () => {
    $('citation-detail').hidden = true;
  });
});

// ---- The evidence chain: question → each hop's documents → what the hop found → the answer ----
// Drawn as plain SVG from the same events as the rest of the page, redrawn whole on each one
// (a few dozen nodes at most). The SVG is hidden from assistive technology: the list beside it
// says the same, row by row.

const SVG_NS = 'http://www.w3.org/2000/svg';
const GRAPH_WIDTH = 800;
const LABEL_GUTTER = 110;
const ROW_HEIGHT = 66;
const NODE_HEIGHT = 38;
const MAX_NODE_WIDTH = 360;
// Enough documents per hop to see where it read; the hop list and the citations name them all.
const DOCUMENTS_PER_HOP = 4;

function newChain(question) {
  return { question, parallel: false, hops: new Map(), citations: [], answer: null, abstained: false, writing: false };
}

function chainHop(chain, hop) {
  if (!chain.hops.has(hop)) chain.hops.set(hop, { hop, subQuestion: '', hits: null, finding: null });
  return chain.hops.get(hop);
}

/** The documents a hop read: those its answer cited and those the final citations credit to it. */
function hopDocuments(chain, hop) {
  const byChunk = new Map(chain.citations.map((citation) => [citation.chunkId, citation]));
  const cited = (hop.finding?.citedChunkIds ?? []).map((chunkId) => byChunk.get(chunkId) ?? { chunkId });
  const documents = new Map();
  for (const source of [...cited, ...chain.citations.filter((citation) => citation.hop === hop.hop)]) {
    // Before the citations arrive a chunk is all there is to name; they bring its document.
    const key = source.docId ? `${source.kbId}/${source.docId}` : source.chunkId;
    if (documents.has(key)) continue;
    if (source.docId)
      documents.set(key, {
        id: `doc-${hop.hop}-${key}`,
        kind: 'document',
        text: source.title || source.docId,
        full: `${source.title || source.docId} (document ${source.docId})`,
        citation: source,
      });
    else
      documents.set(key, {
        id: `doc-${hop.hop}-${key}`,
        kind: 'chunk',
        text: source.chunkId,
        // Once the citations are in, a chunk they do not name led this hop but not the answer.
        full: `chunk ${source.chunkId}${chain.citations.length > 0 ? ', which the answer does not cite' : ''}`,
      });
  }
  const nodes = [...documents.values()];
  if (nodes.length > DOCUMENTS_PER_HOP) {
    const more = nodes.length - DOCUMENTS_PER_HOP + 1;
    nodes.splice(DOCUMENTS_PER_HOP - 1, Infinity, {
      id: `doc-${hop.hop}-more`,
      kind: 'pending',
      text: `+${more} more`,
      full: `${more} more documents`,
    });
  }
  if (nodes.length > 0) return nodes;
  const waiting =
    hop.hits === null ? 'retrieving…' : hop.finding ? `${hop.hits} chunks, none cited` : `${hop.hits} chunks read…`;
  return [{ id: `doc-${hop.hop}-none`, kind: 'pending', text: waiting, full: waiting }];
}

/**
 * The chain as rows of nodes and the edges between them. A hop after the first starts from what
 * the one before it found (the bridge entity); the parts of a PARALLEL question all start from
 * the question and meet again in the answer.
 */
function chainGraph(chain) {
  const rows = [
    { label: 'question', nodes: [{ id: 'question', kind: 'question', text: chain.question, full: chain.question }] },
  ];
  const edges = [];
  const row = (index, label) => (rows[index] ??= { label, nodes: [] });
  let leads = ['question'];
  const findings = [];
  for (const hop of [...chain.hops.values()].sort((a, b) => a.hop - b.hop)) {
    const first = chain.parallel ? 1 : 2 * hop.hop - 1;
    const from = chain.parallel ? ['question'] : leads;
    const documents = hopDocuments(chain, hop);
    row(first, chain.parallel ? 'read' : `hop ${hop.hop} read`).nodes.push(...documents);
    for (const source of from) for (const document of documents) edges.push([source, document.id]);
    leads = documents.map((document) => document.id);
    if (hop.finding) {
      const unknown = hop.finding.unknown;
      const text = unknown ? 'unknown' : hop.finding.answer;
      const finding = {
        id: `found-${hop.hop}`,
        kind: unknown ? 'unknown' : 'finding',
        text,
        full: `${unknown ? 'nothing: the evidence does not say' : text} (confidence ${Number(hop.finding.confidence ?? 0).toFixed(2)})`,
      };
      row(first + 1, chain.parallel ? 'found' : `hop ${hop.hop} found`).nodes.push(finding);
      for (const document of documents) edges.push([document.id, finding.id]);
      leads = [finding.id];
      findings.push(finding.id);
    }
  }
  if (chain.answer !== null || chain.writing) {
    const text = chain.answer ?? 'writing…';
    const answer = {
      id: 'answer',
      kind: chain.answer === null ? 'pending' : chain.abstained ? 'unknown' : 'answer',
      text,
      full: text,
    };
    rows.push({ label: chain.abstained ? 'abstained' : 'answer', nodes: [answer] });
    for (const source of chain.parallel && findings.length > 0 ? findings : leads) edges.push([source, answer.id]);
  }
  return { rows: rows.filter(Boolean), edges };
}

/** Roughly how wide a label is, in average Latin characters: CJK characters take about two. */
const textWidth = (text) => [...text].reduce((sum, char) => sum + (char.codePointAt(0) > 0x2e7f ? 2 : 1), 0);

function fitted(text, width) {
  const room = Math.floor((width - 14) / 7.4);
  if (textWidth(text) <= room) return text;
  let cut = '';
  for (const char of text) {
    if (textWidth(`${cut}${char}…`) > room) break;
    cut += char;
  }
  return `${cut}…`;
}

function svg(tag, attributes = {}, text) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, String(value));
  if (text !== undefined) node.textContent = text;
  return node;
}

function drawChain(chain) {
  const { rows, edges } = chainGraph(chain);
  const height = rows.length * ROW_HEIGHT;
  const graph = $('chain-graph');
  graph.setAttribute('viewBox', `0 0 ${GRAPH_WIDTH} ${height}`);
  const arrow = svg('marker', {
    id: 'arrow',
    viewBox: '0 0 10 10',
    refX: 9,
    refY: 5,
    markerWidth: 7,
    markerHeight: 7,
    orient: 'auto',
  });
  arrow.append(svg('path', { d: 'M0,0 L10,5 L0,10 z', class: 'arrow' }));
  const defs = svg('defs');
  defs.append(arrow);
  const edgeLayer = svg('g', { class: 'edges' });
  const nodeLayer = svg('g', { class: 'nodes' });
  const centres = new Map();
  rows.forEach((row, index) => {
    const y = index * ROW_HEIGHT + ROW_HEIGHT / 2;
    nodeLayer.append(svg('text', { x: 4, y: y + 4, class: 'row-label' }, row.label));
    const slot = (GRAPH_WIDTH - LABEL_GUTTER) / row.nodes.length;
    const width = Math.min(MAX_NODE_WIDTH, slot - 12);
    row.nodes.forEach((node, position) => {
      const x = LABEL_GUTTER + slot * (position + 0.5);
      centres.set(node.id, { x, y });
      const group = svg('g', { class: `node ${node.kind}${node.citation ? ' cited' : ''}`, 'data-node': node.id });
      group.append(
        svg('title', {}, node.full),
        svg('rect', { x: x - width / 2, y: y - NODE_HEIGHT / 2, width, height: NODE_HEIGHT, rx: 8 }),
        svg('text', { x, y: y + 5, 'text-anchor': 'middle' }, fitted(node.text, width)),
      );
      // A shortcut for the mouse; the citation list below is the way to the same detail by keyboard.
      if (node.citation) group.addEventListener('click', () => showCitation(node.citation));
      nodeLayer.append(group);
    });
  });
  for (const [from, to] of edges) {
    const a = centres.get(from);
    const b = centres.get(to);
    if (!a || !b) continue;
    const top = a.y + NODE_HEIGHT / 2;
    const bottom = b.y - NODE_HEIGHT / 2;
    const bend = (bottom - top) / 2;
    edgeLayer.append(
      svg('path', {
        d: `M${a.x},${top} C${a.x},${top + bend} ${b.x},${bottom - bend} ${b.x},${bottom}`,
        'marker-end': 'url(#arrow)',
        'data-edge': `${from}→${to}`,
      }),
    );
  }
  graph.replaceChildren(defs, edgeLayer, nodeLayer);
  $('chain-text').replaceChildren(
    ...rows.map((row) => el('li', undefined, `${row.label}: ${row.nodes.map((node) => node.full).join('; ')}`)),
  );
  $('chain').hidden = false;
}
