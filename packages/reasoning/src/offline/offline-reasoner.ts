import type { Chunk__Output } from '@hopline/contracts';
import { Grade } from '@hopline/contracts';
import { containsStem, contentTerms, entityKey, hasHan, sameStem, writtenInChinese } from '@hopline/text';
import type { HopExtractionInput, HopFinding, PreviousHop, Reasoner } from '../reasoner/reasoner.js';
import { readTypedAnswer } from './answers.js';
import type { BridgeCandidate } from './bridge.js';
import { bridgeCandidates, isAbout, UNANCHORED_WEIGHT } from './bridge.js';
import { withoutKindNoun } from './event-kind.js';
import { gradeEvidence, isAboutEvent } from './grade.js';
import type { AnswerType } from './question.js';
import {
  answerType,
  comparedOptions,
  comparesTimesOfSeveral,
  framedInTime,
  dateComparison,
  questionAnchors,
  questionWords,
  relationTerms,
  samePeriod,
} from './question.js';
import { expandRelations, isRoleNoun } from './relations.js';
import { namesRoleBeside, roleAskedFor } from './role-holder.js';
import { asksPlace, fitsQuestion, kindNounAsked, namedAsKindAsked } from './fit.js';
import { synthesizeOffline } from './synthesis.js';
import type { TitleConventions } from './text.js';
import { bareTitle, chunkInChinese, chunkTerms, escapeRegExp, sentences, states, titleConventions } from './text.js';
import type { ReasoningSwitch } from '../switches.js';
import { isOn } from '../switches.js';

export interface OfflineReasonerOptions {
  /** Chunks the first hop cites: the documents about the question's entities, then the best ranked. */
  firstHopCitations?: number;
  /** Chunks a later hop cites: the documents about the bridge entities it was sent to find. */
  laterHopCitations?: number;
  /** Bridge entities a next query names: more find the right one more often, fewer stay precise. */
  entitiesPerQuery?: number;
  /** Rules and mechanisms switched off (`REASONING_SWITCHES`): the title conventions it reads. */
  switchedOff?: readonly ReasoningSwitch[];
}

const DEFAULTS: Required<Omit<OfflineReasonerOptions, 'switchedOff'>> = {
  firstHopCitations: 2,
  laterHopCitations: 2,
  entitiesPerQuery: 8,
};
const ABOUT_CITATIONS = 2;
const BRIDGE_SCORE_FLOOR = 0.3;
const LEAD_BRIDGE_SCORE_FLOOR = 0.5;
// A later hop is sent for several bridges, best first: a document about a runner-up counts no
// more than a chunk about nothing sought, so its names do not crowd the best bridge's out.
const RUNNER_UP_DOCUMENT_WEIGHT = UNANCHORED_WEIGHT;
const BRIDGE_PAGES_SOUGHT = 3;
const BRIDGE_PAGE_CITATIONS = 2;
const MENTIONED_LEAD_WORDS = 2;
// A first hop whose document leaves one word of the question unexplained ("played" beside "the
// final in Porto") more likely read a paraphrase than missed a hidden clause, which leaves
// several (its own verb and nouns): past this many, the first hop's reading is no fallback.
const PARAPHRASED_WORDS = 1;

function unique(chunks: readonly Chunk__Output[]): Chunk__Output[] {
  const seen = new Set<string>();
  return chunks.filter((chunk) => !seen.has(chunk.chunkId) && seen.add(chunk.chunkId));
}

/** The chunks about `entities`, exact titles before disambiguated ones, in the entities' order. */
function chunksAbout(
  chunks: readonly Chunk__Output[],
  entities: readonly string[],
  titles: TitleConventions,
): Chunk__Output[] {
  const exact = entities.flatMap((entity) => chunks.filter((chunk) => entityKey(chunk.title) === entityKey(entity)));
  const bare = entities.flatMap((entity) => chunks.filter((chunk) => isAbout(chunk, entity, titles)));
  return unique([...exact, ...bare]);
}

function mentions(chunk: Chunk__Output, entity: string): boolean {
  const terms = chunkTerms(chunk);
  const wanted = contentTerms(entity);
  return wanted.length > 0 && wanted.every((term) => containsStem(terms, term));
}

