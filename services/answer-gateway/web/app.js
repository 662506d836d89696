/* global document, localStorage, fetch, AbortController, TextDecoder, setTimeout */
// The Hopline web page: asks over POST /v1/ask as Server-Sent Events, renders each event as
// it arrives, and resumes the same question with Last-Event-ID when the connection drops.
const KEY_STORAGE = 'hopline.apiKey';
const RESUME_ATTEMPTS = 5;
const RESUME_DELAY_MS = 1000;

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

function resetView() {
  $('hops').replaceChildren();
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

  const run = {
    questionId: null,
    lastEventId: 0,
    finished: false,
    abort: new AbortController(),
    citations: [],
    answerText: '',
  };
  current = run;
  $('ask').disabled = true;
  $('stop').disabled = false;
  setStatus('Asking…');
  try {
    const response = await fetch('/v1/ask', {
      method: 'POST',
      headers: { ...authHeaders(), 'Content-Type': 'application/json', Accept: 'text/event-stream' },
      body: JSON.stringify(body),
      signal: run.abort.signal,
    });
    // The key is kept for the next visit only once the server has accepted it; a key it does
    // not know is forgotten, so a typo or a revoked key does not come back.
    if (response.status === 401 && localStorage.getItem(KEY_STORAGE) === apiKey) localStorage.removeItem(KEY_STORAGE);
    if (!response.ok) {
      setStatus(await problemText(response), true);
      return;
    }
    localStorage.setItem(KEY_STORAGE, apiKey);
    run.questionId = response.headers.get('Hopline-Question-Id');
    await follow(run, response);
    for (let attempt = 1; !run.finished && attempt <= RESUME_ATTEMPTS && !run.abort.signal.aborted; attempt++) {
      setStatus(`Connection lost; resuming after event ${run.lastEventId} (attempt ${attempt})…`);
      await new Promise((resolve) => setTimeout(resolve, RESUME_DELAY_MS));
      const resumed = await fetch(`/v1/questions/${encodeURIComponent(run.questionId)}/events`, {
        headers: { ...authHeaders(), Accept: 'text/event-stream', 'Last-Event-ID': String(run.lastEventId) },
        signal: run.abort.signal,
      }).catch(() => null);
      if (resumed?.ok) await follow(run, resumed);
      else if (resumed) {
        setStatus(await problemText(resumed), true);
        return;
      }
    }
    if (!run.finished && !run.abort.signal.aborted)
      setStatus('The connection was lost and could not be resumed.', true);
  } catch (error) {
    if (!run.abort.signal.aborted) setStatus(`Request failed: ${error.message}`, true);
  } finally {
    if (current === run) {
      $('ask').disabled = false;
      $('stop').disabled = true;
    }
  }
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
      $('route').hidden = false;
      const subs = (data.subQuestions ?? []).map((sub) => sub.text).filter(Boolean);
      $('route').textContent =
        `Route ${data.route} · complexity ${data.complexity} · decided by ${String(data.decidedBy).toLowerCase()}${subs.length ? ` · sub-questions: ${subs.join(' | ')}` : ''}`;
      setStatus('Reasoning…');
      break;
    }
    case 'hop_started': {
      const item = hopItem(data.hop);
      item.querySelector('.hop-title').textContent = `hop ${data.hop}/${data.maxHops} — ${data.subQuestion}`;
      setStatus(`Hop ${data.hop} of at most ${data.maxHops}…`);
      break;
    }
    case 'retrieval': {
      const line = hopItem(data.hop).querySelector('.hop-retrieval');
      line.textContent = `retrieved ${data.hits} chunks · graded ${String(data.grade).toLowerCase()}${data.rerankFallback ? ' · lexical rerank fallback' : ''}`;
      if (data.degraded) line.append(el('span', 'degraded', ` · degraded: ${(data.degradedReasons ?? []).join(', ')}`));
      break;
    }
    case 'hop_answer': {
      const line = hopItem(data.hop).querySelector('.hop-answer');
      line.classList.toggle('unknown', Boolean(data.unknown));
      line.textContent = data.unknown ? 'answer: unknown — not in the evidence' : `answer: ${data.answer}`;
      line.append(el('span', 'confidence', `confidence ${Number(data.confidence ?? 0).toFixed(2)}`));
      break;
    }
    case 'token':
      $('answer-section').hidden = false;
      run.answerText += data.text;
      $('answer').textContent = run.answerText;
      setStatus('Writing the answer…');
      break;
    case 'citations':
      run.citations = data.citations ?? [];
      break;
    case 'done':
      run.finished = true;
      renderDone(data);
      setStatus(data.cached ? 'Answered from the cache.' : 'Answered.');
      break;
    case 'restarted':
      // Another hop-reasoner answers again from the start: what the earlier one streamed is superseded.
      resetView();
      run.citations = [];
      run.answerText = '';
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
  $('stop').addEventListener('click', () => void stop());
  $('close-detail').addEventListener('click', () => {
    $('citation-detail').hidden = true;
  });
});
