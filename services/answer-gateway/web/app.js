/* global window, document, localStorage, location, history, fetch, AbortController, TextDecoder, setTimeout */
// The Hopline web page: asks over POST /v1/ask as Server-Sent Events, renders each event as
// it arrives (the hops, the evidence chain as a graph, the cited answer), and resumes the same
// question with Last-Event-ID when the connection drops. A past question opens by id from its
// stored reasoning trace, replayed through the same rendering.
import { chainHop, drawChain, newChain } from './chain.js';

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

function showChain(chain) {
  drawChain(chain, { graph: $('chain-graph'), list: $('chain-text'), figure: $('chain'), onCitation: showCitation });
}

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
      showChain(run.chain);
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
      showChain(run.chain);
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
      showChain(run.chain);
      break;
    }
    case 'hop_answer': {
      const line = hopItem(data.hop).querySelector('.hop-answer');
      line.classList.toggle('unknown', Boolean(data.unknown));
      line.textContent = data.unknown ? 'answer: unknown — not in the evidence' : `answer: ${data.answer}`;
      line.append(el('span', 'confidence', `confidence ${Number(data.confidence ?? 0).toFixed(2)}`));
      chainHop(run.chain, data.hop).finding = data;
      showChain(run.chain);
      break;
    }
    case 'token':
      $('answer-section').hidden = false;
      run.answerText += data.text;
      $('answer').textContent = run.answerText;
      setStatus('Writing the answer…');
      if (!run.chain.writing) {
        run.chain.writing = true;
        showChain(run.chain);
      }
      break;
    case 'citations':
      run.citations = data.citations ?? [];
      run.chain.citations = run.citations;
      showChain(run.chain);
      break;
    case 'done':
      run.finished = true;
      renderDone(data);
      run.chain.citations = data.citations ?? [];
      run.chain.answer = data.answer ?? '';
      run.chain.abstained = Boolean(data.abstained);
      showChain(run.chain);
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