const unknownFinding = (citedChunkIds: string[] = []): HopFinding => ({
  answer: '',
  unknown: true,
  done: false,
  nextQuery: '',
  confidence: 0,
  citedChunkIds,
  bridgeEntities: [],
});

/**
 * The reasoner that needs no network and no weights. Each hop cites the documents about what
 * it was sent to find, reads bridge entities from them (names next to the question's relation
 * words, names that are titles of retrieved documents), and sends the next hop to look those
 * up together with the relation words still unresolved. The last hop reads a typed answer.
 * When the evidence does not mention what a hop was looking for, it says UNKNOWN.
 */
export function createOfflineReasoner(options: OfflineReasonerOptions = {}): Reasoner {
  const settings = { ...DEFAULTS, ...options };
  const titles = titleConventions(options.switchedOff);
  const soughtDocument = isOn(options.switchedOff, 'soughtDocument');
  const bridgeMentions = isOn(options.switchedOff, 'bridgeMentions');
  const askedRole = isOn(options.switchedOff, 'askedRole');
  const unfitLookup = isOn(options.switchedOff, 'unfitLookup') && isOn(options.switchedOff, 'answerFit');
  const kindNames = isOn(options.switchedOff, 'kindNames');
  const pastPlanWords = isOn(options.switchedOff, 'pastPlanWords');
  const neighbourReadings = isOn(options.switchedOff, 'neighbourReadings');
  const timeFrames = isOn(options.switchedOff, 'timeFrames');
  const guessedBridgeFallback =
    isOn(options.switchedOff, 'guessedBridgeFallback') && isOn(options.switchedOff, 'answerFit');

  async function extractHopAnswer(input: HopExtractionInput): Promise<HopFinding> {
    const finding = await readHop(input);
    const [first, ...others] = input.previous;
    const guessed = guessedBridgeFallback && first !== undefined && others.length === 0 && input.expectedHops === 1;
    return guessed ? answerOfGuess(input, first, finding) : finding;
  }

  /**
   * The answer after a hop taken for a bridge the wording hid (a one-lookup question whose first
   * hop's document left a word of the question unexplained: "played" beside "the final in
   * Porto"): a guess, whose `finding` stands unless the documents say better. In turn: a name
   * the first hop's whole-question chunks call the kind asked ("the Reliability department" for
   * "which department"); a name the guessed hop's own chunks call so, where it read another; the
   * guessed hop's reading, where it is of the kind asked and read from chunks that state the
   * unexplained word; else the first hop's own reading, if its fit can be checked (a date, a
   * number, a place) and holds.
   */
  async function answerOfGuess(
    input: HopExtractionInput,
    first: PreviousHop,
    finding: HopFinding,
  ): Promise<HopFinding> {
    // The first hop answers the whole question only from a chunk that names everything the
    // question names ("how many more titles did A win than B?" is not answered by A's document).
    const anchors = questionAnchors(input.focus);
    const whole = first.cited.filter((chunk) => anchors.every((anchor) => mentions(chunk, anchor)));
    // A hidden clause leaves several words unexplained (its own verb and nouns), a paraphrase one:
    // unexplained by such a chunk, where there is one, else by the first hop's first.
    const unexplained = withoutKindAsked(
      unstatedBy(
        relationTerms(input.focus, anchors),
        whole.length > 0 ? whole.slice(0, 1) : first.cited.slice(0, 1),
        input.focus,
      ),
      input.focus,
    );
    if (unexplained.length > PARAPHRASED_WORDS) return finding;
    const read = input.chunks.filter((chunk) => finding.citedChunkIds.includes(chunk.chunkId));
    const calledSo = namedAsKindAsked(input.focus, read);
    const named = namedAsKindAsked(input.focus, whole) ?? (calledSo?.name !== finding.answer ? calledSo : undefined);
    if (named !== undefined)
      return {
        answer: named.name,
        unknown: false,
        done: true,
        nextQuery: '',
        confidence: confidenceOf([], true),
        citedChunkIds: [named.chunkId],
        bridgeEntities: [named.name],
      };
    const explains = unexplained.length === 0 || statesRelation(read, unexplained, input.focus);
    if (!finding.unknown && explains && fitsQuestion(input.focus, finding.answer, input.chunks)) return finding;
    if (!readsCheckably(input.focus)) return finding;
    const reread = await readHop({
      ...input,
      hop: 1,
      hopsLeft: 0,
      query: first.query,
      chunks: first.cited,
      previous: [],
    });
    const fits = !reread.unknown && fitsQuestion(input.focus, reread.answer, first.cited);
    return fits && whole.some((chunk) => states(chunk.text, reread.answer)) ? reread : finding;
  }

  async function readHop(input: HopExtractionInput): Promise<HopFinding> {
    const { chunks, hop, previous } = input;
    const anchors = questionAnchors(input.focus);
    const relation = relationTerms(input.focus, anchors);
    const last = previous.at(-1);
    const sought = last ? last.finding.bridgeEntities : anchors;

    if (chunks.length === 0 || gradeEvidence(input.query, chunks) === Grade.IRRELEVANT) return unknownFinding();
    // A later hop whose evidence never mentions the entities it was sent for has found nothing.
    if (last && !chunks.some((chunk) => sought.some((entity) => mentions(chunk, entity)))) return unknownFinding();
    const { type, event } = hopAnswerType(input);
    // A hop sent for the date of one event of a comparison reads it only from a chunk about that
    // event: a dated document on a neighbouring topic would answer the comparison for the wrong
    // event. With none, the event is a gap the answer names.
    const asked = event !== undefined && isOn(options.switchedOff, 'eventKinds') ? withoutKindNoun(event) : event;
    const eventChunks =
      asked === undefined ? chunks : chunks.filter((chunk) => isAboutEvent(asked, chunk, options.switchedOff));
    if (eventChunks.length === 0) return unknownFinding();

    const about = chunksAbout(eventChunks, sought, titles).slice(0, ABOUT_CITATIONS);
    const leadMentions = bridgeMentions && last ? mentionsOfLead(input, eventChunks, sought[0] ?? '', titles) : [];
    // A later hop cites the lead's mentions, else the sought entity's documents, else one chunk naming it.
    const laterHopCited = () =>
      leadMentions.length > 0
        ? leadMentions
        : about.length > 0
          ? about
          : eventChunks.filter((chunk) => sought.some((entity) => mentions(chunk, entity))).slice(0, 1);
    const cited = last
      ? laterHopCited().slice(0, settings.laterHopCitations)
      : unique([...about, ...eventChunks]).slice(0, settings.firstHopCitations);

    // What the chain has read so far: the documents about what each hop looked for (or, with
    // none, the hop's best one) — not every document cited around them.
    const readBefore = previous.flatMap((step) => step.cited.slice(0, 1));
    const stillAsked = unstatedBy(relation, readBefore, input.focus);
    // A hop past the plan that looks up a thing the chain read where another kind was asked (the
    // competition where its city is asked) is there for what the question asks of that thing:
    // the words that led to it are behind the chain, and a name beside them in its document
    // ("the Tarnby Harp Contest (Velmari: …)") says no more of what is still asked than any other.
    const pastPlan =
      pastPlanWords &&
      last !== undefined &&
      hop > input.expectedHops &&
      stillAsked.length > 0 &&
      !fitsQuestion(input.focus, last.finding.answer, last.cited);
    const candidateOptions = {
      relationTerms: pastPlan ? stillAsked : relation,
      // A chunk that names the lead is about something else: its own subject is no link from the lead.
      known: [
        ...anchors,
        ...previous.map((step) => step.finding.answer),
        ...leadMentions.map((chunk) => bareTitle(chunk.title, titles)),
      ],
      retrievedTitles: chunks.map((chunk) => chunk.title),
      titles,
      anchorWeight: (chunk: Chunk__Output) => {
        if (leadMentions.includes(chunk)) return 1;
        if (!about.includes(chunk)) return 0;
        return last && !isAbout(chunk, sought[0] ?? '', titles) ? RUNNER_UP_DOCUMENT_WEIGHT : 1;
      },
    };
    const candidates = bridgeCandidates(cited, candidateOptions);
    const citedIds = cited.map((chunk) => chunk.chunkId);
    const unresolved = unstatedBy(
      relation,
      [...readBefore, ...(about.length > 0 ? about : cited.slice(0, 1))],
      input.focus,
    );
    // A hop sent to find one entity (a later hop's bridge, a sub-question's one entity) answers
    // from that entity's document; when it has none, the chain is broken here.
    const seeksOne = last !== undefined || (input.focus !== input.question && anchors.length === 1);
    if (soughtDocument && seeksOne && leadMentions.length === 0 && !readsAboutSought(about, cited))
      return unknownFinding(citedIds);
    // A question read as one lookup whose evidence leaves relation words unexplained has a
    // bridge the wording hid ("a 1931 film starring a singer born in what year"): one more
    // hop, when the chain has one. Not a comparison of the times of things it names, though one
    // the analysis could not split: its words of comparison ("同一个月", "更早") are asked of the
    // dates, never stated beside them, and a name read near them is a stray whose hop would put
    // its ranking in place of this one, which holds the compared things' own documents. Nor is
    // the noun of the kind asked ("which team") such a word (withoutKindAsked).
    const hiddenBridge =
      input.expectedHops === 1 &&
      hop === 1 &&
      input.hopsLeft > 0 &&
      withoutKindAsked(unresolved, input.focus).length > 0 &&
      candidates.length > 0 &&
      !comparesTimesOfSeveral(input.question) &&
      !(timeFrames && framedInTime(input.question));
    const done = hop >= input.expectedHops && !hiddenBridge;

    if (done) {
      // The answer is read from the documents about what this hop looked for, when it found any;
      // a date or number too, where the hop was sent for one entity: a neighbour's is not its own.
      const source = about.length > 0 ? about : cited;
      const typed = readTypedAnswer(type, soughtDocument && seeksOne ? source : cited, relation);
      // A hop sent to one entity's document for "which department" reads the one name that
      // document calls a department ("in the Reliability department"), before any other name.
      const kindNamed =
        kindNames && last !== undefined && type === 'entity' && about.length > 0
          ? namedAsKindAsked(input.focus, about.slice(0, 1))
          : undefined;
      // A question that asks for a date, a number or a score is not answered by a name.
      const named =
        typed || type === 'date' || type === 'number' || type === 'score'
          ? undefined
          : kindNamed !== undefined
            ? { name: kindNamed.name, score: 0, chunkId: kindNamed.chunkId }
            : (bridgeCandidates(source, { ...candidateOptions, concluding: true }).find(
                (candidate) => !asksWho(input.focus) || !onlyAsPlace(candidate, chunks),
              ) ?? (asksWho(input.focus) ? undefined : entityItself(about, hop, titles)));
      const answer = typed?.answer ?? named?.name;
      if (!answer) return unknownFinding(citedIds);
      // An answer is only an answer where the evidence states the relation the question asks
      // for: a bridge followed to the wrong entity finds a document that never says "married".
      // One read from the document about the lead entity this hop was sent for needs no such
      // word: the chain itself led there, and what a question asks for ("nationality",
      // "lineage") is seldom written beside its answer ("a German composer"). A runner-up's
      // document must say it; at a later hop, for a date or a number read from a titled document
      // as for a name (the date of an earlier game, where a chain came to the wrong one).
      const sourceId = typed?.chunkId ?? named?.chunkId;
      const answeredFrom = source.find((chunk) => chunk.chunkId === sourceId);
      const fromLead = answeredFrom !== undefined && isAbout(answeredFrom, sought[0] ?? '', titles);
      const checked = named !== undefined || (last !== undefined && (answeredFrom?.title ?? '') !== '');
      if (checked && !fromLead && stillAsked.length > 0 && !statesRelation(cited, stillAsked, input.focus))
        return unknownFinding(citedIds);
      // A first hop's date or number read from a neighbour's document (another entity's title)
      // is its own only where that document says the relation asked: "joined in 2027" in a
      // member's document does not date the company's founding.
      const neighbour =
        neighbourReadings && typed !== undefined && last === undefined && !fromLead && answeredFrom?.title
          ? answeredFrom
          : undefined;
      if (neighbour && stillAsked.length > 0 && !statesRelation([neighbour], stillAsked, input.focus))
        return unknownFinding(citedIds);
      // A role-holder is named beside the role ("his sister Marta", "the daughter of Olof"), even
      // in the lead's own document: where no sentence of the documents the name was read from
      // says so, the chain came to another entity's document (the sought one is missing) and
      // read a stray name. A date or a number holds no role.
      const role = askedRole && named ? roleAskedFor(input.focus) : undefined;
      if (role !== undefined && !namesRoleBeside(source, answer, role)) return unknownFinding(citedIds);
      // A name that is not what the question asks for (a company where "where" asks for a place)
      // is the thing that holds it: the planned last hop hands it on, and one more hop looks it
      // up with the words still asked. Confidence nil: it is no answer to stop on.
      if (
        unfitLookup &&
        named &&
        hop === input.expectedHops &&
        input.hopsLeft > 0 &&
        !fitsQuestion(input.focus, answer, chunks)
      )
        return {
          answer,
          unknown: false,
          done: false,
          nextQuery: [answer, ...questionWords(input.focus, unresolved.length > 0 ? unresolved : relation)].join(' '),
          confidence: 0,
          citedChunkIds: [
            ...new Set([...about.map((chunk) => chunk.chunkId), ...(sourceId ? [sourceId] : []), ...citedIds]),
          ],
          bridgeEntities: [answer],
        };
      // A named answer's own document, when this hop retrieved it, is evidence that it is what was asked.
      const own = typed
        ? []
        : chunksAbout(chunks, [answer], titles)
            .slice(0, 1)
            .map((chunk) => chunk.chunkId);
      return {
        answer,
        unknown: false,
        done: true,
        nextQuery: '',
        confidence: confidenceOf(candidates, typed !== undefined),
        citedChunkIds: [
          ...new Set([...about.map((chunk) => chunk.chunkId), ...(sourceId ? [sourceId] : []), ...own, ...citedIds]),
        ],
        // A sub-question that others depend on hands them its answer and the runners-up.
        bridgeEntities: [
          ...new Set([
            answer,
            ...candidates.slice(0, settings.entitiesPerQuery - 1).map((candidate) => candidate.name),
          ]),
        ],
      };
    }

    // Never invent a bridge: with no name in the evidence the chain cannot go on.
    if (candidates.length === 0) return unknownFinding(citedIds);
    // The next query names the best bridges, not every name read: one far weaker than the best
    // would only pull the search towards its own documents. A later hop whose best lead's own
    // document gives the best bridge follows that document: the names in the documents of the
    // runner-up leads belong to other chains, and only names near as good as the best go with it.
    const leadDocuments = new Set(
      last
        ? cited
            .filter((chunk) => leadMentions.includes(chunk) || isAbout(chunk, sought[0] ?? '', titles))
            .map((chunk) => chunk.chunkId)
        : [],
    );
    const fromLead = candidates.filter((candidate) => leadDocuments.has(candidate.chunkId));
    const followed = fromLead.length > 0 && fromLead[0] === candidates[0] ? fromLead : candidates;
    const floor = (candidates[0]?.score ?? 0) * (followed === fromLead ? LEAD_BRIDGE_SCORE_FLOOR : BRIDGE_SCORE_FLOOR);
    const bridges = followed
      .slice(0, settings.entitiesPerQuery)
      .filter((candidate) => candidate.score >= floor)
      .map((candidate) => candidate.name);
    // The best bridges' own documents, when this hop already retrieved them, support them.
    const bridgePages = chunksAbout(chunks, bridges.slice(0, BRIDGE_PAGES_SOUGHT), titles).slice(
      0,
      BRIDGE_PAGE_CITATIONS,
    );
    // A lead that is not of the kind asked is no answer the loop may stop on, however it stands out.
    const lead = bridges[0] as string;
    const stopsOn = !unfitLookup || hop < input.expectedHops || fitsQuestion(input.focus, lead, chunks);
    return {
      answer: lead,
      unknown: false,
      done: false,
      nextQuery: [...bridges, ...questionWords(input.focus, unresolved)].join(' '),
      confidence: stopsOn ? confidenceOf(candidates, false) : 0,
      citedChunkIds: [
        ...new Set(
          [
            ...about.map((chunk) => chunk.chunkId),
            ...bridgePages.map((chunk) => chunk.chunkId),
            candidates[0]?.chunkId ?? '',
            ...citedIds,
          ].filter(Boolean),
        ),
      ],
      bridgeEntities: bridges,
    };
  }

  return {
    kind: 'offline',
    extractHopAnswer: (input) => extractHopAnswer(input),
    // The reasoner's own switches hold for its answers as for its hops, beside the question's.
    synthesize: (input) =>
      synthesizeOffline({ ...input, switchedOff: [...(options.switchedOff ?? []), ...(input.switchedOff ?? [])] }),
  };
}

