/* global document */
// The evidence chain of a question: the question → each hop's documents → what the hop found
// (the bridge entity the next hop starts from) → the answer. Drawn as plain SVG from the same
// events as the rest of the page, redrawn whole on each one (a few dozen nodes at most). The SVG
// is hidden from assistive technology: the list beside it says the same, row by row.

const SVG_NS = 'http://www.w3.org/2000/svg';
const GRAPH_WIDTH = 800;
const LABEL_GUTTER = 110;
const ROW_HEIGHT = 66;
const NODE_HEIGHT = 38;
const MAX_NODE_WIDTH = 360;
// Enough documents per hop to see where it read; the hop list and the citations name them all.
const DOCUMENTS_PER_HOP = 4;

export function newChain(question) {
  return { question, parallel: false, hops: new Map(), citations: [], answer: null, abstained: false, writing: false };
}

export function chainHop(chain, hop) {
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
  // Once the answer is in, nothing more comes for this hop: say what it had, not that it waits.
  const ended = hop.finding !== null || chain.answer !== null;
  const waiting =
    hop.hits === null
      ? ended
        ? 'nothing retrieved'
        : 'retrieving…'
      : ended
        ? `${hop.hits} chunks, none cited`
        : `${hop.hits} chunks read…`;
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

/**
 * Draws `chain` into `view`: `graph` (an <svg>), `list` (its text, an <ol>) and `figure` (shown
 * once there is a chain); a document node that is cited calls `onCitation` with its citation.
 */
export function drawChain(chain, view) {
  const { rows, edges } = chainGraph(chain);
  const height = rows.length * ROW_HEIGHT;
  const { graph, list, figure, onCitation } = view;
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
      if (node.citation) group.addEventListener('click', () => onCitation(node.citation));
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
  list.replaceChildren(
    ...rows.map((row) => {
      const item = document.createElement('li');
      item.textContent = `${row.label}: ${row.nodes.map((node) => node.full).join('; ')}`;
      return item;
    }),
  );
  figure.hidden = false;
}