/**
 * Whether a question asks for a kind of answer whose fit the evidence can check: a date, a
 * number or a score, or a place (a name the documents use as one). Any name fits "what player" or "what is
 * the name of": a first hop's stray name would pass for one.
 */
function readsCheckably(question: string): boolean {
  const type = answerType(question);
  return type === 'date' || type === 'number' || type === 'score' || asksPlace(question);
}

/**
 * The kind of answer a hop reads: its focus's own, except that a focus on one option of the
 * whole question's date comparison ("Which was founded first, Northwind Labs?", "A和B是在同一个月
 * 吗") reads that option's date, the value the comparison is decided on; `event` is then the
 * option, what the hop's evidence must be about.
 */
function hopAnswerType(input: HopExtractionInput): { type: AnswerType; event?: string } {
  // A choice's sub-question that keeps its opening verb ("Was A founded first?") asks about its
  // option, not whether: the choice is the whole question's to make.
  const asked = answerType(input.focus);
  const own = asked === 'yesno' && answerType(input.question) === 'choice' ? 'entity' : asked;
  const byDate = dateComparison(input.question) !== undefined || samePeriod(input.question) !== undefined;
  if (own !== 'entity' || input.focus === input.question || !byDate) return { type: own };
  const options = comparedOptions(input.question);
  // A focus that is one of the events compared is looked up for its date, whatever its words.
  if (options.includes(input.focus)) return { type: 'date', event: input.focus };
  // "Which film has the director born later, X?" compares a role-holder's date: this hop finds the role-holder.
  if (relationTerms(input.focus, questionAnchors(input.focus)).some(isRoleNoun)) return { type: own };
  const named = options.filter((option) => input.focus.toLowerCase().includes(option.toLowerCase()));
  return named.length === 1 ? { type: 'date', event: named[0] } : { type: own };
}

/**
 * A first hop that found the document about the entity it was asked about, and no other name in
 * it, answers with that entity: "which film came out first, X?" is answered by X's document.
 */
function entityItself(
  about: readonly Chunk__Output[],
  hop: number,
  titles: TitleConventions,
): BridgeCandidate | undefined {
  const document = about[0];
  return hop === 1 && document
    ? { name: bareTitle(document.title, titles), score: 0, chunkId: document.chunkId }
    : undefined;
}

const WHO_QUESTION = /^\s*(?:who|whom|whose)\b|谁/i;
const asksWho = (question: string) => WHO_QUESTION.test(question);
// "founded in 2014 in Oslo": a name only ever after a preposition of place or time says where or when.
const PLACE_PREPOSITION = /\b(?:in|at|near|from|into|to|on)\s+(?:the\s+)?$/i;

/** Whether every mention of a candidate in its chunk follows a preposition of place: no answer to "who". */
function onlyAsPlace(candidate: BridgeCandidate, chunks: readonly Chunk__Output[]): boolean {
  const text = chunks.find((chunk) => chunk.chunkId === candidate.chunkId)?.text ?? '';
  const mentions = [...text.matchAll(new RegExp(escapeRegExp(candidate.name), 'g'))];
  return mentions.length > 0 && mentions.every((mention) => PLACE_PREPOSITION.test(text.slice(0, mention.index)));
}

/**
 * The terms none of the chunks states (in its text or title), of those one of them could state:
 * a word of an English question is not missing from a Chinese document, nor one of a Chinese
 * question from an English one; a name or code in the other script ("G7021", "李明") is.
 */
function unstatedBy(terms: readonly string[], chunks: readonly Chunk__Output[], question: string): string[] {
  const stated = chunks.flatMap((chunk) => chunkTerms(chunk));
  const sayable = couldSay(chunks, question);
  return terms.filter((term) => !containsStem(stated, term) && (chunks.length === 0 || sayable(term)));
}

/**
 * A question's words a document left unstated, but for the noun of the kind it asks for ("which
 * team", "what score"): that names what the answer is, which the answer's own document states,
 * not the one that names it, so it is no sign of a clause the wording hid.
 */
function withoutKindAsked(unstated: readonly string[], question: string): string[] {
  const kind = kindNounAsked(question);
  return unstated.filter((term) => kind === undefined || !sameStem(term, kind));
}

/** Which of a question's terms some chunk could state: its names, and its words where a chunk is in its language. */
function couldSay(chunks: readonly Chunk__Output[], question: string): (term: string) => boolean {
  const chinese = writtenInChinese(question);
  const inItsLanguage = chunks.some((chunk) => chunkInChinese(chunk) === chinese);
  return (term) => inItsLanguage || hasHan(term) !== chinese;
}

/**
 * Whether any of the chunks says one of the relation words, in the words evidence uses for it;
 * chunks that could say none of them (all in another language than the question) neither
 * confirm nor deny.
 */
function statesRelation(chunks: readonly Chunk__Output[], relation: readonly string[], question: string): boolean {
  const sayable = couldSay(chunks, question);
  if (chunks.length > 0 && !relation.some(sayable)) return true;
  const said = chunks.flatMap((chunk) => contentTerms(chunk.text));
  return expandRelations(relation).some((term) => containsStem(said, term));
}

/** How far the best candidate stands above the next, in 0..1; a typed answer read off a pattern scores high. */
function confidenceOf(candidates: readonly BridgeCandidate[], typed: boolean): number {
  if (typed) return 0.8;
  // Read off the candidates, not off a list of their scores: such a list is a different kind of
  // array to V8 when every score is a small integer, and each kind first met here after warm-up
  // threw away the optimized code of the hop function this is inlined into ("wrong map").
  const best = candidates[0]?.score ?? 0;
  const next = candidates[1]?.score ?? 0;
  if (best <= 0) return 0;
  return Math.round(Math.min(1, 0.3 + 0.7 * ((best - next) / best)) * 100) / 100;
}

/**
 * The chunks a hop on the way to the answer reads its next bridge from when its lead bridge has no
 * document of its own: those that name the lead and that no earlier hop cited (the document the
 * chain came from names it too), when the lead is a name of two words or more. A name the corpus only mentions ("Dunmore drummer Tobin
 * Rusk", in an album's document) has its links written beside it, in other entities' documents;
 * a runner-up's own document, however well titled, is about another chain. The last hop is not
 * one of these: its answer is read only from the document about what it was sent for.
 */
function mentionsOfLead(
  input: HopExtractionInput,
  chunks: readonly Chunk__Output[],
  lead: string,
  titles: TitleConventions,
): Chunk__Output[] {
  // A one-word lead (a demonym, a surname, a city) is named by chunks about anything at all.
  if (input.hop >= input.expectedHops || contentTerms(lead).length < MENTIONED_LEAD_WORDS) return [];
  if (chunks.some((chunk) => isAbout(chunk, lead, titles))) return [];
  const citedBefore = new Set(input.previous.flatMap((step) => step.cited.map((chunk) => chunk.chunkId)));
  // Only the sentences that name the lead say anything of it; the rest is the chunk's own subject.
  return chunks
    .filter((chunk) => !citedBefore.has(chunk.chunkId))
    .map((chunk) => ({
      ...chunk,
      text: sentences(chunk.text)
        .filter((sentence) => mentions({ ...chunk, title: '', text: sentence.text }, lead))
        .map((sentence) => sentence.text)
        .join(' '),
    }))
    .filter((chunk) => chunk.text !== '');
}

/**
 * Whether a hop sent to find one entity reads from a document about it: one the hop found
 * (`about`), or, where documents carry no titles to tell what they are about, a chunk that
 * mentions it. A titled chunk that only names the entity is about something else (the document
 * the chain came from, a neighbour): what it says is no fact of the entity's, and with the
 * entity's own document missing the chain is broken there. (Letting a neighbour answer where a
 * sentence naming the entity also says a relation the question asks was measured on the dev
 * file's tune half: one more right answer, eight more wrong ones, three fewer abstentions.)
 */
function readsAboutSought(about: readonly Chunk__Output[], cited: readonly Chunk__Output[]): boolean {
  return about.length > 0 || cited.some((chunk) => chunk.title.trim() === '');
}
